"""Size: the number of rows in scope (rows where ``where`` is TRUE)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql.types import StructType

from streamdq.analyzers.base import ScanShareableAnalyzer, register_analyzer, rows_in_scope
from streamdq.analyzers.basic_states import NumMatches
from streamdq.analyzers.metric import Metric
from streamdq.analyzers.row_aggregate import RowAggregate
from streamdq.analyzers.state import State


@register_analyzer
@dataclass(frozen=True)
class Size(ScanShareableAnalyzer):
    """Row count. Empty input gives 0.0 (a success, as in Deequ).

    Examples
    --------
    A batch's state is the scan's row count; states add:

    >>> s = Size()
    >>> s.metric(s.state_from([3], 0).merge(s.state_from([4], 0))).value
    7.0
    >>> s.metric(s.empty_state()).value  # zero rows is a count, not a failure
    0.0
    """

    NAME = "Size"
    where: str | None = None

    def row_aggregations(self, schema: StructType) -> list[RowAggregate]:
        return [rows_in_scope(self.where)]

    def state_from(self, row: Sequence[Any], offset: int) -> State:
        return NumMatches(int(row[offset] or 0))

    def empty_state(self) -> State:
        return NumMatches.empty()

    def metric(self, state: State) -> Metric:
        assert isinstance(state, NumMatches)
        return self.ok(float(state.matches))
