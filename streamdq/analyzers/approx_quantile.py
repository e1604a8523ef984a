"""ApproxQuantile / ApproxQuantiles: quantiles of a numeric column from a KLL sketch.

Runs in the fused scan as Spark's ``kll_sketch_agg_double(value, k)`` over the column
cast to double (NULL and out-of-scope rows skipped); states (``KllState``) merge on the
driver with ``kll_doubles_sketch.merge``. The value for quantile q is the smallest
retained element whose inclusive normalized rank is >= q, i.e. an element of the data
(for n <= k the sketch is exact and this is the ceil(q*n)-th smallest: the median of
1..6 is 3, as in the reference).

Deliberate difference from the reference (Deequ uses Spark's ``percentile_approx``, a
Greenwald-Khanna summary with relativeError 0.01): GK summaries do not merge across
microbatches and windows, KLL sketches do. The guarantee is therefore KLL's: the rank of
the returned value is within ``error_bound`` = the sketch's normalized rank error
(~1.3% at k = 200, ~99% confidence) of q, rather than GK's deterministic relativeError.
``k`` (8..65535) sets the accuracy; or give Deequ's ``relative_error`` instead (a number in
(0, 1]; outside -> Failure with Deequ's message, 0 included since a sketch cannot be exact):
it is mapped to the smallest k whose normalized rank error (single quantile, ~99% confidence,
``kll_doubles_sketch.get_normalized_rank_error(k, False)``) is at most ``relative_error``,
clamped to [8, 65535] (0.01 -> k = 269; 0.05 -> k = 52; below ~4.8e-5 the cap k = 65535
applies). When given, it replaces ``k``. The two guarantees differ in kind: GK's relativeError
bounds the rank error deterministically, KLL's with ~99% probability.

A quantile outside [0, 1] or a bad ``k`` -> Failure (precondition); numeric columns
only; no non-NULL value in scope -> Failure (empty). ApproxQuantiles' value is
``{repr(q): value}`` (e.g. ``{"0.5": 3.0}``).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import datasketches as ds
from pyspark.sql.types import StructType

from streamdq.analyzers.base import ScanShareableAnalyzer, conditional
from streamdq.analyzers.metric import Metric, Quantiles
from streamdq.analyzers.numeric import numeric_precondition, sketch_value
from streamdq.analyzers.row_aggregate import RowAggregate, of
from streamdq.analyzers.sketch_states import KllState
from streamdq.analyzers.state import State

MIN_K, MAX_K = 8, 65535


def _quantile_problem(q: Any) -> str | None:
    if isinstance(q, bool) or not isinstance(q, int | float) or not 0.0 <= float(q) <= 1.0:
        return f"Quantile parameter must be in the closed interval [0, 1]. Currently, the value is: {q!r}"
    return None


def k_problem(k: Any) -> str | None:
    """The failure for a KLL ``k`` outside [8, 65535] (None when it is fine)."""
    if isinstance(k, bool) or not isinstance(k, int) or not MIN_K <= k <= MAX_K:
        return f"KLL parameter k must be an integer in [{MIN_K}, {MAX_K}]. Currently, the value is: {k!r}"
    return None


def relative_error_problem(relative_error: Any) -> str | None:
    """Deequ's failure for a relative error outside (0, 1] (None when it is fine or absent)."""
    if relative_error is None:
        return None
    e = relative_error
    if isinstance(e, bool) or not isinstance(e, int | float) or not 0.0 < float(e) <= 1.0:
        return (
            "Relative error parameter must be in the interval (0, 1]. "
            f"Currently, the value is: {relative_error!r}"
        )
    return None


@lru_cache(maxsize=64)
def k_for_relative_error(relative_error: float) -> int:
    """The smallest KLL k in [8, 65535] whose normalized rank error is <= ``relative_error``."""
    error = ds.kll_doubles_sketch.get_normalized_rank_error
    if error(MAX_K, False) > relative_error:
        return MAX_K
    lo, hi = MIN_K, MAX_K
    while lo < hi:
        mid = (lo + hi) // 2
        if error(mid, False) <= relative_error:
            hi = mid
        else:
            lo = mid + 1
    return lo


def _effective_k(k: int, relative_error: float | None) -> int:
    if relative_error is None or relative_error_problem(relative_error):
        return k
    return k_for_relative_error(float(relative_error))


def _spec_without_default_error(spec: dict[str, Any]) -> dict[str, Any]:
    if spec.get("relative_error") is None:
        spec.pop("relative_error", None)
    return spec


