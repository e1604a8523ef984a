"""Per-batch cost of merging frequency states (issue 15): the merge as of this commit
against the merge before it, interleaved in one run (no Spark).

The streaming handler merges every microbatch's state into the total and into its open
window, and serializes both for the commit. For a Uniqueness on a unique id the exact
table grows by every row up to ``max_groups`` (100,000), then turns into a bounded sample.

* ``merge`` cells: a batch's canonical table of ``--sizes`` rows (500, 5,000, 50,000)
  merged into an exact total of 10,000 or 100,000 keys (int64 or string keys); the batch
  keys are ``new`` (ids after the total's, as a unique id grows), ``present`` (all already
  in the total) or ``random`` (half new, spread over the total's range). Old:
  ``sum_tables`` (a group-by of the concatenation, a sort) and the state's second
  canonical sort; new: ``FrequencyState.merge``.
* ``sample`` cells: a batch's exact state merged into a total past ``max_groups`` (a
  bottom-k sample), as total and window do: old re-normalized the total's sample, sorted
  every batch hash (twice: once per scope); new selects by partition and hashes once.
* ``bytes``: serializing the 100,000-key total (a new state) and an unchanged one (the
  payload is cached; an empty microbatch does not change the states).
* ``stream``: the handler's sequence (total + one window, ``max_groups`` 100,000, int64
  ids ascending, merge + ``to_bytes`` of both per batch) for ``--batches`` batches per size,
  from a total and window of 60,000 keys (so 50,000-row batches pass the bound at the
  first batch and then merge into a sample); the median per-batch ms.

Medians of ``--repeat`` runs, old and new alternating (ABBA). Last line:
``RESULT grouping_merge key=value ...`` with ``*_old_ms``, ``*_new_ms`` and ``*_x`` (old /
new) for the headline cells, and ``min_x`` (the smallest old/new ratio of all cells).
Usage: ``python bench/grouping/merge.py [--repeat 15] [--batches 12]``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable, Sequence
from functools import partial

import numpy as np
import pyarrow as pa

from streamdq.analyzers.frequency.migration import v1_hashes
from streamdq.analyzers.frequency.sample import SPARK, V1, Sample, Top, ordered_top, top_of
from streamdq.analyzers.frequency.sizing import sample_size
from streamdq.analyzers.frequency.states import (
    ExactFrequencies,
    FrequencyState,
    SampledFrequencies,
    _merged_sums,
    _min_bound,
)
from streamdq.analyzers.frequency.tables import key_names, sum_tables
from streamdq.analyzers.key_hash import key_hashes, unsigned
from streamdq.analyzers.state import State

MAX_GROUPS = 100_000
STREAM_START = 60_000  # keys in the running total and window when the stream part starts


# -- the merge before issue 15's change, kept for the comparison ----------------------------
def old_sample_of(hashes: np.ndarray, counts: np.ndarray, k: int, theta_u: int | None, scheme: str) -> Sample:
    h, c = np.asarray(hashes, dtype=np.int64), np.asarray(counts, dtype=np.int64)
    keep = c > 0
    u, c = unsigned(h[keep]), c[keep]
    if theta_u is not None:
        below = u < np.uint64(theta_u)
        u, c = u[below], c[below]
    uniq, inverse = np.unique(u, return_inverse=True)
    summed = np.zeros(len(uniq), dtype=np.int64)
    np.add.at(summed, inverse, c)
    if len(uniq) > k:
        theta_u = int(uniq[k])
        uniq, summed = uniq[:k], summed[:k]
    return Sample((uniq ^ np.uint64(1 << 63)).view(np.int64).copy(), summed, theta_u, scheme)


def old_merge_samples(parts: Sequence[Sample], k: int) -> Sample:
    thetas = [p.theta_u for p in parts if p.theta_u is not None]
    hashes = np.concatenate([p.hashes for p in parts])
    counts = np.concatenate([p.counts for p in parts])
    return old_sample_of(hashes, counts, k, min(thetas) if thetas else None, parts[0].scheme)


def old_merge_tops(parts: Sequence[Top], size: int) -> Top:
    import pyarrow.compute as pc

    from streamdq.analyzers.frequency.sample import TOP_SCHEMA

    total_threshold = sum(p.threshold for p in parts)
    total_floor = sum(p.floor for p in parts)
    tables = [
        p.table.append_column("t", pa.array([p.threshold] * p.table.num_rows, pa.int64())).append_column(
            "f", pa.array([p.floor] * p.table.num_rows, pa.int64())
        )
        for p in parts
    ]
    g = (
        pa.concat_tables(tables)
        .group_by(["key"], use_threads=False)
        .aggregate([("lo", "sum"), ("hi", "sum"), ("t", "sum"), ("f", "sum")])
    )
    hi = pc.add(pc.subtract(g["hi_sum"], g["t_sum"]), pa.scalar(total_threshold, pa.int64()))
    lo = pc.add(pc.subtract(g["lo_sum"], g["f_sum"]), pa.scalar(total_floor, pa.int64()))
    table = ordered_top(pa.table({"key": g["key"], "lo": lo, "hi": hi}, schema=TOP_SCHEMA))
    threshold, floor = total_threshold, total_floor
    if table.num_rows > size:
        dropped = table.slice(size)
        threshold = max(threshold, int(pc.max(dropped["hi"]).as_py()))
        floor = min(floor, int(pc.min(dropped["lo"]).as_py()))
        table = table.slice(0, size)
    return Top(table.combine_chunks(), threshold, floor)


def old_parts(state: FrequencyState, max_groups: int, scheme: str) -> tuple[Sample, Top | None]:
    k = sample_size(max_groups)
    if isinstance(state, SampledFrequencies):
        top = None if state.top is None else old_merge_tops([state.top], k)
        return old_merge_samples([state.sample], k), top
    assert isinstance(state, ExactFrequencies) and state.table is not None
    table = state.table
    columns = [table[c] for c in key_names(table)]
    counts = state.counts()
    hashes = key_hashes(columns) if scheme == SPARK else None
    if hashes is None:
        hashes, counts = v1_hashes(columns, counts)
    top = None
    if len(columns) == 1 and pa.types.is_string(columns[0].type):
        top = top_of(columns[0].combine_chunks(), state._values(), k, complete=True)
    return old_sample_of(hashes, counts, k, None, scheme), top


def old_merge(a: FrequencyState, b: FrequencyState) -> FrequencyState:
    """``FrequencyState.merge`` before issue 15 (payload never cached: see ``fresh``)."""
    if b.is_empty:
        return a
    if a.is_empty:
        return b
    bound = _min_bound(a.max_groups, b.max_groups)
    n, total, sums = a.n + b.n, a.total + b.total, _merged_sums(a.sums, b.sums)
    if isinstance(a, ExactFrequencies) and isinstance(b, ExactFrequencies):
        assert a.table is not None and b.table is not None
        table = sum_tables(a.table, b.table)
        state = ExactFrequencies(n=n, total=total, max_groups=bound, table=table, sums=sums)
        if bound is not None and table.num_rows > bound:
            sample, top = old_parts(state, bound, SPARK)
            return SampledFrequencies(n=n, total=total, max_groups=bound, sample=sample, top=top, sums=sums)
        return state
    assert bound is not None
    scheme = V1 if V1 in (a.scheme, b.scheme) else SPARK
    k = sample_size(bound)
    pairs = [old_parts(s, bound, scheme) for s in (a, b)]
    tops = [p[1] for p in pairs]
    top = old_merge_tops([t for t in tops if t is not None], k) if all(tops) else None
    sample = old_merge_samples([p[0] for p in pairs], k)
    return SampledFrequencies(n=n, total=total, max_groups=bound, sample=sample, top=top, sums=sums)


def fresh(state: State) -> bytes:
    """``to_bytes`` without the payload cache (what the commit paid before)."""
    state.__dict__.pop("_payload", None)
    return state.to_bytes()


def fresh_batch(state: FrequencyState) -> FrequencyState:
    """The same batch state without its cached sample parts (the old merge hashed every time)."""
    state.__dict__.pop("_parts", None)
    return state


# -- inputs ----------------------------------------------------------------------------------
def keys_of(ids: np.ndarray, kind: str) -> pa.Array:
    if kind == "int":
        return pa.array(ids.astype(np.int64))
    return pa.array([f"user-{i:010d}" for i in ids.tolist()])


def state_of(ids: np.ndarray, kind: str, max_groups: int | None) -> FrequencyState:
    table = pa.table({"k0": keys_of(ids, kind), "count": pa.array(np.ones(len(ids), np.int64))})
    return FrequencyState.from_table(table, n=len(ids), total=len(ids), max_groups=max_groups)


def batch_ids(rng: np.random.Generator, total: int, size: int, mode: str) -> np.ndarray:
    if mode == "new":
        return np.arange(total, total + size)
    if mode == "present":
        return rng.choice(total, min(size, total), replace=False)
    return rng.choice(2 * max(total, size), size, replace=False)  # half new, interleaved


def alternate(old: Callable[[], object], new: Callable[[], object], repeat: int) -> tuple[float, float]:
    """Median ms of ``old`` and ``new``, run alternately (ABBA)."""
    times: dict[str, list[float]] = {"old": [], "new": []}
    for r in range(repeat):
        order = [("old", old), ("new", new)] if r % 2 == 0 else [("new", new), ("old", old)]
        for name, fn in order:
            t = time.perf_counter()
            fn()
            times[name].append((time.perf_counter() - t) * 1e3)
    return statistics.median(times["old"]), statistics.median(times["new"])


def stream(size: int, batches: int) -> tuple[float, float]:
    """Median per-batch ms (merge into total + window, both serialized) of old and new."""
    per: dict[str, list[float]] = {"old": [], "new": []}
    seed = np.arange(STREAM_START)
    scopes = {name: [state_of(seed, "int", MAX_GROUPS) for _ in range(2)] for name in ("old", "new")}
    for i in range(batches):
        ids = STREAM_START + np.arange(i * size, (i + 1) * size)
        order = ["old", "new"] if i % 2 == 0 else ["new", "old"]
        for name in order:
            batch = state_of(ids, "int", MAX_GROUPS)  # built outside the timing
            t = time.perf_counter()
            for j, running in enumerate(scopes[name]):
                if name == "old":
                    merged = old_merge(running, batch)
                    fresh(merged)
                else:
                    merged = running.merge(batch)
                    merged.to_bytes()
                scopes[name][j] = merged
            per[name].append((time.perf_counter() - t) * 1e3)
    assert scopes["old"] == scopes["new"]
    return statistics.median(per["old"]), statistics.median(per["new"])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--batches", type=int, default=12)
    parser.add_argument("--sizes", default="500,5000,50000")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    rng = np.random.default_rng(15)
    result: dict[str, float] = {}
    ratios: list[float] = []

    def record(key: str, old_ms: float, new_ms: float, headline: bool) -> None:
        ratio = old_ms / new_ms if new_ms > 0 else float("inf")
        ratios.append(ratio)
        print(f"  {key:28s} old {old_ms:8.2f} ms  new {new_ms:8.2f} ms  x{ratio:6.2f}")
        if headline:
            result[f"{key}_old_ms"], result[f"{key}_new_ms"], result[f"{key}_x"] = old_ms, new_ms, ratio

    print("merge (exact total; batch keys new / present / random):")
    for kind in ("int", "str"):
        for total in (10_000, 100_000):
            running = state_of(np.arange(total), kind, None)
            for size in sizes:
                for mode in ("new", "present", "random"):
                    batch = state_of(batch_ids(rng, total, size, mode), kind, None)
                    assert isinstance(running, ExactFrequencies) and isinstance(batch, ExactFrequencies)
                    old_ms, new_ms = alternate(
                        partial(old_merge, running, batch), partial(running.merge, batch), args.repeat
                    )
                    assert old_merge(running, batch) == running.merge(batch)
                    headline = kind == "int" and total == 100_000 and mode == "new"
                    headline |= kind == "str" and total == 100_000 and mode == "random" and size == 5000
                    label = f"merge_{kind}_{total // 1000}k_{size}_{mode}"
                    record(label, old_ms, new_ms, headline)

    print("sample (total past max_groups; batch merged into total and window):")
    for kind in ("int", "str"):
        sampled = state_of(np.arange(2 * MAX_GROUPS), kind, MAX_GROUPS)
        assert isinstance(sampled, SampledFrequencies)
        for size in sizes:
            ids = np.arange(2 * MAX_GROUPS, 2 * MAX_GROUPS + size)
            batch = state_of(ids, kind, MAX_GROUPS)

            def old_two(t: FrequencyState = sampled, b: FrequencyState = batch) -> None:
                old_merge(t, fresh_batch(b))
                old_merge(t, b)

            def new_two(t: FrequencyState = sampled, b: FrequencyState = batch) -> None:
                fresh_batch(b)
                t.merge(b)
                t.merge(b)

            old_ms, new_ms = alternate(old_two, new_two, args.repeat)
            assert old_merge(sampled, batch) == sampled.merge(batch)
            record(f"sample_{kind}_{size}", old_ms, new_ms, kind == "int" and size == sizes[-1])

    print("bytes (100k-key total):")
    big = state_of(np.arange(100_000), "int", None)
    big.to_bytes()
    old_ms, new_ms = alternate(lambda: fresh(big), big.to_bytes, args.repeat)
    record("bytes_unchanged", old_ms, new_ms, True)
    print(f"  serializing a new 100k-key total: {old_ms:.2f} ms (old and new alike)")

    print(f"stream (total + window, max_groups {MAX_GROUPS:,}, {args.batches} batches):")
    for size in sizes:
        old_ms, new_ms = stream(size, args.batches)
        record(f"stream_{size}", old_ms, new_ms, True)

    result["min_x"] = min(ratios)
    print("RESULT grouping_merge " + " ".join(f"{k}={v:.2f}" for k, v in result.items()))


if __name__ == "__main__":
    main()
