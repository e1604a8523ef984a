"""The state of grouping analyzers: the exact frequency table, or its bounded sample.

One registered state type (tag ``frequency``) in two forms, each its own class:

* ``ExactFrequencies``: every group, an Arrow table ``k0..k{m-1}, count`` sorted by key
  (``tables``), serialized as Arrow IPC inside the payload, never pickled;
* ``SampledFrequencies``: the bounded form, a bottom-k ``Sample`` of key hashes with exact
  counts, plus for single string-key groupings a ``Top`` table of the heaviest keys
  (``sample``). Every metric computed from it is approximate (``estimators``).

Both carry the exact ``n`` (rows in scope, after dropping rows whose grouping columns are
all NULL) and ``total`` (ALL rows seen, the Histogram ratio denominator), and
``max_groups``, the bound (``None`` = unbounded: only when asked for explicitly).

A histogram with Deequ's ``Sum(aggColumn)`` aggregate (``FrequencySpec.sum_of``) has a
*weighted* state: the exact table has a ``sum`` column (the bin's sum, NULL when all its
values were NULL), the top keys rank the bins by that sum, and ``sums`` carries the exact
sum over the rows kept and over ALL rows (the ratio denominator; ``None`` when no value was
non-NULL). Weighted and plain states never merge (they belong to different specs), except
with the empty identity.

**Merge** adds counts. exact + exact sums the tables and turns into a sample when the
result has more than ``max_groups`` groups; exact + sample hashes the exact keys on the
driver exactly as the sample's keys were hashed (``key_hash``; ``migration.v1_hashes`` for
a sample converted from format v1) and unions by hash. The bound is the smaller of the two
states' bounds. The empty state (``FrequencyState.empty()``, an exact state of zero rows)
is the identity whatever its bound. Associative and commutative; exact merges are equal
byte for byte whatever the order.

**Boundedness.** A state built with an integer ``max_groups`` holds at most ``max_groups``
groups exactly or a sample of at most ``k = sample_size(max_groups)`` keys (and at most k
top keys).

**Bytes** (``to_bytes``: tag ``frequency``, format version 3): a length-prefixed JSON
header (``kind``: ``exact`` | ``sample``, ``n``, ``total``, ``max_groups``, blob ``sizes``;
a sample adds ``theta`` and ``top_threshold``, and ``hash: "v1"`` for a converted v1
sample; ``sums: [kept, total]`` and ``top_floor`` for weighted states) followed by the Arrow
IPC blobs. Version 3 adds the ``hash``, ``sums`` and ``top_floor`` keys; versions 1 and 2
read unchanged, and the v1 tuple-sketch form (kind ``sketch``, written by versions 1 and 2)
is converted on read by ``migration.from_v1_sketch``.

>>> import pyarrow as pa
>>> a = FrequencyState.from_table(pa.table({"k0": ["x"], "count": pa.array([2], pa.int64())}),
...                               n=2, total=3, max_groups=10)
>>> b = FrequencyState.from_table(pa.table({"k0": ["x", "y"], "count": pa.array([1, 1], pa.int64())}),
...                               n=2, total=2, max_groups=10)
>>> merged = a.merge(b)
>>> type(merged).__name__, merged.n, merged.total, merged.table.to_pydict()
('ExactFrequencies', 4, 5, {'k0': ['x', 'y'], 'count': [3, 1]})
>>> from streamdq.analyzers.register import state_from_bytes
>>> state_from_bytes(merged.to_bytes()) == merged
True
"""

from __future__ import annotations

import json
import struct
from abc import abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from streamdq.analyzers.frequency import estimators as est
from streamdq.analyzers.frequency.migration import from_v1_sketch, v1_hashes
from streamdq.analyzers.frequency.sample import (
    SPARK,
    V1,
    Sample,
    Top,
    merge_samples,
    merge_tops,
    normalized,
    sample_from_table,
    sample_of,
    top_of,
)
from streamdq.analyzers.frequency.sizing import sample_size
from streamdq.analyzers.frequency.tables import (
    canonical_table,
    key_names,
    merge_canonical,
    read_table,
    table_bytes,
)
from streamdq.analyzers.key_hash import key_hashes
from streamdq.analyzers.state import State, StateFormatError
from streamdq.errors import InvalidArgument

EXACT = "exact"
SAMPLE = "sample"
SKETCH = "sketch"  # the v1 tuple-sketch form (formats 1 and 2), converted on read
_LEN = struct.Struct(">I")