def _kll_aggregation(schema: StructType, column: str, k: int, where: str | None) -> RowAggregate:
    return of("kll", conditional(sketch_value(schema, column), where), k)


@dataclass(frozen=True)
class KllAnalyzer(ScanShareableAnalyzer):
    """A statistic of a numeric column's KLL sketch: ApproxQuantile, ApproxQuantiles and
    ``interquartile_range.InterquartileRange``.

    The sketch the scan's ``kll_sketch_agg_double`` returns is the state (``KllState``,
    merged by the sketch's own merge); no value in scope -> Failure (empty); a subclass reads
    its metric off a sketch that saw a value (``sketch_metric``).
    """

    def state_from(self, row: Sequence[Any], offset: int) -> State:
        return KllState.from_sketch_bytes(row[offset])

    def empty_state(self) -> State:
        return KllState.empty()

    def metric(self, state: State) -> Metric:
        assert isinstance(state, KllState)
        if not state.sketch:
            return self.empty_failure()
        return self.sketch_metric(state)

    @abstractmethod
    def sketch_metric(self, state: KllState) -> Metric:
        """The metric of a sketch that saw at least one value."""


@dataclass(frozen=True)
class ApproxQuantile(KllAnalyzer):
    """The q-quantile of a numeric column (KLL; approximate, with its rank error bound).

    Examples
    --------
    A batch's state is the KLL sketch the scan returns (bytes); states merge:

    >>> import datasketches as ds
    >>> def scanned(values):
    ...     sk = ds.kll_doubles_sketch(200)
    ...     for v in values:
    ...         sk.update(v)
    ...     return [sk.serialize()]
    >>> q = ApproxQuantile("x", 0.5)
    >>> m = q.metric(q.state_from(scanned([1.0, 2.0, 3.0]), 0).merge(q.state_from(scanned([4.0, 5.0, 6.0]), 0)))
    >>> m.value, m.approximate  # an element of the data: the median of 1..6 is 3
    (3.0, True)
    """

    NAME = "ApproxQuantile"
    column: str
    quantile: float
    k: int = 200
    where: str | None = None
    relative_error: float | None = None

    def to_spec(self) -> dict[str, Any]:
        return _spec_without_default_error(super().to_spec())

    def preconditions(self, schema: StructType) -> str | None:
        return (
            _quantile_problem(self.quantile)
            or relative_error_problem(self.relative_error)
            or k_problem(self.k)
            or super().preconditions(schema)
            or numeric_precondition(self, schema, self.column)
        )

    def row_aggregations(self, schema: StructType) -> list[RowAggregate]:
        k = _effective_k(self.k, self.relative_error)
        return [_kll_aggregation(schema, self.column, k, self.where)]

    def sketch_metric(self, state: KllState) -> Metric:
        return self.ok(state.quantile(float(self.quantile)), approximate=True, error_bound=state.rank_error())


@dataclass(frozen=True)
class ApproxQuantiles(KllAnalyzer):
    """Several quantiles of a numeric column from one KLL sketch: ``{repr(q): value}``.

    Examples
    --------
    One KLL sketch answers every quantile:

    >>> import datasketches as ds
    >>> sk = ds.kll_doubles_sketch(200)
    >>> for v in range(1, 11):
    ...     sk.update(float(v))
    >>> q = ApproxQuantiles("x", (0.1, 0.9))
    >>> q.metric(q.state_from([sk.serialize()], 0).merge(q.empty_state())).value
    {'0.1': 1.0, '0.9': 9.0}
    """

    NAME = "ApproxQuantiles"
    column: str
    quantiles: tuple[float, ...]
    k: int = 200
    where: str | None = None
    relative_error: float | None = None

    def to_spec(self) -> dict[str, Any]:
        return _spec_without_default_error(super().to_spec())

    def preconditions(self, schema: StructType) -> str | None:
        if not self.quantiles:
            return "ApproxQuantiles needs at least one quantile"
        for q in self.quantiles:
            problem = _quantile_problem(q)
            if problem:
                return problem
        return (
            relative_error_problem(self.relative_error)
            or k_problem(self.k)
            or super().preconditions(schema)
            or numeric_precondition(self, schema, self.column)
        )

    def row_aggregations(self, schema: StructType) -> list[RowAggregate]:
        k = _effective_k(self.k, self.relative_error)
        return [_kll_aggregation(schema, self.column, k, self.where)]

    def sketch_metric(self, state: KllState) -> Metric:
        sk = state.kll()
        values = Quantiles.of((q, sk.get_quantile(float(q), True)) for q in self.quantiles)
        return self.ok(values, approximate=True, error_bound=state.rank_error())
