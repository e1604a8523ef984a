"""The shared state of grouping analyzers: a bounded frequency table.

``FrequencySpec`` says what to group: the columns (``()`` = all columns of the input), the
``where`` filter, and whether it is a *histogram* grouping. Analyzers with equal specs
share ONE grouped Spark aggregation and ONE stored state (``key()`` is the stable text
the state store uses).

* Plain grouping (Uniqueness, Distinctness, UniqueValueRatio, CountDistinct, Entropy,
  MutualInformation, DuplicateRowCount): where-filter first, then group by the columns
  with their Spark types, dropping rows in which ALL grouping columns are NULL (rows with
  some NULLs stay; NULLs are equal when grouping). ``n`` = rows left.
* Histogram grouping (one column): values cast to string, NULL becomes the key
  ``"NullValue"`` (a bin of its own), no row is dropped; the state also carries the
  UNFILTERED row count ``total``, the ratio denominator.

``compute_frequency_state(df, spec, max_groups=...)`` runs on the driver and triggers ONE
Spark query (``bounded_query``, one job, on its own number of shuffle partitions:
``grouping_partitions``, never the session's) with ONE final aggregation of the groups: the groups
with the smallest key hashes (limit ``max(max_groups, k) + 3``, a TakeOrderedAndProject),
a row of totals (unless the plan's fused scan computed them: ``totals_aggregations``)
and, for histograms, the ``k`` heaviest keys (a second branch over the reused shuffle).
If at most ``max_groups`` groups came back, they are ALL the groups: an exact state;
else the ``k`` smallest hashes form the bounded sample. No Python loop per key, no
second grouping. Empty input gives a state with ``n == 0`` (each metric decides: 0.0 or an
empty failure).

``FrequencyState`` is **exact** (an Arrow table ``k0..k{m-1}, count`` sorted by key,
serialized as Arrow IPC inside the state payload, never pickled) or **bounded**: a
bottom-k ``Sample`` of key hashes with exact counts, plus for string groupings a ``Top``
table of the heaviest keys (format v2, ``frequency_sample``), or, for states stored by
format v1, a DataSketches tuple sketch (``frequency_sketch``; read, used and merged with
v1 and exact states, never with v2 samples). All carry the exact ``n`` and ``total``.
Merge adds counts: exact + exact sums the tables and switches to a sample when the
result has more than ``max_groups`` groups; exact + sample hashes the exact keys on the
driver exactly as Spark does (``key_hash``) and unions by hash. The bound is the smaller
of the two states' bounds.

**Boundedness.** Every state built with an integer ``max_groups`` holds at most
``max_groups`` groups exactly or a sample of at most ``k = 2**lg_k`` keys (and at most k
top keys), where ``lg_k`` is log2(max_groups) clamped to 5..12 (4096 keys, about 1.6%
relative standard error on distinct counts, is the cap). Only ``max_groups=None`` (asked
for explicitly) keeps an exact table that grows with the number of distinct groups.

**Estimates from the bounded form** (all flagged ``approximate=True``; ``error_bound`` is
an absolute bound on the metric value at about 3 standard deviations): the retained
keys are a uniform sample of the distinct keys with inclusion probability theta, and
their counts are exact. A count of keys (CountDistinct, Histogram's number of bins) is
``r / theta`` with binomial 3-sigma bounds (v1: the sketch's own bounds). A per-row mean
of a function of the row's key count (Uniqueness, Distinctness, Entropy,
DuplicateRowCount / n) is a ratio estimator over the sampled keys (``row_share``: theta
cancels, so an all-unique sample gives exactly 1.0 Uniqueness); a proportion over keys
(UniqueValueRatio) is the sample proportion. Histogram's top bins come from the ``Top``
table (lower bounds of the counts; the error is the widest upper-lower gap).
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import struct
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Self

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from streamdq.analyzers import frequency_sample as smp
from streamdq.analyzers import frequency_sketch as fs
from streamdq.analyzers.base import col, in_scope
from streamdq.analyzers.key_hash import key_hash, key_hashes
from streamdq.analyzers.state import State, StateFormatError, register_state

NULL_VALUE = "NullValue"
EXACT = "exact"
SKETCH = "sketch"  # format v1 bounded form (DataSketches tuple sketch), read and merged for old states
TOP_EXTRA = 3  # rows fetched beyond k: up to two groups out of scope, and the (k+1)-th
EXACT_EXTRA = 3  # rows fetched beyond max_groups: up to two groups out of scope, and one more
SAMPLE = "sample"  # format v2 bounded form (bottom-k sample of key hashes built in Spark)
SIGMAS = 3
_LEN = struct.Struct(">I")


@dataclass(frozen=True)
class FrequencySpec:
    """What one grouped pass groups: columns (``()`` = all), filter, histogram mode."""

    columns: tuple[str, ...]
    where: str | None = None
    histogram: bool = False
    # histogram binning (Histogram's binning map): (key, bin) pairs, the bin of other keys
    bins: tuple[tuple[str, str], ...] = ()
    default_bin: str | None = None

    def key(self) -> str:
        body: dict[str, Any] = {
            "columns": list(self.columns),
            "where": self.where,
            "histogram": self.histogram,
        }
        if self.bins or self.default_bin is not None:
            body["bins"] = [list(b) for b in self.bins]
            body["default_bin"] = self.default_bin
        return json.dumps(body, sort_keys=True, separators=(",", ":"))

    def resolve_columns(self, all_columns: list[str]) -> tuple[str, ...]:
        return self.columns if self.columns else tuple(all_columns)


def _count_matching(counts: np.ndarray, predicate: Callable[[int], bool]) -> int:
    """How many of ``counts`` satisfy ``predicate``.

    A comparison predicate (``lambda c: c == 1``) is applied to the whole array at once: the
    total scope's exact table holds up to ~100,000 groups, and a Python call per group cost
    ~90 ms per metric on every microbatch. A predicate that does not broadcast over an array
    (it returns a scalar, or raises) is called once per count.

    >>> import numpy as np
    >>> _count_matching(np.array([1, 2, 1, 3]), lambda c: c == 1)
    2
    >>> _count_matching(np.array([1, 2, 1, 3]), lambda c: bool(c > 1))
    2
    """
    try:
        mask = np.asarray(predicate(counts))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        mask = None
    if mask is not None and mask.dtype == np.bool_ and mask.shape == counts.shape:
        return int(np.count_nonzero(mask))
    return sum(1 for v in counts.tolist() if predicate(v))


def _min_bound(a: int | None, b: int | None) -> int | None:
    if a is None:
        return b
    if b is None:
        return a
    return min(a, b)


def _table_bytes(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue()


def _canonical_table(table: pa.Table) -> pa.Table:
    """Drop schema metadata, one chunk, rows sorted by key columns (nulls last)."""
    table = table.replace_schema_metadata(None)
    keys = [name for name in table.column_names if name != "count"]
    if keys and table.num_rows > 1:
        # unsortable key types (nested): equality then depends on row order
        with contextlib.suppress(pa.ArrowNotImplementedError, pa.ArrowTypeError):
            table = table.sort_by([(k, "ascending") for k in keys])
    return table.combine_chunks()


def _sum_tables(a: pa.Table, b: pa.Table) -> pa.Table:
    if a.schema != b.schema:
        try:
            schema = pa.unify_schemas([a.schema, b.schema], promote_options="permissive")
            a, b = a.cast(schema), b.cast(schema)
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as exc:
            raise ValueError(
                f"cannot merge frequency tables with key types {a.schema} and {b.schema}"
            ) from exc
    keys = [name for name in a.column_names if name != "count"]
    both = pa.concat_tables([a, b])
    summed = both.group_by(keys, use_threads=False).aggregate([("count", "sum")])
    columns = {k: summed[k] for k in keys}
    columns["count"] = summed["count_sum"]
    return _canonical_table(pa.table(columns).select(a.column_names))


class FrequencyState(State):
    """Exact frequency table or its bounded sketch, with ``n`` and the unfiltered ``total``.

    Immutable. ``n``: rows in scope after dropping all-NULL keys; ``total``: all rows
    seen (the Histogram ratio denominator); ``max_groups``: the exact-table bound
    (``None`` = unbounded, only when asked for).
    """

    TYPE_TAG = "frequency"
    # v2 adds the "sample" bounded form; v1 payloads (exact, tuple sketch) read unchanged
    FORMAT_VERSION = 2

    def __init__(
        self,
        *,
        n: int = 0,
        total: int = 0,
        max_groups: int | None = None,
        table: pa.Table | None = None,
        sketch: bytes | None = None,
        items: bytes | None = None,
        sample: smp.Sample | None = None,
        top: smp.Top | None = None,
    ) -> None:
        if sketch is None and items is not None:
            raise ValueError("a frequent-items sketch comes only with a tuple sketch")
        if sample is None and top is not None:
            raise ValueError("a top-keys table comes only with a sample")
        if (sketch is not None or sample is not None) and max_groups is None:
            raise ValueError("a bounded-form FrequencyState needs max_groups")
        if sketch is not None and sample is not None:
            raise ValueError("a FrequencyState is either a v1 tuple sketch or a sample, not both")
        self.n = int(n)
        self.total = int(total)
        self.max_groups = max_groups
        # a table without rows carries nothing but a schema: normalized away, so that all
        # states of zero groups are equal (and serialize equally)
        self.table = None if table is None or table.num_rows == 0 else _canonical_table(table)
        self.sketch = sketch
        self.items = items
        self.sample = sample
        self.top = top

    # -- construction ------------------------------------------------------------------
    @classmethod
    def empty(cls) -> Self:
        return cls()

    @classmethod
    def from_table(cls, table: pa.Table, *, n: int, total: int, max_groups: int | None) -> FrequencyState:
        """An exact state, or its sketch form when ``table`` exceeds ``max_groups``."""
        state = FrequencyState(n=n, total=total, max_groups=max_groups, table=table)
        if max_groups is not None and table.num_rows > max_groups:
            return state.to_sketch(max_groups)
        return state

    def to_sketch(self, max_groups: int) -> FrequencyState:
        """This state in bounded form at bound ``max_groups`` (driver-side, bounded input).

        Exact tables and samples become a sample of at most ``2**lg_k`` keys (exact tables
        hash their keys on the driver exactly as Spark does, ``key_hashes``); a v1 tuple
        sketch stays a tuple sketch.
        """
        if self.sketch is None:
            sample, top = self._sample_parts(max_groups)
            return FrequencyState(n=self.n, total=self.total, max_groups=max_groups, sample=sample, top=top)
        sketch, items = fs.union([(self._tuple(), self.items)], fs.lg_k_for(max_groups))
        return FrequencyState(n=self.n, total=self.total, max_groups=max_groups, sketch=sketch, items=items)

    def _v1_parts(self, max_groups: int) -> tuple[bytes, bytes | None]:
        """(tuple sketch, items sketch) of this exact state in the v1 form (to merge with v1)."""
        table = self.table
        keys: list[str | int] = []
        counts: list[int] = []
        with_items = False
        if table is not None and table.num_rows:
            key_columns = [table[c] for c in table.column_names if c != "count"]
            keys = fs.canonical_keys(key_columns)
            counts = table["count"].to_pylist()
            with_items = len(key_columns) == 1 and pa.types.is_string(key_columns[0].type)
        return fs.build(keys, counts, fs.lg_k_for(max_groups), with_items=with_items)

    def _sample_parts(self, max_groups: int) -> tuple[smp.Sample, smp.Top | None]:
        """(sample, top) of this exact or sample state at bound ``max_groups``."""
        k = sample_size(max_groups)
        if self.sample is not None:
            top = None if self.top is None else smp.merge_tops([self.top], k)
            return smp.merge_samples([self.sample], k), top
        table = self.table
        if table is None or table.num_rows == 0:
            return smp.sample_of(np.zeros(0, np.int64), np.zeros(0, np.int64), k), None
        key_columns = [table[c] for c in table.column_names if c != "count"]
        counts = np.asarray(table["count"].to_numpy(zero_copy_only=False), dtype=np.int64)
        sample = smp.sample_of(key_hashes(key_columns), counts, k)
        top = None
        if len(key_columns) == 1 and pa.types.is_string(key_columns[0].type):
            top = smp.top_of(key_columns[0].combine_chunks(), counts, k, complete=True)
        return sample, top

    # -- properties --------------------------------------------------------------------
    def _tuple(self) -> Any:
        """The deserialized tuple sketch (loaded once: the state is immutable)."""
        assert self.sketch is not None
        cached = self.__dict__.get("_loaded")
        if cached is None:
            cached = self.__dict__["_loaded"] = fs.load_tuple(self.sketch)
        return cached

    @property
    def is_empty(self) -> bool:
        """No rows seen at all (the merge identity, whatever its key schema)."""
        return (
            self.n == 0
            and self.total == 0
            and self.sketch is None
            and self.sample is None
            and (self.table is None or not self.table.num_rows)
        )

    @property
    def is_sketch(self) -> bool:
        """Bounded form (a v2 sample or a v1 tuple sketch): every metric is approximate."""
        return self.sketch is not None or self.sample is not None

    @property
    def approximate(self) -> bool:
        return self.is_sketch

    @property
    def lg_k(self) -> int | None:
        return None if self.max_groups is None or not self.is_sketch else fs.lg_k_for(self.max_groups)

    @property
    def theta(self) -> float:
        """Inclusion probability of a distinct key in ``counts()`` (1.0 when exact)."""
        if self.sample is not None:
            return self.sample.theta
        if self.sketch is None:
            return 1.0
        return float(self._tuple().theta)

    def counts(self) -> np.ndarray:
        """Counts of the groups held: all of them (exact) or the theta sample (bounded)."""
        if self.sample is not None:
            return self.sample.counts
        if self.sketch is not None:
            return np.array([c for _, c in self._tuple()], dtype=np.int64)
        if self.table is None:
            return np.zeros(0, dtype=np.int64)
        return np.asarray(self.table["count"].to_numpy(zero_copy_only=False), dtype=np.int64)

    def count_groups(self, predicate: Callable[[int], bool] | None = None) -> tuple[float, float]:
        """(estimate, absolute bound) of the number of groups whose count satisfies ``predicate``.

        Sample form: ``r / theta`` for the r sampled keys that satisfy it, with a Garwood
        (Poisson) confidence interval of r at about 3 sigma scaled by 1/theta (conservative
        for the binomial count of a theta sample), never below r.
        """
        if self.sample is not None:
            c = self.sample.counts
            r = len(c) if predicate is None else _count_matching(c, predicate)
            return _theta_estimate(r, self.sample.theta)
        if self.sketch is None:
            c = self.counts()
            if predicate is None:
                return float(len(c)), 0.0
            return float(_count_matching(c, predicate)), 0.0
        sk = self._tuple()
        if predicate is not None:
            sk = sk.filter(predicate)
        est = float(sk.get_estimate())
        bound = max(float(sk.get_upper_bound(SIGMAS)) - est, est - float(sk.get_lower_bound(SIGMAS)))
        return est, bound

    def sum_over_groups(self, f: Callable[[np.ndarray], np.ndarray]) -> tuple[float, float]:
        """(estimate, absolute bound) of sum over groups of ``f(c_k)`` (Horvitz-Thompson when sketched)."""
        values = np.asarray(f(self.counts().astype(np.float64)), dtype=np.float64)
        theta = self.theta
        est = float(values.sum()) / theta
        if not self.is_sketch:
            return est, 0.0
        var = (1.0 - theta) / theta**2 * float((values**2).sum())
        return est, SIGMAS * math.sqrt(var)

    def row_share(self, f: Callable[[np.ndarray], np.ndarray]) -> tuple[float, float]:
        """(estimate, absolute bound) of (1/n) * sum over groups of ``c_k * f(c_k)``.

        That is the mean of ``f(count of the row's key)`` over the n rows (Uniqueness:
        f = [c == 1]; Distinctness: f = 1/c; Entropy: f = -ln(c/n)). Exact: computed over
        all groups. Sketch: the ratio estimator ``sum_s c f(c) / sum_s c`` over the sampled
        keys (theta cancels, so an all-unique sample gives exactly 1.0 for Uniqueness),
        with the delta-method variance ``(1 - theta) / (theta n)**2 * sum_s (c f(c) - R c)**2``,
        floored at ``3 / m`` of the value range for a sample of m keys (the rule of three:
        what the sample has not seen may still exist).
        """
        c = self.counts().astype(np.float64)
        y = c * np.asarray(f(c), dtype=np.float64)
        if not self.is_sketch:
            return (float(y.sum()) / self.n if self.n else 0.0), 0.0
        total = float(c.sum())
        if total == 0.0:
            return 0.0, 1.0
        ratio = float(y.sum()) / total
        theta = self.theta
        residual = float(((y - ratio * c) ** 2).sum())
        var = (1.0 - theta) / (theta * max(self.n, 1)) ** 2 * residual
        floor = (1.0 - theta) * 3.0 / len(c)
        return ratio, max(SIGMAS * math.sqrt(var), floor)

    def top_items(self, limit: int) -> tuple[list[tuple[str, int]], float]:
        """The ``limit`` heaviest keys by count desc, key asc, and the max count error.

        Exact: single-column tables only (keys as strings). Sketch: estimates from the
        frequent-items sketch; the error is the widest upper-lower bound gap.
        """
        if self.sample is not None:
            if self.top is None:
                raise ValueError("this sample-form state has no top-keys table (not a string grouping)")
            head = self.top.table.slice(0, limit)
            gaps = pc.subtract(head["hi"], head["lo"])
            err = float(pc.max(gaps).as_py() or 0) if head.num_rows else float(self.top.threshold)
            pairs = zip(head["key"].to_pylist(), head["lo"].to_pylist(), strict=True)
            return [(str(k), int(v)) for k, v in pairs], err
        if self.sketch is None:
            if self.table is None or self.table.num_rows == 0:
                return [], 0.0
            keys = [c for c in self.table.column_names if c != "count"]
            ordered = self.table.sort_by([("count", "descending"), (keys[0], "ascending")])
            head = ordered.slice(0, limit)
            names = [str(k) for k in fs.canonical_keys([head[keys[0]]])]
            return list(zip(names, (int(v) for v in head["count"].to_pylist()), strict=True)), 0.0
        if self.items is None:
            raise ValueError("this sketch-form state has no frequent-items sketch (not a string grouping)")
        sk = fs.load_items(self.items)
        rows = sk.get_frequent_items(fs.ds.frequent_items_error_type.NO_FALSE_NEGATIVES)
        ordered_rows = sorted(rows, key=lambda r: (-int(r[1]), r[0]))[:limit]
        err = max((float(r[3] - r[2]) for r in rows), default=float(sk.epsilon * sk.total_weight))
        return [(str(r[0]), int(r[1])) for r in ordered_rows], err

    # -- algebra -----------------------------------------------------------------------
    def merge(self, other: Self) -> Self:
        if other.is_empty:  # the identity, whatever bound it was built with
            return self
        if self.is_empty:
            return other
        bound = _min_bound(self.max_groups, other.max_groups)
        n, total = self.n + other.n, self.total + other.total
        if not self.is_sketch and not other.is_sketch:
            a, b = self.table, other.table
            if a is None or (a.num_rows == 0 and b is not None):
                table = b
            elif b is None or b.num_rows == 0:
                table = a
            else:
                table = _sum_tables(a, b)
            if table is None:
                return type(self)(n=n, total=total, max_groups=bound)
            return type(self).from_table(table, n=n, total=total, max_groups=bound)  # type: ignore[return-value]
        assert bound is not None
        if self.sketch is None and other.sketch is None:  # samples (and exact tables) of v2
            k = sample_size(bound)
            pairs = [s._sample_parts(bound) for s in (self, other)]
            sample = smp.merge_samples([p[0] for p in pairs], k)
            tops = [p[1] for p in pairs]
            top = smp.merge_tops([t for t in tops if t is not None], k) if all(tops) else None
            return type(self)(n=n, total=total, max_groups=bound, sample=sample, top=top)
        if self.sample is not None or other.sample is not None:
            raise ValueError(
                "cannot merge a format-v1 tuple-sketch FrequencyState with a v2 sample: their keys "
                "are hashed differently; recompute the v1 state (or start a new query) to continue"
            )
        parts = []
        for s in (self, other):
            if s.sketch is None and (s.table is None or s.table.num_rows == 0):
                continue
            if s.sketch is not None:
                parts.append((s._tuple(), s.items))
            else:  # an exact table joins the v1 form: its keys hashed as v1 hashed them
                parts.append(s._v1_parts(bound))
        sketch, items = fs.union(parts, fs.lg_k_for(bound))
        return type(self)(n=n, total=total, max_groups=bound, sketch=sketch, items=items)

    # -- serialization ---------------------------------------------------------------------
    def payload(self) -> bytes:
        kind = SAMPLE if self.sample is not None else SKETCH if self.sketch is not None else EXACT
        header: dict[str, Any] = {
            "kind": kind,
            "n": self.n,
            "total": self.total,
            "max_groups": self.max_groups,
        }
        blobs: list[bytes]
        if self.sample is not None:
            header["theta"] = self.sample.theta_u
            blobs = [_table_bytes(self.sample.to_table())]
            if self.top is not None:
                header["top_threshold"] = self.top.threshold
                blobs.append(_table_bytes(self.top.table))
        elif self.sketch is not None:
            blobs = [self.sketch] if self.items is None else [self.sketch, self.items]
        elif self.table is not None:
            blobs = [_table_bytes(self.table)]
        else:
            blobs = []
        header["sizes"] = [len(b) for b in blobs]
        head = json.dumps(header, sort_keys=True, separators=(",", ":")).encode()
        return _LEN.pack(len(head)) + head + b"".join(blobs)

    @classmethod
    def from_payload(cls, payload: bytes, version: int) -> Self:
        try:
            (size,) = _LEN.unpack_from(payload)
            header = json.loads(payload[_LEN.size : _LEN.size + size])
            pos = _LEN.size + size
            blobs = []
            for length in header["sizes"]:
                blobs.append(payload[pos : pos + length])
                pos += length
            common = {"n": header["n"], "total": header["total"], "max_groups": header["max_groups"]}
            if header["kind"] == SKETCH:
                return cls(**common, sketch=blobs[0], items=blobs[1] if len(blobs) > 1 else None)
            if header["kind"] == SAMPLE:
                if version < 2:
                    raise ValueError("the sample form needs format version 2")
                sample = smp.sample_from_table(pa.ipc.open_stream(blobs[0]).read_all(), header["theta"])
                top = None
                if len(blobs) > 1:
                    top_table = pa.ipc.open_stream(blobs[1]).read_all().combine_chunks()
                    top = smp.Top(top_table, int(header["top_threshold"]))
                return cls(**common, sample=sample, top=top)
            if header["kind"] != EXACT:
                raise ValueError(f"unknown kind {header['kind']!r}")
            table = pa.ipc.open_stream(blobs[0]).read_all() if blobs else None
            return cls(**common, table=table)
        except (KeyError, IndexError, ValueError, struct.error, pa.ArrowInvalid) as exc:
            raise StateFormatError(f"corrupt frequency state payload: {exc}") from exc

    def __eq__(self, other: object) -> bool:
        """Equal counts, totals, bound and groups (tables compared by value, not bytes:
        Arrow buffers may differ in padding and in slots under NULLs)."""
        if not isinstance(other, FrequencyState):
            return False
        same = (self.n, self.total, self.max_groups, self.sketch, self.items, self.sample, self.top) == (
            other.n,
            other.total,
            other.max_groups,
            other.sketch,
            other.items,
            other.sample,
            other.top,
        )
        if not same or (self.table is None) != (other.table is None):
            return False
        return self.table is None or (other.table is not None and self.table.equals(other.table))

    def __hash__(self) -> int:
        rows = 0 if self.table is None else self.table.num_rows
        return hash((self.n, self.total, self.max_groups, self.sketch, rows))

    def __repr__(self) -> str:
        kind = (
            f"sample[{len(self.sample)}, theta={self.sample.theta:.3g}]"
            if self.sample is not None
            else "sketch"
            if self.sketch is not None
            else f"exact[{0 if self.table is None else self.table.num_rows}]"
        )
        return f"FrequencyState({kind}, n={self.n}, total={self.total}, max_groups={self.max_groups})"


register_state(FrequencyState)


def sample_size(max_groups: int) -> int:
    """k, the number of keys a bounded state keeps at bound ``max_groups`` (``2**lg_k``)."""
    return 1 << fs.lg_k_for(max_groups)


def _theta_estimate(r: int, theta: float) -> tuple[float, float]:
    """(r / theta, absolute ~3-sigma bound) for r keys seen in a theta sample of N keys.

    r ~ Binomial(N, theta): the bounds are the N at which seeing r (or fewer / more)
    keys has a tail probability of 3 sigma (0.135%), found by bisection; never below r.
    """
    est = r / theta
    if theta >= 1.0:
        return est, 0.0
    from scipy.stats import binom

    tail = 0.0013498980316301  # one-sided tail of 3 sigma

    def first(pred: Callable[[int], bool], lo: int) -> int:
        """Smallest N >= lo with pred(N) (pred monotone false -> true)."""
        hi = max(lo, 1)
        while not pred(hi):
            hi *= 2
        while lo < hi:
            mid = (lo + hi) // 2
            if pred(mid):
                hi = mid
            else:
                lo = mid + 1
        return lo

    upper = first(lambda n: float(binom.cdf(r, n, theta)) < tail, r) - 1
    lower = r if r == 0 else first(lambda n: float(binom.sf(r - 1, n, theta)) >= tail, r)
    return est, max(float(upper) - est, est - float(lower), 0.0)


def smallest_limit(max_groups: int) -> int:
    """The row limit of part 0 of ``bounded_query``: ``max(max_groups + 3, k + 3)``."""
    return max(max_groups + EXACT_EXTRA, sample_size(max_groups) + TOP_EXTRA)


def estimate_kwargs(state: FrequencyState, bound: float) -> dict[str, Any]:
    """Metric keyword arguments flagging a value computed from the sketch form."""
    if not state.approximate:
        return {}
    return {"approximate": True, "error_bound": float(bound)}


def _binned(key: Column, spec: FrequencySpec) -> Column:
    """A histogram key mapped through the spec's bins (keys not listed: ``default_bin``, or
    kept as they are when there is none). NULL was already turned into ``"NullValue"``."""
    if not spec.bins and spec.default_bin is None:
        return key
    out = F.lit(spec.default_bin) if spec.default_bin is not None else key
    for value, name in reversed(spec.bins):
        out = F.when(key == F.lit(value), F.lit(name)).otherwise(out)
    return out


def key_projection(df: DataFrame, spec: FrequencySpec) -> tuple[Column, list[Column]]:
    """(scope flag, key columns) of ``spec`` as per-row Spark expressions over ``df``: what
    ``grouped_counts`` groups by, and what the small-batch path projects and groups itself.

    Histogram keys are cast to string with NULL as ``"NullValue"``; keys are NULL out of scope.
    """
    columns = spec.resolve_columns(df.columns)
    scope = in_scope(spec.where)
    if spec.histogram:
        if len(columns) != 1:
            raise ValueError(f"a histogram groups exactly one column, got {columns}")
        keys = [_binned(F.coalesce(col(columns[0]).cast("string"), F.lit(NULL_VALUE)), spec)]
    else:
        keys = [col(c) for c in columns]
    if spec.where is not None:
        keys = [F.when(scope, k) for k in keys]
    return scope, keys


def grouped_counts(
    df: DataFrame, spec: FrequencySpec, segment: Sequence[Column] = ()
) -> tuple[DataFrame, int]:
    """The grouped aggregation of ``spec``: columns ``in_scope, k0.., count``; and the key arity.

    Rows out of scope collapse into one ``in_scope = false`` group (their keys NULL), so
    the unfiltered row count comes out of the same pass. ``segment`` columns (e.g. an
    event-time window), when given, lead the grouping as ``s0..`` so one pass yields the
    counts of every segment.
    """
    scope, keys = key_projection(df, spec)
    named = [k.alias(f"k{i}") for i, k in enumerate(keys)]
    segs = [c.alias(f"s{i}") for i, c in enumerate(segment)]
    grouped = df.groupBy(*segs, scope.alias("in_scope"), *named).agg(
        F.count(F.lit(1)).cast("long").alias("count")
    )
    return grouped, len(keys)


def state_from_grouped(
    arrow: pa.Table, *, n_keys: int, histogram: bool, max_groups: int | None
) -> FrequencyState:
    """The state of a fully collected grouped-counts table (``in_scope, k0.., count``).

    Driver-side; the table holds at most ``max_groups`` + 2 rows when bounded.
    """
    total = int(pc.sum(arrow["count"]).as_py() or 0)
    kept = fs.keep_in_scope(arrow, n_keys=n_keys, drop_all_null=not histogram)
    n = int(pc.sum(kept["count"]).as_py() or 0)
    table = kept.select([*(f"k{i}" for i in range(n_keys)), "count"])
    return FrequencyState.from_table(table, n=n, total=total, max_groups=max_groups)


def compute_frequency_state(
    df: DataFrame,
    spec: FrequencySpec,
    *,
    max_groups: int | None,
    totals: tuple[int, int] | None = None,
) -> FrequencyState:
    """Run the grouped aggregation of ``spec`` over ``df`` and return its state (driver).

    ONE Spark query (``bounded_query``) with ONE final aggregation of the groups: the
    ``max(max_groups, k) + 3`` groups with the smallest key hashes, plus a row of totals
    unless ``totals`` = (all rows, rows kept) is given (the plan computes them in its
    fused scan, see ``totals_aggregations``) and, for histograms, the ``k + 3`` heaviest
    keys. When fewer than ``max_groups + 3`` groups came back, they are ALL the groups:
    an exact state. Otherwise the ``k`` smallest hashes among them are the bounded
    sample (no Python loop per key, no second grouping). At most
    ``max(max_groups, k) + k + 7`` rows reach the driver. ``max_groups=None`` keeps every
    group exactly (unbounded: only when explicitly asked for). Empty input: a state with
    ``n == 0``.

    The query's shuffle has ``grouping_partitions`` partitions (from the cores and, when
    ``totals`` gives it, the number of rows kept), whatever the session's
    ``spark.sql.shuffle.partitions``; the partitioning changes the cost, never the state.
    """
    if max_groups is not None and max_groups < 1:
        raise ValueError(f"max_groups must be >= 1 or None, got {max_groups}")
    grouped, n_keys = grouped_counts(df, spec)
    if max_groups is None:
        arrow_all = collect_grouping(grouped, rows=None, limit=None)
        return state_from_grouped(arrow_all, n_keys=n_keys, histogram=spec.histogram, max_groups=None)
    query = bounded_query(
        df, spec, max_groups=max_groups, grouped=(grouped, n_keys), with_totals=totals is None
    )
    names = [f"k{i}" for i in range(n_keys)]
    k = sample_size(max_groups)
    rows = None if totals is None else int(totals[1])
    arrow = collect_grouping(query, rows=rows, limit=smallest_limit(max_groups))
    part = arrow["_part"]
    if totals is None:
        row = arrow.filter(pc.equal(part, 1))
        total = int(row["count"][0].as_py() or 0) if row.num_rows else 0
        n = int(row["_n"][0].as_py() or 0) if row.num_rows else 0
    else:
        total, n = int(totals[0]), int(totals[1])
    drop = not spec.histogram
    smallest = arrow.filter(pc.equal(part, 0))
    rows = fs.keep_in_scope(smallest, n_keys=n_keys, drop_all_null=drop)
    if smallest.num_rows < max_groups + EXACT_EXTRA and rows.num_rows <= max_groups:
        # fewer rows than the limit: these are ALL the groups, and few enough to keep exactly
        table = rows.select([*names, "count"])
        # key columns nullable whatever the query's shape (as with the totals branch in the
        # union), so that equal groups give equal state bytes however the totals came
        schema = pa.schema([f.with_nullable(True) if f.name in names else f for f in table.schema])
        return FrequencyState.from_table(table.cast(schema), n=n, total=total, max_groups=max_groups)
    counts = np.asarray(rows["count"].to_numpy(zero_copy_only=False), dtype=np.int64)
    hashes = np.asarray(rows["_h"].to_numpy(zero_copy_only=False), dtype=np.int64)
    bounded = smp.sample_of(hashes, counts, k)
    heavy = None
    if spec.histogram:
        fetched = arrow.filter(pc.equal(part, 2))
        tops = fs.keep_in_scope(fetched, n_keys=n_keys, drop_all_null=False)
        # fewer rows than the limit: every key came back; else at least k + 1 in-scope
        # keys did, and the (k+1)-th count bounds the unlisted ones
        heavy = smp.top_of(
            tops["k0"].combine_chunks(),
            np.asarray(tops["count"].to_numpy(zero_copy_only=False), dtype=np.int64),
            k,
            complete=fetched.num_rows < k + TOP_EXTRA,
        )
    return FrequencyState(n=n, total=total, max_groups=max_groups, sample=bounded, top=heavy)


def kept_rows(df: DataFrame, spec: FrequencySpec) -> Column:
    """TRUE on the input rows a grouping of ``spec`` counts in ``n`` (in scope, and for
    plain groupings not NULL in every grouping column)."""
    kept = in_scope(spec.where)
    if not spec.histogram:
        key_valid = F.lit(False)
        for c in spec.resolve_columns(df.columns):
            key_valid = key_valid | col(c).isNotNull()
        kept = kept & key_valid
    return kept


def totals_aggregations(df: DataFrame, spec: FrequencySpec) -> list[Column]:
    """The two global aggregates ``compute_frequency_state`` takes as ``totals``: all rows,
    and the rows kept (``kept_rows``). The plan adds them to its fused scan, so the
    grouping query needs no scan of its own for them."""
    return [
        F.count(F.lit(1)).cast("long"),
        F.coalesce(F.sum(F.when(kept_rows(df, spec), F.lit(1))), F.lit(0)).cast("long"),
    ]


def grouping_partitions(cores: int, rows: int | None, limit: int | None) -> int:
    """Shuffle partitions for a grouping query: streamdq sizes its own grouping stage, so
    the cost does not depend on the session's ``spark.sql.shuffle.partitions``.

    ``cores``: the cluster's parallelism (``defaultParallelism``); ``rows``: the rows that
    can form groups, when known (the plan's fused scan counts them), else ``None``;
    ``limit``: the per-partition limit of the bounded query's TakeOrderedAndProject
    (``None`` for the unbounded query, which has none).

    Each of P partitions keeps up to ``limit`` groups and ONE task merges them: P * limit
    rows, against about rows / P per partition. P = floor(sqrt(rows / limit)) balances the
    two, capped by the cores and at least 1; so a grouping of at most ``limit`` rows runs in
    one partition, and a large one on at most one partition per core. Unknown ``rows`` or
    no limit: one partition per core.
    """
    cores = max(1, int(cores))
    if rows is None or limit is None:
        return cores
    return max(1, min(cores, math.isqrt(max(int(rows), 0) // max(int(limit), 1))))


def collect_grouping(query: DataFrame, *, rows: int | None, limit: int | None) -> pa.Table:
    """``query.toArrow()`` for a query over grouped counts (``grouped_counts``,
    ``bounded_query``, or a limit of them): ONE Spark job on ``grouping_partitions(cores,
    rows, limit)`` shuffle partitions, whatever the session's settings (``_one_job``).

    ``rows``: the rows that can form groups, when known; ``limit``: the per-partition limit
    of an ordered limit in the query (``None``: none)."""
    spark = query.sparkSession
    partitions = grouping_partitions(spark.sparkContext.defaultParallelism, rows, limit)
    with _one_job(spark, partitions):
        return query.toArrow()


@contextlib.contextmanager
def _one_job(spark: Any, partitions: int) -> Iterator[None]:
    """Run a grouping query as ONE Spark job on ``partitions`` shuffle partitions.

    Adaptive execution would submit every shuffle stage of the union as a job of its own
    (4 instead of 1; the exchange is reused either way), and the session's
    ``spark.sql.shuffle.partitions`` (200 by default) would size the grouping stage: 200
    TakeOrderedAndProject queues of up to ``max_groups + 3`` rows each, all merged by one
    task. So for the duration of the action this sets ``spark.sql.adaptive.enabled=false``
    and ``spark.sql.shuffle.partitions=partitions`` on the session (both read when the
    query is planned, i.e. at the action) and restores both afterwards. Session-wide
    settings: another thread running a query on the same session meanwhile runs it with
    them too.
    """
    settings = {"spark.sql.adaptive.enabled": "false", "spark.sql.shuffle.partitions": str(partitions)}
    previous = {key: spark.conf.get(key, None) for key in settings}
    for key, value in settings.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, value in previous.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)


def bounded_query(
    df: DataFrame,
    spec: FrequencySpec,
    *,
    max_groups: int,
    grouped: tuple[DataFrame, int] | None = None,
    with_totals: bool = True,
) -> DataFrame:
    """The one query of a bounded grouping, in parts (column ``_part``):

    * 0: the ``max(max_groups, k) + 3`` groups with the smallest key hashes (``in_scope,
      k0.., count, _h``; a TakeOrderedAndProject with a bounded queue per partition, no
      full sort); groups out of scope sort last (at most two: the out-of-scope group,
      the all-NULL key). When fewer than ``max_groups + 3`` rows come back they are ALL
      the groups (the state may be exact); otherwise at least ``max(max_groups, k) + 1``
      in-scope groups did, and the ``k`` smallest hashes among them are the sample;
    * 1 (``with_totals``): one row of totals (``count`` = all rows, ``_n`` = rows kept),
      a global aggregation of the input itself, not of the groups;
    * 2: histograms only: the ``k + 3`` heaviest keys (count desc, key asc), which reads
      the same grouped aggregation through a reused exchange.

    A plain grouping thus runs its final (post-shuffle) aggregation ONCE: part 0 serves
    both the exact table and the sample. Filters on the keys are avoided on purpose:
    Spark would push them below the aggregation and defeat the exchange reuse.
    """
    grouped_df, n_keys = grouped if grouped is not None else grouped_counts(df, spec)
    names = [f"k{i}" for i in range(n_keys)]
    keep = F.col("in_scope")
    if not spec.histogram and names:
        any_valid = F.lit(False)
        for name in names:
            any_valid = any_valid | F.col(name).isNotNull()
        keep = keep & any_valid
    k = sample_size(max_groups)
    g = grouped_df.withColumn("_h", key_hash([F.col(name) for name in names]))
    query = (
        g.orderBy(F.when(keep, F.col("_h")).asc_nulls_last())
        .limit(smallest_limit(max_groups))
        .select(F.lit(0).alias("_part"), "in_scope", *names, "count", "_h")
    )
    if with_totals:
        sums = df.agg(*totals_aggregations(df, spec)).toDF("count", "_n")
        query = query.unionByName(
            sums.select(F.lit(1).alias("_part"), "count", "_n"), allowMissingColumns=True
        )
    if spec.histogram:
        top = g.orderBy(F.when(keep, F.col("count")).desc_nulls_last(), F.asc(names[0])).limit(k + TOP_EXTRA)
        query = query.unionByName(
            top.select(F.lit(2).alias("_part"), "in_scope", *names, "count"), allowMissingColumns=True
        )
    return query
