"""Sketch states: Apache DataSketches HLL (distinct counts) and KLL (quantiles).

Where they run: the sketches are BUILT inside the fused Spark ``agg`` by Spark's own
aggregates (``hll_sketch_agg`` with lgConfigK 12 over a canonicalized column,
``kll_sketch_agg_double`` over the column cast to double), which return the sketches'
standard serialized bytes; on the driver those bytes are deserialized and MERGED with
the ``datasketches`` package (``hll_union``, ``kll_doubles_sketch.merge``).

Contract: the states hold the serialized sketch (immutable bytes); ``b""`` is the empty
state and any sketch that saw no value is normalised to it, so merging with an empty
state returns the other state unchanged (identity). Merges are commutative and
associative up to the sketch's randomized compaction: estimates stay within the sketch's
own error bounds (tests/laws/test_sketch_state_bounds.py), not byte-equal. The payload
of ``to_bytes`` is the sketch's own serialization (compact HLL; KLL), versioned by the
state header. Sizes are bounded by lgConfigK / k, independent of the input size.
"""

from __future__ import annotations

from abc import abstractmethod
from dataclasses import dataclass
from typing import Self

import datasketches as ds

from streamdq.analyzers.state import State

HLL_LG_K = 12
HLL_CONFIDENCE_STDDEVS = 2  # error_bound of distinct counts: ~95% two-sided interval


@dataclass(frozen=True)
class SketchState(State):
    """A serialized DataSketches sketch, immutable bytes (``b""`` = no value seen): the shared
    part of ``HllState`` and ``KllState``.

    The empty state is the merge identity, so ``merge`` unites two sketches only when both
    saw a value (``union``, the subclass's DataSketches merge); the payload is the sketch's
    own serialization, read back through ``from_sketch_bytes``, which normalises a sketch
    that saw nothing to the empty state.
    """

    sketch: bytes = b""

    @classmethod
    def empty(cls) -> Self:
        return cls(b"")

    @classmethod
    @abstractmethod
    def from_sketch_bytes(cls, data: bytes | bytearray | None) -> Self:
        """State of sketch bytes produced by Spark or datasketches (None / empty sketch -> empty)."""

    @abstractmethod
    def union(self, other: Self) -> Self:
        """The DataSketches merge of two states that both saw a value."""

    def merge(self, other: Self) -> Self:
        if not other.sketch:
            return self
        if not self.sketch:
            return other
        return self.union(other)

    def payload(self) -> bytes:
        return self.sketch

    @classmethod
    def from_payload(cls, payload: bytes, version: int) -> Self:
        return cls.from_sketch_bytes(payload)


@dataclass(frozen=True)
class HllState(SketchState):
    """A serialized HLL sketch (``b""`` = no value seen).

    Examples
    --------
    Two batches' sketches (as Spark's ``hll_sketch_agg`` returns them) merge by union:

    >>> import datasketches as ds
    >>> def sketch(values):
    ...     sk = ds.hll_sketch(HLL_LG_K)
    ...     for v in values:
    ...         sk.update(v)
    ...     return HllState.of_sketch(sk)
    >>> sketch(["a", "b"]).merge(sketch(["b", "c"])).estimate()
    3.0
    >>> HllState.empty().estimate()
    0.0
    """

    TYPE_TAG = "HllSketch"

    @classmethod
    def from_sketch_bytes(cls, data: bytes | bytearray | None) -> Self:
        """State of sketch bytes produced by Spark or datasketches (None / empty sketch -> empty)."""
        if not data:
            return cls.empty()
        sk = ds.hll_sketch.deserialize(bytes(data))
        if sk.is_empty():
            return cls.empty()
        return cls(bytes(sk.serialize_compact()))

    @classmethod
    def of_sketch(cls, sketch: ds.hll_sketch) -> Self:
        return cls.empty() if sketch.is_empty() else cls(bytes(sketch.serialize_compact()))

    def hll(self) -> ds.hll_sketch:
        """A fresh deserialized sketch (callers may mutate it)."""
        if not self.sketch:
            return ds.hll_sketch(HLL_LG_K)
        return ds.hll_sketch.deserialize(self.sketch)

    def union(self, other: Self) -> Self:
        a, b = self.hll(), other.hll()
        union = ds.hll_union(max(a.lg_config_k, b.lg_config_k))
        union.update(a)
        union.update(b)
        return type(self).of_sketch(union.get_result(a.tgt_type))

    def estimate(self) -> float:
        """The distinct-count estimate, rounded to an integer (exact for small inputs)."""
        if not self.sketch:
            return 0.0
        return float(round(self.hll().get_estimate()))

    def relative_error(self) -> float:
        """Relative half-width of the sketch's ~95% confidence interval around the estimate."""
        if not self.sketch:
            return 0.0
        sk = self.hll()
        est = sk.get_estimate()
        if est <= 0.0:
            return 0.0
        lo = sk.get_lower_bound(HLL_CONFIDENCE_STDDEVS)
        hi = sk.get_upper_bound(HLL_CONFIDENCE_STDDEVS)
        return max(hi - est, est - lo) / est

    def bounds(self, num_std_devs: int) -> tuple[float, float]:
        sk = self.hll()
        return sk.get_lower_bound(num_std_devs), sk.get_upper_bound(num_std_devs)


@dataclass(frozen=True)
class KllState(SketchState):
    """A serialized KLL doubles sketch (``b""`` = no value seen).

    Examples
    --------
    Two batches' sketches (as Spark's ``kll_sketch_agg_double`` returns them) merge:

    >>> import datasketches as ds
    >>> def sketch(values):
    ...     sk = ds.kll_doubles_sketch(200)
    ...     for v in values:
    ...         sk.update(v)
    ...     return KllState.of_sketch(sk)
    >>> merged = sketch([1.0, 2.0, 3.0]).merge(sketch([4.0, 5.0, 6.0]))
    >>> merged.n, merged.quantile(0.5)  # an element of the data, not 3.5
    (6, 3.0)
    """

    TYPE_TAG = "KllDoublesSketch"

    @classmethod
    def from_sketch_bytes(cls, data: bytes | bytearray | None) -> Self:
        """State of sketch bytes produced by Spark or datasketches (None / empty sketch -> empty)."""
        if not data:
            return cls.empty()
        sk = ds.kll_doubles_sketch.deserialize(bytes(data))
        return cls.of_sketch(sk)

    @classmethod
    def of_sketch(cls, sketch: ds.kll_doubles_sketch) -> Self:
        return cls.empty() if sketch.is_empty() else cls(bytes(sketch.serialize()))

    def kll(self) -> ds.kll_doubles_sketch:
        """A fresh deserialized sketch (callers may mutate it)."""
        if not self.sketch:
            return ds.kll_doubles_sketch()
        return ds.kll_doubles_sketch.deserialize(self.sketch)

    def union(self, other: Self) -> Self:
        merged = self.kll()
        merged.merge(other.kll())
        return type(self).of_sketch(merged)

    @property
    def n(self) -> int:
        return 0 if not self.sketch else int(self.kll().n)

    def quantile(self, q: float) -> float:
        """The smallest retained value whose inclusive normalized rank is >= q (an element of the data)."""
        return float(self.kll().get_quantile(q, True))

    def rank_error(self) -> float:
        """The sketch's normalized rank error for single quantile queries (~99% confidence)."""
        if not self.sketch:
            return 0.0
        return float(self.kll().normalized_rank_error(False))
