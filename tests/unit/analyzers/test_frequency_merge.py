"""The per-batch merge of frequency states (issue 15): the keyed merge of canonical tables,
the sample's partial selection, the normalized-sample and one-part-top shortcuts and the
cached payload all give exactly what the general paths give."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pytest

from streamdq.analyzers.frequency.sample import (
    Sample,
    merge_samples,
    merge_tops,
    normalized,
    sample_of,
    top_of,
)
from streamdq.analyzers.frequency.states import ExactFrequencies, FrequencyState, Sums
from streamdq.analyzers.frequency.tables import (
    _merge_by_lookup,
    canonical_table,
    merge_canonical,
    sum_tables,
    table_bytes,
)
from streamdq.analyzers.key_hash import unsigned


def _values(kind: str, ids: np.ndarray) -> pa.Array:
    if kind == "int":
        return pa.array(ids.astype(np.int64))
    if kind == "str":
        return pa.array([f"v{i:03d}" for i in ids])
    if kind == "bin":
        return pa.array([bytes([i % 7, i]) for i in ids], pa.binary())
    if kind == "date":
        return pa.array([dt.date(2020, 1, 1) + dt.timedelta(days=int(i)) for i in ids])
    if kind == "ts":
        return pa.array(ids.astype(np.int64) * 1000, pa.timestamp("us", tz="UTC"))
    if kind == "dec":
        return pa.array([Decimal(int(i)) / 4 for i in ids], pa.decimal128(10, 2))
    if kind == "bool":
        return pa.array(ids % 2 == 0)
    if kind == "u64":  # unsigned order: the values past 2**63 sort last
        return pa.array([int(i) * (2**58) + 7 for i in ids], pa.uint64())
    if kind == "lstr":
        return pa.array([f"w{i:03d}" for i in ids], pa.large_string())
    if kind == "fsb":
        return pa.array([bytes([i % 5, i]) for i in ids], pa.binary(2))
    if kind == "dur":
        return pa.array(ids.astype(np.int64) - 20, pa.duration("s"))
    if kind == "float":
        return pa.array(ids.astype(np.float64) - 3.0)
    raise AssertionError(kind)


def _table(
    rng: np.random.Generator,
    kind: str,
    lo: int,
    hi: int,
    *,
    weighted: bool,
    nulls: bool,
    key_nullable: bool = True,
    count_nullable: bool = False,
) -> pa.Table:
    universe = 2 if kind == "bool" else hi - lo
    size = int(rng.integers(1, min(universe, 40) + 1))
    ids = rng.choice(universe, size, replace=False) + (0 if kind == "bool" else lo)
    keys = _values(kind, ids)
    if nulls and rng.random() < 0.4:
        keys = pa.array([*keys.to_pylist()[:-1], None], keys.type)
        key_nullable = True
    fields = [pa.field("k0", keys.type, nullable=key_nullable), pa.field("count", pa.int64(), count_nullable)]
    columns = [keys, pa.array(rng.integers(1, 9, len(keys)), pa.int64())]
    if weighted:
        sums = [None if rng.random() < 0.3 else int(x) for x in rng.integers(-5, 6, len(keys))]
        fields.append(pa.field("sum", pa.int64()))
        columns.append(pa.array(sums, pa.int64()))
    return canonical_table(pa.Table.from_arrays(columns, schema=pa.schema(fields)))


def _same(slow: pa.Table, fast: pa.Table) -> None:
    assert fast.schema == slow.schema
    assert fast.equals(slow)
    assert fast.column(0).num_chunks == 1
    assert table_bytes(fast) == table_bytes(slow)


# key ranges of a and b: interleaved, b after a, b before a, b inside a (all present
# likely), b after a but for one shared key
RANGES = [
    ((0, 60), (0, 60)),
    ((0, 30), (30, 60)),
    ((30, 60), (0, 30)),
    ((0, 40), (0, 4)),
    ((0, 31), (30, 60)),
]


KINDS = ["int", "str", "bin", "date", "ts", "dec", "bool", "u64", "lstr", "fsb", "dur"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("weighted", [False, True])
def test_keyed_merge_equals_the_group_by_merge(kind, weighted):
    rng = np.random.default_rng(2 * KINDS.index(kind) + weighted)
    for i in range(120):
        (alo, ahi), (blo, bhi) = RANGES[i % len(RANGES)]
        a = _table(rng, kind, alo, ahi, weighted=weighted, nulls=False, key_nullable=bool(i % 3))
        b = _table(rng, kind, blo, bhi, weighted=weighted, nulls=False, count_nullable=bool(i % 5 == 0))
        fast = _merge_by_lookup(a, b)
        assert fast is not None  # the keyed merge applies to these key types
        _same(sum_tables(a, b), fast)
        _same(sum_tables(b, a), merge_canonical(b, a))


def test_keyed_merge_covers_every_placement_of_the_new_keys():
    a = canonical_table(pa.table({"k0": [10, 20, 30], "count": pa.array([1, 1, 1], pa.int64())}))
    for keys, expected in [
        ([20, 30], [10, 20, 30]),  # all present: counts added in place
        ([40, 50], [10, 20, 30, 40, 50]),  # appended
        ([1, 2], [1, 2, 10, 20, 30]),  # prepended
        ([30, 40], [10, 20, 30, 40]),  # touching ranges: the shared key is added, not repeated
        ([1, 10], [1, 10, 20, 30]),
        ([5, 25, 30, 99], [5, 10, 20, 25, 30, 99]),  # interleaved: sorted in
    ]:
        b = canonical_table(
            pa.table({"k0": pa.array(keys, pa.int64()), "count": pa.array([2] * len(keys), pa.int64())})
        )
        merged = _merge_by_lookup(a, b)
        assert merged is not None and merged["k0"].to_pylist() == expected
        _same(sum_tables(a, b), merged)


def test_null_keys_multi_key_and_float_keys_take_the_group_by_path_with_equal_results():
    rng = np.random.default_rng(7)
    for kind in KINDS:
        a = pa.table({"k0": _values(kind, np.array([1, 2])), "count": pa.array([1, 1], pa.int64())})
        b = canonical_table(
            a.set_column(0, "k0", pa.array([a["k0"][0].as_py(), None], a.schema.field(0).type))
        )
        assert _merge_by_lookup(a, b) is None and _merge_by_lookup(b, a) is None
        _same(sum_tables(a, b), merge_canonical(a, b))
    a = _table(rng, "float", 0, 40, weighted=False, nulls=True)
    b = _table(rng, "float", 0, 40, weighted=False, nulls=True)
    assert _merge_by_lookup(a, b) is None
    _same(sum_tables(a, b), merge_canonical(a, b))
    interval = pa.array([pa.MonthDayNano([i, 0, 0]) for i in (2, 1)], pa.month_day_nano_interval())
    unsortable = pa.table({"k0": interval, "count": pa.array([1, 1], pa.int64())})
    assert _merge_by_lookup(unsortable, unsortable) is None
    two = canonical_table(
        pa.table({"k0": ["x", "x", None], "k1": [1, None, 2], "count": pa.array([1, 2, 3], pa.int64())})
    )
    assert _merge_by_lookup(two, two) is None
    assert merge_canonical(two, two)["count"].to_pylist() == [2, 4, 6]
    wide = pa.table({"k0": pa.array([1], pa.int32()), "count": pa.array([1], pa.int64())})
    narrow = pa.table({"k0": pa.array([1], pa.int64()), "count": pa.array([1], pa.int64())})
    assert _merge_by_lookup(wide, narrow) is None  # types unified by sum_tables
    assert merge_canonical(wide, narrow).to_pydict() == {"k0": [1], "count": [2]}


def test_exact_states_merge_to_the_same_state_and_bytes_as_the_group_by_merge():
    rng = np.random.default_rng(3)
    for i in range(40):
        weighted = bool(i % 2)
        a = _table(rng, "str", 0, 60, weighted=weighted, nulls=False)
        b = _table(rng, "str", 0, 60, weighted=weighted, nulls=False)
        sums = Sums(1, 2) if weighted else None
        sa = FrequencyState.from_table(a, n=5, total=6, max_groups=None, sums=sums)
        sb = FrequencyState.from_table(b, n=7, total=8, max_groups=None, sums=sums)
        slow = ExactFrequencies(
            n=12, total=14, max_groups=None, table=sum_tables(a, b), sums=Sums(2, 4) if weighted else None
        )
        for merged in (sa.merge(sb), sb.merge(sa)):
            assert merged == slow and merged.to_bytes() == slow.to_bytes()


def test_a_canonical_table_is_kept_as_given_and_the_payload_is_computed_once():
    table = canonical_table(pa.table({"k0": ["b", "a"], "count": pa.array([1, 2], pa.int64())}))
    state = FrequencyState.from_table(table, n=3, total=3, max_groups=None, canonical=True)
    assert isinstance(state, ExactFrequencies) and state.table is table
    first = state.payload()
    assert state.payload() is first and first == state._payload_now()
    assert FrequencyState.from_table(table, n=3, total=3, max_groups=None).to_bytes() == state.to_bytes()


def _reference_sample(h: np.ndarray, c: np.ndarray, k: int) -> tuple[list[int], list[int], int | None]:
    """The bottom-k sample by a full sort of every hash (sample_of before issue 15)."""
    keep = c > 0
    u, c = unsigned(h[keep]), c[keep]
    uniq, inverse = np.unique(u, return_inverse=True)
    summed = np.zeros(len(uniq), dtype=np.int64)
    np.add.at(summed, inverse, c)
    theta = None
    if len(uniq) > k:
        theta, uniq, summed = int(uniq[k]), uniq[:k], summed[:k]
    return uniq.tolist(), summed.tolist(), theta


@pytest.mark.parametrize("repeats", [1, 3, 40])
def test_sample_of_by_partition_equals_the_full_sort(repeats):
    rng = np.random.default_rng(repeats)
    for k in (1, 8, 32):
        for n in (k, 2 * k + 3, 10 * k + 5, 400):
            # few distinct hashes repeated many times: the partition's candidates may hold
            # fewer than k + 1 distinct hashes, and the full sort must take over
            h = rng.integers(-(2**63), 2**63 - 1, max(1, n // repeats), dtype=np.int64)
            h = rng.choice(h, n)
            c = rng.integers(0, 4, n).astype(np.int64)
            s = sample_of(h, c, k)
            uniq, summed, theta = _reference_sample(h, c, k)
            assert unsigned(s.hashes).tolist() == uniq and s.counts.tolist() == summed and s.theta_u == theta


def test_normalized_returns_a_normal_sample_itself_and_normalizes_the_rest():
    rng = np.random.default_rng(5)
    h = rng.integers(-(2**63), 2**63 - 1, 100, dtype=np.int64)
    s = sample_of(h, np.ones(100, np.int64), 16)
    assert normalized(s, 16) is s and normalized(s, 64) is s
    assert normalized(s, 8) == merge_samples([s], 8) and len(normalized(s, 8)) == 8
    unsorted = Sample(s.hashes[::-1].copy(), s.counts.copy(), s.theta_u)
    zero = Sample(s.hashes.copy(), np.zeros(len(s), np.int64), s.theta_u)
    for odd in (unsorted, zero):
        assert normalized(odd, 16) is not odd and normalized(odd, 16) == merge_samples([odd], 16)


def test_one_top_within_size_is_its_own_merge():
    top = top_of(["a", "b", "c", "d"], np.array([5, 3, 3, 1]), 3, complete=False, floor=-2)
    empty = top_of([], np.zeros(0, np.int64), 3, complete=True)
    assert merge_tops([top], 3) is top
    assert merge_tops([top], 3) == merge_tops([top, empty], 3)
    assert merge_tops([top], 2) == merge_tops([top, empty], 2) and merge_tops([top], 2).table.num_rows == 2


def test_an_exact_state_hashes_its_keys_once_per_sample_size_and_scheme():
    table = pa.table({"k0": [f"k{i}" for i in range(300)], "count": pa.array([1] * 300, pa.int64())})
    state = FrequencyState.from_table(table, n=300, total=300, max_groups=None)
    assert isinstance(state, ExactFrequencies)
    sample, top = state.sample_parts(100, "spark")
    assert (
        state.sample_parts(100, "spark")[0] is sample and state.sample_parts(64, "spark")[0] is sample
    )  # k = 64
    assert (sample, top) == state._sample_parts_now(64, "spark")
    assert (
        state.sample_parts(1000, "spark")[0] is not sample
        and len(state.sample_parts(1000, "spark")[0]) == 300
    )
    assert state.sample_parts(100, "v1")[0] == state._sample_parts_now(64, "v1")[0]
