"""``median`` and ``numericHistogram`` of a numeric column, on a KLL sketch (CDAP's library).

Both keep the analyzers' ``KllState`` (an Apache DataSketches KLL doubles sketch, bounded by
``k``), so they are approximate and combinable: the median or histogram over any range of
windows comes from the merged sketch. Non-finite values are skipped like NULL. Both forms:
datasketches over the Arrow column on the small-batch path, ``kll_sketch_agg_double`` in the
fused Spark ``agg``. Params: ``k`` (8..65535, default 200; the sketch's accuracy).

* ``median``: the smallest retained value whose normalized rank is >= 0.5 (a value of the
  data); ``error_bound`` is the sketch's normalized rank error (~1.3% at k = 200).
* ``numericHistogram``: ``bins`` (1..1000, default 10) equal-width buckets between the
  sketch's minimum and maximum (both exact), with counts from the sketch's PMF. Value:
  ``{"n": count, "buckets": [{"low", "high", "count"}, ...]}``; a bucket holds
  ``low <= x < high``, the last one also ``x == high``. ``error_bound`` is the PMF's
  normalized rank error: a bucket's count is within ``error_bound * n`` (+1 for rounding).

Zero values -> the metric fails as empty.

>>> import pyarrow as pa
>>> s = Median.from_arrow(pa.array([1.0, 2.0, 3.0]), {}).merge(Median.from_arrow(pa.array([4, 5]), {}))
>>> s.value({})
3.0
>>> h = NumericHistogram.from_arrow(pa.array([0.0, 1.0, 2.0, 3.0, 9.0, 10.0]), {"bins": 2})
>>> [b["count"] for b in h.value({"bins": 2})["buckets"]]
[4, 2]
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Self

import datasketches as ds
import numpy as np
import pyarrow as pa
from pyspark.sql import Column
from pyspark.sql import functions as F

from streamdq.aggregations.moments import finite_double, finite_floats
from streamdq.analyzers.aggregation import Aggregation, EmptyInput
from streamdq.analyzers.sketch_states import KllState

DEFAULT_K, MIN_K, MAX_K = 200, 8, 65535
DEFAULT_BINS, MAX_BINS = 10, 1000


def _int_param(params: Mapping[str, Any], name: str, default: int, low: int, high: int) -> str | None:
    v = params.get(name, default)
    if isinstance(v, bool) or not isinstance(v, int) or not low <= v <= high:
        return f"params.{name} must be an integer in {low}..{high}, got {v!r}"
    return None


@dataclass(frozen=True)
class _KllAggregation(Aggregation):
    """A KLL doubles sketch of the finite values."""

    approximate = True
    input_type = "numeric"
    PARAMS: ClassVar[tuple[str, ...]] = ("k",)
    sketch: KllState = field(default_factory=KllState)

    @classmethod
    def empty(cls) -> Self:
        return cls()

    def merge(self, other: Self) -> Self:
        return type(self)(self.sketch.merge(other.sketch))

    @classmethod
    def from_arrow(cls, values: pa.Array, params: Mapping[str, Any]) -> Self:
        x = finite_floats(values)
        if x.size == 0:
            return cls()
        sk = ds.kll_doubles_sketch(int(params.get("k", DEFAULT_K)))
        sk.update(np.ascontiguousarray(x, dtype=np.float64))
        return cls(KllState.of_sketch(sk))

    @classmethod
    def spark_aggregations(cls, column: Column, params: Mapping[str, Any]) -> list[Column]:
        return [F.kll_sketch_agg_double(finite_double(column), int(params.get("k", DEFAULT_K)))]

    @classmethod
    def from_spark(cls, row: Sequence[Any], params: Mapping[str, Any]) -> Self:
        return cls(KllState.from_sketch_bytes(row[0]))

    def payload(self) -> bytes:
        return self.sketch.payload()

    @classmethod
    def from_payload(cls, payload: bytes, version: int) -> Self:
        return cls(KllState.from_payload(payload, KllState.FORMAT_VERSION))

    @classmethod
    def validate_params(cls, params: Mapping[str, Any]) -> str | None:
        unknown = sorted(set(params) - set(cls.PARAMS))
        if unknown:
            return f"{cls.metric_name()} takes params {', '.join(cls.PARAMS)}; unknown: {', '.join(unknown)}"
        return _int_param(params, "k", DEFAULT_K, MIN_K, MAX_K)

    def _sketch(self) -> ds.kll_doubles_sketch:
        if not self.sketch.sketch:
            raise EmptyInput("no finite value")
        return self.sketch.kll()


@dataclass(frozen=True)
class Median(_KllAggregation):
    """The approximate median (see the module docstring).

    Examples
    --------
    The Spark path's sketch bytes and the Arrow path's values merge:

    >>> import datasketches as ds
    >>> import pyarrow as pa
    >>> sk = ds.kll_doubles_sketch(200)
    >>> for v in (10.0, 20.0):
    ...     sk.update(v)
    >>> Median.from_spark([sk.serialize()], {}).merge(Median.from_arrow(pa.array([30.0]), {})).value({})
    20.0
    """

    NAME = "median"
    TYPE_TAG = "agg.Median"

    def value(self, params: Mapping[str, Any]) -> float:
        return float(self._sketch().get_quantile(0.5, True))

    def error_bound(self, params: Mapping[str, Any]) -> float | None:
        return self.sketch.rank_error()

    @classmethod
    def _unit_test_params(cls) -> Iterator[dict[str, Any]]:
        yield {}
        yield {"k": 16}

    def _unit_test_bounds(self, values: pa.Array, params: Mapping[str, Any]) -> str | None:
        x = np.sort(finite_floats(values))
        if x.size == 0:
            return None
        v = self.value(params)
        eps = float(self.error_bound(params) or 0.0)
        below, upto = np.searchsorted(x, v, "left") / x.size, np.searchsorted(x, v, "right") / x.size
        if below - eps <= 0.5 <= upto + eps:
            return None
        return f"median {v} has rank [{below}, {upto}], not within {eps} of 0.5"


@dataclass(frozen=True)
class NumericHistogram(_KllAggregation):
    """Equal-width buckets between the sketch's min and max (see the module docstring).

    Examples
    --------
    Two windows merged; two equal-width buckets between the exact minimum and maximum:

    >>> import pyarrow as pa
    >>> a = NumericHistogram.from_arrow(pa.array([0.0, 1.0, 2.0]), {})
    >>> h = a.merge(NumericHistogram.from_arrow(pa.array([3.0, 9.0, 10.0]), {})).value({"bins": 2})
    >>> h["n"], [(b["low"], b["high"], b["count"]) for b in h["buckets"]]
    (6, [(0.0, 5.0, 4), (5.0, 10.0, 2)])
    """

    NAME = "numericHistogram"
    TYPE_TAG = "agg.NumericHistogram"
    PARAMS: ClassVar[tuple[str, ...]] = ("k", "bins")

    @classmethod
    def validate_params(cls, params: Mapping[str, Any]) -> str | None:
        return super().validate_params(params) or _int_param(params, "bins", DEFAULT_BINS, 1, MAX_BINS)

    @staticmethod
    def edges(low: float, high: float, bins: int) -> list[float]:
        """The ``bins + 1`` bucket edges from ``low`` to ``high`` (one bucket when they are equal)."""
        if low == high:
            return [low, high]
        return [float(e) for e in np.linspace(low, high, bins + 1)]

    def value(self, params: Mapping[str, Any]) -> dict[str, Any]:
        sk = self._sketch()
        n = int(sk.n)
        edges = self.edges(
            float(sk.get_min_value()), float(sk.get_max_value()), int(params.get("bins", DEFAULT_BINS))
        )
        if len(edges) == 2:
            masses = [1.0]
        else:
            masses = list(sk.get_pmf(edges[1:-1], False))
        buckets = [
            {"low": edges[i], "high": edges[i + 1], "count": int(round(masses[i] * n))}
            for i in range(len(edges) - 1)
        ]
        return {"n": n, "buckets": buckets}

    def error_bound(self, params: Mapping[str, Any]) -> float | None:
        if not self.sketch.sketch:
            return 0.0
        return float(self.sketch.kll().normalized_rank_error(True))

    @classmethod
    def _unit_test_params(cls) -> Iterator[dict[str, Any]]:
        yield {"bins": 5}
        yield {"bins": 1, "k": 16}

    def _unit_test_bounds(self, values: pa.Array, params: Mapping[str, Any]) -> str | None:
        x = finite_floats(values)
        if x.size == 0:
            return None
        got = self.value(params)
        edges = self.edges(float(x.min()), float(x.max()), int(params.get("bins", DEFAULT_BINS)))
        index = np.searchsorted(np.asarray(edges[1:-1]), x, side="right")
        exact = np.bincount(index, minlength=len(edges) - 1)
        allowed = float(self.error_bound(params) or 0.0) * x.size + 1
        for bucket, want in zip(got["buckets"], exact.tolist(), strict=True):
            if abs(bucket["count"] - want) > allowed:
                return f"bucket [{bucket['low']}, {bucket['high']}] has {bucket['count']}, exact {want} (allowed +-{allowed})"
        return None