def _add(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else a + b


@dataclass(frozen=True)
class Sums:
    """The exact sums of a weighted (``Sum`` histogram) state's column: over the rows kept
    (in scope) and over ALL rows; ``None`` while no value was non-NULL. Merge adds, ``None``
    being the identity."""

    kept: int | None = None
    total: int | None = None

    def merge(self, other: Sums) -> Sums:
        return Sums(_add(self.kept, other.kept), _add(self.total, other.total))


def _merged_sums(a: Sums | None, b: Sums | None) -> Sums | None:
    if (a is None) != (b is None):
        raise ValueError(
            "cannot merge the state of a Histogram with a Sum aggregate with a plain frequency state"
        )
    return None if a is None or b is None else a.merge(b)


def _min_bound(a: int | None, b: int | None) -> int | None:
    if a is None:
        return b
    if b is None:
        return a
    return min(a, b)


class FrequencyState(State):
    """Frequencies of a grouping: ``ExactFrequencies`` or ``SampledFrequencies`` (see module doc).

    Immutable. ``n``: rows in scope after dropping all-NULL keys; ``total``: all rows
    seen (the Histogram ratio denominator); ``max_groups``: the bound (``None`` =
    unbounded, only when asked for).
    """

    TYPE_TAG = "frequency"
    # v2 added the sample form; v3 the "hash" key of samples converted from v1 sketches
    FORMAT_VERSION = 3

    n: int
    total: int
    max_groups: int | None
    sums: Sums | None

    # -- construction ------------------------------------------------------------------
    @classmethod
    def empty(cls) -> ExactFrequencies:  # type: ignore[override]
        return ExactFrequencies()

    @classmethod
    def from_table(
        cls,
        table: pa.Table,
        *,
        n: int,
        total: int,
        max_groups: int | None,
        sums: Sums | None = None,
        canonical: bool = False,
    ) -> FrequencyState:
        """An exact state, or its sample form when ``table`` exceeds ``max_groups``
        (``canonical``: ``table`` is already in canonical form, see ``ExactFrequencies``)."""
        state = ExactFrequencies(
            n=n, total=total, max_groups=max_groups, table=table, sums=sums, canonical=canonical
        )
        if max_groups is not None and table.num_rows > max_groups:
            return state.to_sketch(max_groups)
        return state

    def to_sketch(self, max_groups: int) -> SampledFrequencies:
        """This state in bounded form at bound ``max_groups`` (driver-side, bounded input)."""
        sample, top = self.sample_parts(max_groups, self.scheme)
        return SampledFrequencies(
            n=self.n, total=self.total, max_groups=max_groups, sample=sample, top=top, sums=self.sums
        )

    # -- the form ----------------------------------------------------------------------
    @property
    @abstractmethod
    def is_sketch(self) -> bool:
        """Bounded (sample) form: every metric is approximate."""

    @property
    def approximate(self) -> bool:
        return self.is_sketch

    @property
    @abstractmethod
    def theta(self) -> float:
        """Inclusion probability of a distinct key in ``counts()`` (1.0 when exact)."""

    @property
    def scheme(self) -> str:
        """How the keys of this state's sample are (or would be) hashed."""
        return SPARK

    @abstractmethod
    def counts(self) -> np.ndarray:
        """Counts of the groups held: all of them (exact) or the theta sample (bounded)."""

    @abstractmethod
    def sample_parts(self, max_groups: int, scheme: str) -> tuple[Sample, Top | None]:
        """(sample, top) of this state at bound ``max_groups``, keys hashed by ``scheme``."""

    @abstractmethod
    def top_items(self, limit: int) -> tuple[list[tuple[str, int]], float]:
        """The ``limit`` heaviest keys by value desc, key asc, and the max value error. The
        value is the row count, or for a weighted state the bin's sum (a NULL sum ranks last
        and reads 0, as in Deequ)."""

    # -- estimates (``estimators``) ------------------------------------------------------
    def count_groups(self, predicate: Callable[[int], bool] | None = None) -> tuple[float, float]:
        """(estimate, absolute bound) of the number of groups whose count satisfies ``predicate``."""
        return est.count_groups(self.counts(), self.theta, predicate)

    def sum_over_groups(self, f: Callable[[np.ndarray], np.ndarray]) -> tuple[float, float]:
        """(estimate, absolute bound) of sum over groups of ``f(c_k)``."""
        return est.sum_over_groups(self.counts(), self.theta, f)

    def row_share(self, f: Callable[[np.ndarray], np.ndarray]) -> tuple[float, float]:
        """(estimate, absolute bound) of the mean of ``f(count of the row's key)`` over the n rows."""
        return est.row_share(self.counts(), self.theta, self.n, f, exact=not self.is_sketch)

    # -- algebra -----------------------------------------------------------------------
    def merge(self, other: FrequencyState) -> FrequencyState:  # type: ignore[override]
        if other.is_empty:  # the identity, whatever bound it was built with
            return self
        if self.is_empty:
            return other
        bound = _min_bound(self.max_groups, other.max_groups)
        n, total = self.n + other.n, self.total + other.total
        sums = _merged_sums(self.sums, other.sums)
        if isinstance(self, ExactFrequencies) and isinstance(other, ExactFrequencies):
            a, b = self.table, other.table
            # both tables are canonical, and so is the sum: not sorted a second time
            table = b if a is None else a if b is None else merge_canonical(a, b)
            if table is None:
                return ExactFrequencies(n=n, total=total, max_groups=bound, sums=sums)
            return FrequencyState.from_table(
                table, n=n, total=total, max_groups=bound, sums=sums, canonical=True
            )
        assert bound is not None  # a sample always has a bound
        scheme = V1 if V1 in (self.scheme, other.scheme) else SPARK
        k = sample_size(bound)
        pairs = [s.sample_parts(bound, scheme) for s in (self, other)]
        sample = merge_samples([p[0] for p in pairs], k)
        tops = [p[1] for p in pairs]
        top = merge_tops([t for t in tops if t is not None], k) if all(tops) else None
        return SampledFrequencies(n=n, total=total, max_groups=bound, sample=sample, top=top, sums=sums)

    # -- serialization -------------------------------------------------------------------
    @abstractmethod
    def _body(self) -> tuple[dict[str, Any], list[bytes]]:
        """(header fields beyond the common ones, blobs) of the payload."""

    def payload(self) -> bytes:
        """The payload bytes; computed once per state (states are immutable), so a state
        that did not change since the last commit (an empty microbatch, a window no row
        reached) is not serialized again."""
        cached: bytes | None = self.__dict__.get("_payload")
        if cached is None:
            cached = self._payload_now()
            self.__dict__["_payload"] = cached
        return cached

    def _payload_now(self) -> bytes:
        extra, blobs = self._body()
        header: dict[str, Any] = {"n": self.n, "total": self.total, "max_groups": self.max_groups, **extra}
        if self.sums is not None:
            header["sums"] = [self.sums.kept, self.sums.total]
        header["sizes"] = [len(b) for b in blobs]
        head = json.dumps(header, sort_keys=True, separators=(",", ":")).encode()
        return _LEN.pack(len(head)) + head + b"".join(blobs)

    @classmethod
    def from_payload(cls, payload: bytes, version: int) -> FrequencyState:
        try:
            (size,) = _LEN.unpack_from(payload)
            header = json.loads(payload[_LEN.size : _LEN.size + size])
            pos = _LEN.size + size
            blobs = []
            for length in header["sizes"]:
                blobs.append(payload[pos : pos + length])
                pos += length
            common: dict[str, Any] = {
                "n": header["n"],
                "total": header["total"],
                "max_groups": header["max_groups"],
            }
            if "sums" in header:
                if version < 3:
                    raise InvalidArgument(f"no sums in format version {version}")
                kept, all_rows = header["sums"]
                common["sums"] = Sums(
                    None if kept is None else int(kept), None if all_rows is None else int(all_rows)
                )
            kind = header["kind"]
            if kind == EXACT:
                return ExactFrequencies(**common, table=read_table(blobs[0]) if blobs else None)
            if kind == SAMPLE:
                scheme = header.get("hash", SPARK)
                if version < 2 or (scheme != SPARK and version < 3) or scheme not in (SPARK, V1):
                    raise InvalidArgument(f"no sample of hash {scheme!r} in format version {version}")
                sample = sample_from_table(read_table(blobs[0]), header["theta"], scheme)
                top = None
                if len(blobs) > 1:
                    floor = int(header.get("top_floor", 0))
                    top = Top(read_table(blobs[1]).combine_chunks(), int(header["top_threshold"]), floor)
                return SampledFrequencies(**common, sample=sample, top=top)
            if kind == SKETCH:
                sample, top = from_v1_sketch(blobs[0], blobs[1] if len(blobs) > 1 else None)
                return SampledFrequencies(**common, sample=sample, top=top)
            raise InvalidArgument(f"unknown kind {kind!r}")
        except (KeyError, IndexError, ValueError, TypeError, struct.error, pa.ArrowInvalid) as exc:
            raise StateFormatError(f"corrupt frequency state payload: {exc}") from exc

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.n, self.total, self.max_groups, len(self.counts())))


