"""MaxLength: Longest string length among the values in scope (see ``length.py`` for NULLs).

Runs in the fused scan as one ``max(length)``; states merge by taking the max. No value
in scope (empty input, all NULL with null_behavior "ignore", all filtered) -> Failure
(empty). String columns only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql.types import StructType

from streamdq.analyzers.base import ScanShareableAnalyzer, register_analyzer
from streamdq.analyzers.basic_states import MaxState
from streamdq.analyzers.length import DOUBLE_MAX, length_precondition, length_value
from streamdq.analyzers.metric import Metric
from streamdq.analyzers.row_aggregate import RowAggregate, of
from streamdq.analyzers.state import State


@register_analyzer
@dataclass(frozen=True)
class MaxLength(ScanShareableAnalyzer):
    """Longest length of a string column, as a float."""

    NAME = "MaxLength"
    column: str
    null_behavior: str = "ignore"
    where: str | None = None

    def preconditions(self, schema: StructType) -> str | None:
        return super().preconditions(schema) or length_precondition(
            self, schema, self.column, self.null_behavior
        )

    def row_aggregations(self, schema: StructType) -> list[RowAggregate]:
        return [of("max", length_value(self.column, self.null_behavior, DOUBLE_MAX, self.where))]

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
