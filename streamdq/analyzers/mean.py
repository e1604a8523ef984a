"""Mean of a numeric column over the finite non-NULL values in scope.

Sum / count of the same state as Sum (``sum.SumAndCount``: ``SumState``, merged by adding
sum and count, so the mean of merged states is exact: never a mean of means). No value in
scope (empty input, all NULL, or all filtered) -> Failure (empty).
"""

from __future__ import annotations

from dataclasses import dataclass

from streamdq.analyzers.basic_states import SumState
from streamdq.analyzers.sum import SumAndCount


@dataclass(frozen=True)
class Mean(SumAndCount):
    """sum / count of non-NULL values. Numeric columns only; all-NULL -> Failure (empty).

    Examples
    --------
    Two batches, [1, 2, 3] and [10]: the mean of the four values, not of the two means:

    >>> m = Mean("latency")
    >>> m.metric(m.state_from([6.0, 3], 0).merge(m.state_from([10.0, 1], 0))).value
    4.0
    """

    NAME = "Mean"

    def statistic(self, state: SumState) -> float:
        return state.total / state.n
