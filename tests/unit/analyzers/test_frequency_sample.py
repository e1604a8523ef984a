"""Bottom-k samples and top-keys tables: the merge laws and the honesty of their bounds."""

from __future__ import annotations

from collections import Counter

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from streamdq.analyzers.frequency.sample import merge_samples, merge_tops, sample_of, top_of

K = 8
hashes_st = st.lists(st.tuples(st.integers(-(2**63), 2**63 - 1), st.integers(1, 5)), max_size=40)


def sample(pairs, k=K):
    h = np.array([p[0] for p in pairs], dtype=np.int64)
    c = np.array([p[1] for p in pairs], dtype=np.int64)
    return sample_of(h, c, k)


def test_sample_keeps_the_k_smallest_unsigned_hashes_and_sets_theta():
    pairs = [(2**63 - 1, 1), (-(2**63), 2), (0, 3), (-1, 4), (5, 1), (5, 2)]
    s = sample(pairs, k=2)
    # unsigned = signed + 2**63 (same order): -2**63 -> 0, -1, 0 -> 2**63 (theta 1/2), 5, 2**63 - 1
    assert s.hashes.tolist() == [-(2**63), -1] and s.counts.tolist() == [2, 4]
    assert s.theta_u == 2**63 and s.theta == 0.5
    whole = sample(pairs, k=10)
    assert whole.theta_u is None and whole.theta == 1.0
    assert dict(zip(whole.hashes.tolist(), whole.counts.tolist(), strict=True))[5] == 3


@given(a=hashes_st, b=hashes_st, c=hashes_st)
@settings(max_examples=80, deadline=None)
def test_merge_is_the_sample_of_the_union(a, b, c):
    sa, sb, sc = sample(a), sample(b), sample(c)
    empty = sample([])
    assert merge_samples([sa, empty], K) == sa
    assert merge_samples([sa, sb], K) == merge_samples([sb, sa], K)
    left = merge_samples([merge_samples([sa, sb], K), sc], K)
    right = merge_samples([sa, merge_samples([sb, sc], K)], K)
    assert left == right == sample(a + b + c)


parts_st = st.lists(st.lists(st.sampled_from("abcdefghij"), max_size=30), min_size=1, max_size=5)


@given(parts=parts_st, size=st.integers(1, 4))
@settings(max_examples=100, deadline=None)
def test_top_bounds_hold_after_any_merges(parts, size):
    tops = []
    for rows in parts:
        counts = Counter(rows)
        keys = sorted(counts)
        tops.append(top_of(keys, np.array([counts[k] for k in keys]), size, complete=True))
    merged = tops[0]
    for t in tops[1:]:
        merged = merge_tops([merged, t], size)
    truth = Counter(r for rows in parts for r in rows)
    listed = merged.table.to_pydict()
    assert len(listed["key"]) <= size
    for key, lo, hi in zip(listed["key"], listed["lo"], listed["hi"], strict=True):
        assert lo <= truth[key] <= hi, (key, lo, truth[key], hi)
    for key, count in truth.items():
        if key not in listed["key"]:
            assert count <= merged.threshold, (key, count, merged.threshold)
