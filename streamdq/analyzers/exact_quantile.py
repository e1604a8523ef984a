"""ExactQuantile: the exact q-quantile of a numeric column (Deequ's ExactQuantile). NOT mergeable.

Computed in the scan as Spark's ``percentile(value, q)`` over the column cast to double
(NULL, out-of-scope and non-finite values skipped): position (n - 1) * q in the sorted
values, linearly interpolated between its neighbours (numpy's default; the median of 1..6
is 3.5, the 0.25-quantile 2.25). The small-batch Arrow path computes the same formula with
numpy (``row_aggregate.exact_percentile``), so both paths agree to the bit.

**Not mergeable.** An exact quantile of a union cannot be computed from the quantiles of
its parts, so the state (``ExactQuantileState``) holds the one value of ONE scan; merging
two non-empty states gives a state that says so (NaN inside), and its metric is a Failure
naming the reason. It therefore works where the data are scanned at once: ``verify`` and a
streaming check at ``scope: batch`` when the job has no event-time windows (a microbatch
spanning two windows is two scans). Window and total scopes fail on purpose: use
ApproxQuantile (KLL, mergeable) there. Every successful metric carries
``extra={"mergeable": False}``.

A quantile outside [0, 1] -> Failure (precondition, Deequ's message); numeric columns only;
no finite value in scope -> Failure (empty).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Self

from pyspark.sql.types import StructType

from streamdq.analyzers.base import ScanShareableAnalyzer, conditional
from streamdq.analyzers.metric import Metric
from streamdq.analyzers.numeric import finite_value, numeric_precondition
from streamdq.analyzers.row_aggregate import RowAggregate, of
from streamdq.analyzers.state import JsonState, State

NOT_MERGEABLE = (
    "ExactQuantile is not mergeable: this scope merges several scans (batches or windows); "
    "use it in verify or at batch scope, or ApproxQuantile for window and total scopes"
)


def quantile_problem(q: Any) -> str | None:
    """Deequ's parameter failure for a quantile outside [0, 1] (None when it is fine)."""
    if isinstance(q, bool) or not isinstance(q, int | float) or not 0.0 <= float(q) <= 1.0:
        return f"Quantile parameter must be in the closed interval [0, 1]. Currently, the value is: {q!r}"
    return None


@dataclass(frozen=True)
class ExactQuantileState(JsonState):
    """The exact quantile of one scan (None: nothing seen; NaN: several scans were merged).

    Examples
    --------
    >>> ExactQuantileState(3.5).merge(ExactQuantileState.empty())
    ExactQuantileState(value=3.5)
    >>> ExactQuantileState(3.5).merge(ExactQuantileState(2.0)).merged  # two scans: no quantile
    True
    """

    TYPE_TAG = "ExactQuantile"
    value: float | None = None

    @classmethod
    def empty(cls) -> Self:
        return cls(None)

    def merge(self, other: Self) -> Self:
        if self.value is None:
            return other
        if other.value is None:
            return self
        return type(self)(math.nan)

    @property
    def merged(self) -> bool:
        return self.value is not None and math.isnan(self.value)


@dataclass(frozen=True)
class ExactQuantile(ScanShareableAnalyzer):
    """The exact, interpolated q-quantile of one scan (not mergeable, see the module doc).

    Examples
    --------
    The state is the scan's ``percentile``; merging two scans fails on purpose:

    >>> q = ExactQuantile("x", 0.5)
    >>> q.metric(q.state_from([3.5], 0)).value
    3.5
    >>> q.metric(q.state_from([3.5], 0).merge(q.state_from([2.0], 0))).failure.startswith("ExactQuantile is not mergeable")
    True
    """

    NAME = "ExactQuantile"
    column: str
    quantile: float
    where: str | None = None

    def preconditions(self, schema: StructType) -> str | None:
        return (
            quantile_problem(self.quantile)
            or super().preconditions(schema)
            or numeric_precondition(self, schema, self.column)
        )

    def row_aggregations(self, schema: StructType) -> list[RowAggregate]:
        value = conditional(finite_value(schema, self.column), self.where)
        return [of("percentile", value, float(self.quantile))]

    def state_from(self, row: Sequence[Any], offset: int) -> State:
        value = row[offset]
        return ExactQuantileState(None if value is None else float(value))

    def empty_state(self) -> State:
        return ExactQuantileState.empty()

    def metric(self, state: State) -> Metric:
        assert isinstance(state, ExactQuantileState)
        problem = quantile_problem(self.quantile)
        if problem:
            return self.failed(problem)
        if state.value is None:
            return self.empty_failure()
        if state.merged:
            return self.failed(NOT_MERGEABLE)
        return self.ok(state.value, extra={"mergeable": False})
