"""Maximum of a numeric column over the non-NULL values in scope.

Runs in the fused scan as ``max(double)``; states merge by taking the max. No non-NULL
value in scope (empty input, all NULL, or all filtered) -> Failure (empty).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql.types import StructType

from streamdq.analyzers.base import ScanShareableAnalyzer, conditional, register_analyzer
from streamdq.analyzers.basic_states import MaxState
from streamdq.analyzers.metric import Metric
from streamdq.analyzers.numeric import finite_value, numeric_precondition
from streamdq.analyzers.row_aggregate import RowAggregate, of
from streamdq.analyzers.state import State


@register_analyzer
@dataclass(frozen=True)
class Maximum(ScanShareableAnalyzer):
    """Largest non-NULL value in scope, as a float. Numeric columns only."""

    NAME = "Maximum"
    column: str
    where: str | None = None

    def preconditions(self, schema: StructType) -> str | None:
        return super().preconditions(schema) or numeric_precondition(self, schema, self.column)

    def row_aggregations(self, schema: StructType) -> list[RowAggregate]:
        return [of("max", conditional(finite_value(schema, self.column), self.where))]

    def state_from(self, row: Sequence[Any], offset: int) -> State:
        value = row[offset]
        return MaxState(None if value is None else float(value))

    def empty_state(self) -> State:
        return MaxState.empty()

    def metric(self, state: State) -> Metric:
        assert isinstance(state, MaxState)
        if state.value is None:
            return self.empty_failure()
        return self.ok(state.value)
