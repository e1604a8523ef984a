"""Range: max - min of a numeric column over the finite non-NULL values in scope (Deequ's Range).

Runs in the fused scan as ``min`` and ``max`` of the column cast to double (NaN and
+-Infinity skipped like NULL: the non-finite policy of ``numeric.finite_value``); the state
(``RangeState``) keeps both and merges them independently (min of mins, max of maxes), so it
is exact at every scope. Numeric columns only (else Failure); no finite value in scope
(empty input, all NULL, everything filtered) -> Failure (empty). ``[1..6]`` -> 5.0.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Self

from pyspark.sql.types import StructType

from streamdq.analyzers.basic_states import MaxState, MinState
from streamdq.analyzers.metric import Metric
from streamdq.analyzers.numeric import NumericColumnAnalyzer
from streamdq.analyzers.row_aggregate import RowAggregate, of
from streamdq.analyzers.state import JsonState, State


@dataclass(frozen=True)
class RangeState(JsonState):
    """Smallest and largest value seen (None = none seen); each merges like Min / Max.

    Examples
    --------
    >>> RangeState(2.0, 5.0).merge(RangeState(-1.0, 3.0)).merge(RangeState.empty())
    RangeState(minimum=-1.0, maximum=5.0)
    """

    TYPE_TAG = "Range"
    minimum: float | None = None
    maximum: float | None = None

    @classmethod
    def empty(cls) -> Self:
        return cls(None, None)

    def merge(self, other: Self) -> Self:
        low = MinState(self.minimum).merge(MinState(other.minimum)).value
        high = MaxState(self.maximum).merge(MaxState(other.maximum)).value
        return type(self)(low, high)


@dataclass(frozen=True)
class Range(NumericColumnAnalyzer):
    """``max - min`` of the finite values in scope, as a float. Numeric columns only.

    Examples
    --------
    A batch's state is the scan's (min, max); ``[1..3]`` then ``[4..6]``:

    >>> r = Range("x")
    >>> r.metric(r.state_from([1.0, 3.0], 0).merge(r.state_from([4.0, 6.0], 0))).value
    5.0
    """

    NAME = "Range"

    def row_aggregations(self, schema: StructType) -> list[RowAggregate]:
        value = self.value(schema)
        return [of("min", value), of("max", value)]

    def state_from(self, row: Sequence[Any], offset: int) -> State:
        low, high = row[offset], row[offset + 1]
        return RangeState(None if low is None else float(low), None if high is None else float(high))

    def empty_state(self) -> State:
        return RangeState.empty()

    def metric(self, state: State) -> Metric:
        assert isinstance(state, RangeState)
        if state.minimum is None or state.maximum is None:
            return self.empty_failure()
        return self.ok(state.maximum - state.minimum)
