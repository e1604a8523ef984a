"""Sum of a numeric column over the finite non-NULL values in scope, and the piece it shares
with Mean.

Both read the same two aggregates, ``sum(double)`` and ``count`` of the column's finite
values in scope (NaN and +-Infinity skipped like NULL, ``numeric.finite_value``), into the
same state (``SumState``), merged by adding both; ``SumAndCount`` holds that once, and Sum
and Mean differ only in ``statistic``. Spark deduplicates the equal aggregates, so a Sum and
a Mean of one column cost one ``sum`` and one ``count`` in the fused scan. No value in
scope (empty input, all NULL, or all filtered) -> Failure (empty).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql.types import StructType

from streamdq.analyzers.basic_states import SumState
from streamdq.analyzers.metric import Metric
from streamdq.analyzers.numeric import NumericColumnAnalyzer
from streamdq.analyzers.row_aggregate import RowAggregate, of
from streamdq.analyzers.state import State


@dataclass(frozen=True)
class SumAndCount(NumericColumnAnalyzer):
    """A statistic of the sum and count of a numeric column (``SumState``): Sum, Mean."""

    def row_aggregations(self, schema: StructType) -> list[RowAggregate]:
        value = self.value(schema)
        return [of("sum", value), of("count", value)]

    def state_from(self, row: Sequence[Any], offset: int) -> State:
        return SumState(float(row[offset] or 0.0), int(row[offset + 1] or 0))

    def empty_state(self) -> State:
        return SumState.empty()

    def metric(self, state: State) -> Metric:
        assert isinstance(state, SumState)
        if state.n == 0:
            return self.empty_failure()
        return self.ok(self.statistic(state))

    @abstractmethod
    def statistic(self, state: SumState) -> float:
        """The statistic of a state that saw at least one value."""


@dataclass(frozen=True)
class Sum(SumAndCount):
    """Σ of non-NULL values in scope. Numeric columns only; all-NULL -> Failure (empty).

    Examples
    --------
    A batch's state is the scan's ``sum`` and ``count`` (here 2 rows, then 3); states add:

    >>> s = Sum("amount")
    >>> s.metric(s.state_from([10.0, 2], 0).merge(s.state_from([5.0, 3], 0))).value
    15.0
    >>> s.metric(s.state_from([None, 0], 0)).empty  # no value in scope: Spark's sum is NULL
    True
    """

    NAME = "Sum"

    def statistic(self, state: SumState) -> float:
        return state.total
