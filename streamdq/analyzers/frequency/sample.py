"""Bounded form of a frequency table: a bottom-k sample of key hashes with exact counts.

A ``Sample`` keeps the (at most k) distinct group keys with the SMALLEST 64-bit key
hashes (``key_hash``, unsigned order), each with its exact row count, and theta: the
exclusive threshold below which every key was kept (the (k+1)-th smallest hash,
divided by 2**64; 1.0 when no key was dropped). The kept keys are a uniform sample of
the distinct keys with inclusion probability theta (a theta / KMV sketch whose summary
is the summed count), so distinct counts and per-key statistics carry over.

It is built in Spark without a per-key Python loop: the grouped counts ordered by hash
with a ``limit`` (a TakeOrderedAndProject: per-partition top-k, no full sort). On the
driver, ``sample_of`` dedups, filters and trims bounded arrays with numpy.

Merge (``merge_samples``): union by hash (the same key has the same hash; counts add),
theta = the smaller theta, keep hashes below it, then the k smallest. The count of a
kept key is exact: every part that saw the key had a theta above its hash (theta only
decreases) and kept it. Associative and commutative; the empty sample is the identity.

``Top`` is the companion of histogram groupings: the heaviest keys with a lower and an
upper bound of their value (the row count, or the bin's sum for a ``Sum`` histogram),
``threshold``, an upper bound of the value of any key not listed, and ``floor``, a lower
bound of it (0 for counts; a sum may be negative). Built in Spark (grouped values ordered
desc, key asc, with a limit); merged by adding lower bounds (a part not listing a key adds
its floor) and upper bounds (a part not listing a key adds its threshold), keeping the
``size`` heaviest by lower bound. The bounds hold after any sequence of merges; the kept
list may depend on merge order (it is a bounded summary).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from streamdq.analyzers.key_hash import unsigned
from streamdq.errors import InvalidArgument

TWO_64 = float(2**64)
SPARK = "spark"  # keys hashed by ``key_hash`` (Spark's xxhash64; every sample built since format v2)
V1 = "v1"  # keys hashed as format v1's DataSketches tuple sketches did (converted on read)


@dataclass(frozen=True, eq=False)
class Sample:
    """Hashes (signed int64, unique, ascending in unsigned order), counts, theta threshold.

    ``theta_u``: the exclusive unsigned threshold (``None`` = 1.0, every key kept).
    ``scheme``: how the keys were hashed (``SPARK``, or ``V1`` for a sample converted from a
    format-v1 tuple sketch); samples of different schemes never merge.
    """

    hashes: np.ndarray
    counts: np.ndarray
    theta_u: int | None
    scheme: str = SPARK

    @property
    def theta(self) -> float:
        return 1.0 if self.theta_u is None else self.theta_u / TWO_64

    def __len__(self) -> int:
        return len(self.hashes)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Sample)
            and self.scheme == other.scheme
            and self.theta_u == other.theta_u
            and np.array_equal(self.hashes, other.hashes)
            and np.array_equal(self.counts, other.counts)
        )

    def __hash__(self) -> int:
        return hash((self.theta_u, len(self.hashes), int(self.counts.sum())))

    def to_table(self) -> pa.Table:
        return pa.table(
            {"hash": pa.array(self.hashes, pa.int64()), "count": pa.array(self.counts, pa.int64())}
        )


def sample_of(
    hashes: np.ndarray, counts: np.ndarray, k: int, theta_u: int | None = None, scheme: str = SPARK
) -> Sample:
    """The bottom-``k`` sample of (hash, count) pairs: dedup by hash (counts add), keep
    hashes below ``theta_u``, then the ``k`` smallest (theta = the (k+1)-th). Driver-side."""
    h = np.asarray(hashes, dtype=np.int64)
    c = np.asarray(counts, dtype=np.int64)
    keep = c > 0
    h, c = h[keep], c[keep]
    u = unsigned(h)
    if theta_u is not None:
        below = u < np.uint64(theta_u)
        u, c = u[below], c[below]
    uniq, inverse, u, c = _smallest_distinct(u, c, k)
    summed = np.zeros(len(uniq), dtype=np.int64)
    np.add.at(summed, inverse, c)
    if len(uniq) > k:
        theta_u = int(uniq[k])
        uniq, summed = uniq[:k], summed[:k]
    signed = (uniq ^ np.uint64(1 << 63)).view(np.int64)
    return Sample(signed.copy(), summed, theta_u, scheme)


def _smallest_distinct(
    u: np.ndarray, c: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(distinct values, inverse, values, counts) of the (hash, count) pairs that can be
    among the ``k + 1`` smallest distinct hashes: every pair whose hash is at most the
    (k+1)-th smallest one counted with repeats (a partition, not a sort of all), when
    those hold ``k + 1`` distinct hashes; else all of them (repeated hashes)."""
    if len(u) > 2 * (k + 1):
        cut = np.partition(u, k)[k]
        near = u <= cut
        uniq, inverse = np.unique(u[near], return_inverse=True)
        if len(uniq) > k:
            return uniq, inverse, u[near], c[near]
    uniq, inverse = np.unique(u, return_inverse=True)
    return uniq, inverse, u, c


