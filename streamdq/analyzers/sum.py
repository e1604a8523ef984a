"""Sum of a numeric column over the non-NULL values in scope.

Runs in the fused scan as ``sum(double)`` and ``count``; states merge by adding both.
No non-NULL value in scope (empty input, all NULL, or all filtered) -> Failure (empty).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql.types import StructType

from streamdq.analyzers.base import ScanShareableAnalyzer, conditional, register_analyzer
from streamdq.analyzers.basic_states import SumState
from streamdq.analyzers.metric import Metric
from streamdq.analyzers.numeric import finite_value, numeric_precondition
from streamdq.analyzers.row_aggregate import RowAggregate, of
from streamdq.analyzers.state import State


@register_analyzer
@dataclass(frozen=True)
class Sum(ScanShareableAnalyzer):
    """Σ of non-NULL values in scope. Numeric columns only; all-NULL -> Failure (empty)."""

    NAME = "Sum"
    column: str
    where: str | None = None

    def preconditions(self, schema: StructType) -> str | None:
        return super().preconditions(schema) or numeric_precondition(self, schema, self.column)

    def row_aggregations(self, schema: StructType) -> list[RowAggregate]:
        value = conditional(finite_value(schema, self.column), self.where)
        return [of("sum", value), of("count", value)]

    def state_from(self, row: Sequence[Any], offset: int) -> State:
        return SumState(float(row[offset] or 0.0), int(row[offset + 1] or 0))

    def empty_state(self) -> State:
        return SumState.empty()

    def metric(self, state: State) -> Metric:
        assert isinstance(state, SumState)
        if state.n == 0:
            return self.empty_failure()
        return self.ok(state.total)
