"""RatioOfSums: Σ numerator / Σ denominator over the rows in scope.

Runs in the fused scan as sum(numerator), sum(denominator) (as doubles; NULLs skipped in
each sum independently) and the count of non-NULL numerators; ``RatioOfSumsState`` merges
by adding all three. Σ denominator = 0 gives ±Infinity (0/0 gives NaN), a success as in
Deequ. No non-NULL numerator in scope -> Failure (empty). Numeric columns only.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Self

from pyspark.sql.types import StructType

from streamdq.analyzers.base import ScanShareableAnalyzer, conditional
from streamdq.analyzers.metric import MULTICOLUMN, Metric
from streamdq.analyzers.numeric import finite_value, numeric_precondition
from streamdq.analyzers.row_aggregate import RowAggregate, of
from streamdq.analyzers.state import JsonState, State


@dataclass(frozen=True)
class RatioOfSumsState(JsonState):
    """Σ numerator, Σ denominator, and the number of non-NULL numerators.

    Examples
    --------
    >>> RatioOfSumsState(6.0, 3.0, 2).merge(RatioOfSumsState(2.0, 1.0, 1)).ratio()
    2.0
    >>> RatioOfSumsState(1.0, 0.0, 1).ratio()  # a zero denominator is infinite, not a failure
    inf
    """

    TYPE_TAG = "RatioOfSums"
    numerator: float = 0.0
    denominator: float = 0.0
    n: int = 0

    @classmethod
    def empty(cls) -> Self:
        return cls()

    def merge(self, other: Self) -> Self:
        return type(self)(
            self.numerator + other.numerator, self.denominator + other.denominator, self.n + other.n
        )

    def ratio(self) -> float:
        if self.denominator == 0.0:
            if self.numerator == 0.0 or math.isnan(self.numerator):
                return math.nan
            return math.copysign(math.inf, self.numerator)
        return self.numerator / self.denominator


@dataclass(frozen=True)
class RatioOfSums(ScanShareableAnalyzer):
    """Σ numerator / Σ denominator; Σ denominator = 0 -> ±inf.

    Examples
    --------
    A batch's state is the scan's (Σ numerator, Σ denominator, count of numerators):

    >>> r = RatioOfSums("revenue", "visits")
    >>> r.metric(r.state_from([30.0, 10.0, 4], 0).merge(r.state_from([10.0, 10.0, 2], 0))).value
    2.0
    """

    NAME = "RatioOfSums"
    numerator: str
    denominator: str
    where: str | None = None

    @property
    def entity(self) -> str:
        return MULTICOLUMN

    def preconditions(self, schema: StructType) -> str | None:
        return (
            super().preconditions(schema)
            or numeric_precondition(self, schema, self.numerator)
            or numeric_precondition(self, schema, self.denominator)
        )

    def row_aggregations(self, schema: StructType) -> list[RowAggregate]:
        num = conditional(finite_value(schema, self.numerator), self.where)
        den = conditional(finite_value(schema, self.denominator), self.where)
        return [of("sum", num), of("sum", den), of("count", num)]

    def state_from(self, row: Sequence[Any], offset: int) -> State:
        return RatioOfSumsState(
            float(row[offset] or 0.0), float(row[offset + 1] or 0.0), int(row[offset + 2] or 0)
        )

    def empty_state(self) -> State:
        return RatioOfSumsState.empty()

    def metric(self, state: State) -> Metric:
        assert isinstance(state, RatioOfSumsState)
        if state.n == 0:
            return self.empty_failure()
        return self.ok(state.ratio())