def normalized(sample: Sample, k: int) -> Sample:
    """``merge_samples([sample], k)``: the sample itself when it already is its own
    normal form (at most ``k`` hashes, strictly ascending in unsigned order, positive
    counts, below theta), so a running total is not re-sorted at every merge."""
    u = unsigned(sample.hashes)
    if (
        len(u) <= k
        and bool(np.all(u[1:] > u[:-1]))
        and bool(np.all(sample.counts > 0))
        and (sample.theta_u is None or not len(u) or int(u[-1]) < sample.theta_u)
    ):
        return sample
    return merge_samples([sample], k)


def merge_samples(parts: Sequence[Sample], k: int) -> Sample:
    """Union of samples by hash with summed counts, at most ``k`` keys (see module doc).

    Raises ``ValueError`` for samples of different hashing schemes (the same key would
    count twice)."""
    if not parts:
        return Sample(np.zeros(0, np.int64), np.zeros(0, np.int64), None)
    schemes = {p.scheme for p in parts}
    if len(schemes) > 1:
        raise InvalidArgument(
            "cannot merge a frequency sample converted from a format-v1 tuple-sketch state with a "
            "sample of format v2 or later: their keys are hashed differently; recompute the v1 "
            "state (or start a new query) to continue"
        )
    thetas = [p.theta_u for p in parts if p.theta_u is not None]
    theta_u = min(thetas) if thetas else None
    hashes = np.concatenate([p.hashes for p in parts])
    counts = np.concatenate([p.counts for p in parts])
    return sample_of(hashes, counts, k, theta_u, parts[0].scheme)


def sample_from_table(table: pa.Table, theta_u: int | None, scheme: str = SPARK) -> Sample:
    return Sample(
        np.asarray(table["hash"].to_numpy(zero_copy_only=False), dtype=np.int64),
        np.asarray(table["count"].to_numpy(zero_copy_only=False), dtype=np.int64),
        theta_u,
        scheme,
    )


TOP_SCHEMA = pa.schema([("key", pa.string()), ("lo", pa.int64()), ("hi", pa.int64())])


@dataclass(frozen=True, eq=False)
class Top:
    """Heaviest keys (``table``: key, lo, hi; lo desc, hi desc, key asc) and the bounds of the
    rest: every unlisted key's value is in ``[floor, threshold]`` (``floor <= 0 <= threshold``:
    a key absent from the data has value 0)."""

    table: pa.Table
    threshold: int
    floor: int = 0

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Top)
            and (self.threshold, self.floor) == (other.threshold, other.floor)
            and self.table.equals(other.table)
        )

    def __hash__(self) -> int:
        return hash((self.threshold, self.table.num_rows))


def ordered_top(table: pa.Table) -> pa.Table:
    return table.sort_by([("lo", "descending"), ("hi", "descending"), ("key", "ascending")]).combine_chunks()


def top_of(
    keys: Sequence[str] | pa.Array,
    counts: np.ndarray | pa.Array,
    size: int,
    *,
    complete: bool,
    floor: int = 0,
) -> Top:
    """Top of exact (key, value) pairs: the ``size`` heaviest. ``complete``: every key of
    the data is in ``keys`` (else the smallest listed value bounds the unlisted ones from
    above, and ``floor``, the smallest value of the data, from below)."""
    c = pa.array(np.asarray(counts, dtype=np.int64), pa.int64())
    table = ordered_top(pa.table({"key": pa.array(keys, pa.string()), "lo": c, "hi": c}, schema=TOP_SCHEMA))
    threshold, low = 0, min(0, floor)
    if table.num_rows > size:
        dropped = table.slice(size)
        threshold = max(0, int(dropped["lo"][0].as_py()))
        low = min(low, int(pc.min(dropped["lo"]).as_py()))
        table = table.slice(0, size)
    elif not complete and table.num_rows:
        threshold = max(0, int(table["lo"][table.num_rows - 1].as_py()))
    return Top(table.combine_chunks(), threshold, low)


def merge_tops(parts: Sequence[Top], size: int) -> Top:
    """Merged top: lo adds, a part not listing a key adds its floor; hi adds, a part not
    listing a key adds its threshold. One part of at most ``size`` keys is its own merge
    (its table is ordered and its keys unique by construction) and is returned as is."""
    if len(parts) == 1 and parts[0].table.num_rows <= size:
        return parts[0]
    total_threshold = sum(p.threshold for p in parts)
    total_floor = sum(p.floor for p in parts)
    tables = [
        p.table.append_column("t", pa.array([p.threshold] * p.table.num_rows, pa.int64())).append_column(
            "f", pa.array([p.floor] * p.table.num_rows, pa.int64())
        )
        for p in parts
    ]
    both = pa.concat_tables(tables)
    g = both.group_by(["key"], use_threads=False).aggregate(
        [("lo", "sum"), ("hi", "sum"), ("t", "sum"), ("f", "sum")]
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
