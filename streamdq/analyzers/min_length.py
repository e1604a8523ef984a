"""MinLength: Shortest string length among the values in scope (see ``length.py`` for NULLs).

Runs in the fused scan as one ``min(length)``; states merge by taking the min. No value
in scope (empty input, all NULL with null_behavior "ignore", all filtered) -> Failure
(empty). String columns only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql.types import StructType

from streamdq.analyzers.base import ScanShareableAnalyzer, register_analyzer
from streamdq.analyzers.basic_states import MinState
from streamdq.analyzers.length import DOUBLE_MAX, length_precondition, length_value
from streamdq.analyzers.metric import Metric
from streamdq.analyzers.row_aggregate import RowAggregate, of
from streamdq.analyzers.state import State


@register_analyzer
@dataclass(frozen=True)
class MinLength(ScanShareableAnalyzer):
    """Shortest length of a string column, as a float."""

    NAME = "MinLength"
    column: str
    null_behavior: str = "ignore"
    where: str | None = None

    def preconditions(self, schema: StructType) -> str | None:
        return super().preconditions(schema) or length_precondition(
            self, schema, self.column, self.null_behavior
        )

    def row_aggregations(self, schema: StructType) -> list[RowAggregate]:
        return [of("min", length_value(self.column, self.null_behavior, -DOUBLE_MAX, self.where))]

    def state_from(self, row: Sequence[Any], offset: int) -> State:
        value = row[offset]
        return MinState(None if value is None else float(value))

    def empty_state(self) -> State:
        return MinState.empty()

    def metric(self, state: State) -> Metric:
        assert isinstance(state, MinState)
        if state.value is None:
            return self.empty_failure()
        return self.ok(state.value)