class ExactFrequencies(FrequencyState):
    """Every group of the grouping with its row count (``table``: ``k0.., count``; ``None``
    when no group was seen).

    Examples
    --------
    Merging adds the counts per key; past ``max_groups`` groups it becomes a sample:

    >>> import pyarrow as pa
    >>> def exact(keys, counts, max_groups=10):
    ...     table = pa.table({"k0": keys, "count": pa.array(counts, pa.int64())})
    ...     return FrequencyState.from_table(table, n=sum(counts), total=sum(counts), max_groups=max_groups)
    >>> merged = exact(["a", "b"], [2, 1]).merge(exact(["b", "c"], [1, 1]))
    >>> type(merged).__name__, merged.n, merged.table.to_pydict()
    ('ExactFrequencies', 5, {'k0': ['a', 'b', 'c'], 'count': [2, 2, 1]})
    >>> type(exact(["a", "b"], [2, 1], max_groups=1).merge(exact(["c"], [1], max_groups=1))).__name__
    'SampledFrequencies'
    """

    def __init__(
        self,
        *,
        n: int = 0,
        total: int = 0,
        max_groups: int | None = None,
        table: pa.Table | None = None,
        sums: Sums | None = None,
        canonical: bool = False,
    ) -> None:
        self.n = int(n)
        self.total = int(total)
        self.max_groups = max_groups
        self.sums = sums
        # a table without rows carries nothing but a schema: normalized away, so that all
        # states of zero groups are equal (and serialize equally); ``canonical``: the
        # caller's table is canonical already (a merge's sum), not sorted again
        if table is None or table.num_rows == 0:
            self.table = None
        else:
            self.table = table if canonical else canonical_table(table)

    @property
    def is_empty(self) -> bool:
        """No rows seen at all (the merge identity, whatever its key schema and weighting)."""
        return self.n == 0 and self.total == 0 and self.table is None

    @property
    def is_sketch(self) -> bool:
        return False

    @property
    def theta(self) -> float:
        return 1.0

    def counts(self) -> np.ndarray:
        if self.table is None:
            return np.zeros(0, dtype=np.int64)
        return np.asarray(self.table["count"].to_numpy(zero_copy_only=False), dtype=np.int64)

    def sample_parts(self, max_groups: int, scheme: str) -> tuple[Sample, Top | None]:
        """Computed once per (sample size, scheme): a microbatch's state merges into the
        total and into its window, so its keys are hashed once, not once per scope."""
        k = sample_size(max_groups)
        cache: dict[tuple[int, str], tuple[Sample, Top | None]] = self.__dict__.setdefault("_parts", {})
        parts = cache.get((k, scheme))
        if parts is None:
            parts = cache[(k, scheme)] = self._sample_parts_now(k, scheme)
        return parts

    def _sample_parts_now(self, k: int, scheme: str) -> tuple[Sample, Top | None]:
        table = self.table
        if table is None:  # no group: an empty top too, so a sample's top survives the merge
            empty = top_of(pa.array([], pa.string()), np.zeros(0, np.int64), k, complete=True)
            return sample_of(np.zeros(0, np.int64), np.zeros(0, np.int64), k, scheme=scheme), empty
        key_columns = [table[c] for c in key_names(table)]
        counts = self.counts()
        hashes = key_hashes(key_columns) if scheme == SPARK else None
        if hashes is None:
            hashes, counts = v1_hashes(key_columns, counts)
        sample = sample_of(hashes, counts, k, scheme=scheme)
        top = None
        if len(key_columns) == 1 and pa.types.is_string(key_columns[0].type):
            top = top_of(key_columns[0].combine_chunks(), self._values(), k, complete=True)
        return sample, top

    def _values(self) -> np.ndarray:
        """The bins' ranking values: counts, or a weighted state's sums (NULL as 0)."""
        if self.sums is None or self.table is None:
            return self.counts()
        return np.asarray(self.table["sum"].fill_null(0).to_numpy(zero_copy_only=False), dtype=np.int64)

    def top_items(self, limit: int) -> tuple[list[tuple[str, int]], float]:
        """Exact: single-column tables only (keys as strings), no error."""
        if self.table is None:
            return [], 0.0
        keys = key_names(self.table)
        value = "count" if self.sums is None else "sum"
        ordered = self.table.sort_by([(value, "descending"), (keys[0], "ascending")])  # NULL sums last
        head = ordered.slice(0, limit)
        names = [str(k) for k in head[keys[0]].to_pylist()]
        values = (int(v or 0) for v in head[value].to_pylist())
        return list(zip(names, values, strict=True)), 0.0

    def _body(self) -> tuple[dict[str, Any], list[bytes]]:
        return {"kind": EXACT}, [] if self.table is None else [table_bytes(self.table)]

    def __eq__(self, other: object) -> bool:
        """Equal counts, totals, bound and groups (tables compared by value, not bytes:
        Arrow buffers may differ in padding and in slots under NULLs)."""
        if not isinstance(other, ExactFrequencies):
            return False
        if (self.n, self.total, self.max_groups, self.sums) != (
            other.n,
            other.total,
            other.max_groups,
            other.sums,
        ):
            return False
        if self.table is None or other.table is None:
            return self.table is None and other.table is None
        return bool(self.table.equals(other.table))

    __hash__ = FrequencyState.__hash__

    def __repr__(self) -> str:
        rows = 0 if self.table is None else self.table.num_rows
        return f"ExactFrequencies[{rows}](n={self.n}, total={self.total}, max_groups={self.max_groups})"


class SampledFrequencies(FrequencyState):
    """The bounded form: a ``Sample`` of the distinct keys with exact counts, and for string
    groupings the ``Top`` keys with count bounds.

    Examples
    --------
    A table with more groups than ``max_groups`` is kept as a bounded sample; every metric
    from it is approximate, and ``n`` stays exact:

    >>> import pyarrow as pa
    >>> keys = [f"k{i}" for i in range(500)]
    >>> table = pa.table({"k0": keys, "count": pa.array([2] * 500, pa.int64())})
    >>> sampled = FrequencyState.from_table(table, n=1000, total=1000, max_groups=50)
    >>> type(sampled).__name__, sampled.approximate, sampled.n, len(sampled.counts()) < 500
    ('SampledFrequencies', True, 1000, True)
    >>> sampled.merge(sampled).n
    2000
    """

    def __init__(
        self,
        *,
        n: int,
        total: int,
        max_groups: int | None,
        sample: Sample,
        top: Top | None = None,
        sums: Sums | None = None,
    ) -> None:
        if max_groups is None:
            raise InvalidArgument("a sampled FrequencyState needs max_groups")
        self.n = int(n)
        self.total = int(total)
        self.max_groups = max_groups
        self.sums = sums
        self.sample = sample
        self.top = top

    @property
    def is_empty(self) -> bool:
        return False

    @property
    def is_sketch(self) -> bool:
        return True

    @property
    def theta(self) -> float:
        return self.sample.theta

    @property
    def scheme(self) -> str:
        return self.sample.scheme

    def counts(self) -> np.ndarray:
        return self.sample.counts

    def sample_parts(self, max_groups: int, scheme: str) -> tuple[Sample, Top | None]:
        k = sample_size(max_groups)
        top = None if self.top is None else merge_tops([self.top], k)
        return normalized(self.sample, k), top

    def top_items(self, limit: int) -> tuple[list[tuple[str, int]], float]:
        """Lower bounds of the heaviest counts (``Top``); the error is the widest upper-lower gap."""
        if self.top is None:
            raise InvalidArgument("this sample-form state has no top-keys table (not a string grouping)")
        head = self.top.table.slice(0, limit)
        gaps = pc.subtract(head["hi"], head["lo"])
        err = float(pc.max(gaps).as_py() or 0) if head.num_rows else float(self.top.threshold)
        pairs = zip(head["key"].to_pylist(), head["lo"].to_pylist(), strict=True)
        return [(str(k), int(v)) for k, v in pairs], err

    def _body(self) -> tuple[dict[str, Any], list[bytes]]:
        header: dict[str, Any] = {"kind": SAMPLE, "theta": self.sample.theta_u}
        if self.sample.scheme != SPARK:
            header["hash"] = self.sample.scheme
        blobs = [table_bytes(self.sample.to_table())]
        if self.top is not None:
            header["top_threshold"] = self.top.threshold
            if self.top.floor:
                header["top_floor"] = self.top.floor
            blobs.append(table_bytes(self.top.table))
        return header, blobs

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SampledFrequencies):
            return False
        return (self.n, self.total, self.max_groups, self.sums, self.sample, self.top) == (
            other.n,
            other.total,
            other.max_groups,
            other.sums,
            other.sample,
            other.top,
        )

    __hash__ = FrequencyState.__hash__

    def __repr__(self) -> str:
        return (
            f"SampledFrequencies[{len(self.sample)}, theta={self.sample.theta:.3g}, {self.sample.scheme}]"
            f"(n={self.n}, total={self.total}, max_groups={self.max_groups})"
        )
