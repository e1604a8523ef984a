"""DataType: a histogram of the inferred type of each value (Deequ's DataType analyzer).

Each value is cast to string and classified, first match wins: NULL -> Unknown;
``^(-|\\+)? ?\\d+((\\.\\d+)|((?:\\.\\d+)?[Ee][-+]?\\d+))$`` -> Fractional; ``^(-|\\+)? ?\\d+$`` ->
Integral; ``^(true|false)$`` -> Boolean; else String. Rows outside the ``where`` scope are
Unknown, so the ratios use ALL rows as denominator. Runs in the fused scan as five
conditional counts (``rlike``, no UDF); ``DataTypeState`` merges by adding the counts.
The value is a distribution ``{"number_of_bins": 5, "values": {type: {"absolute": n,
"ratio": n / rows}}}`` with all five keys. Zero rows -> Failure (empty); an all-NULL
column is a success (Unknown = 1.0).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Self

from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from streamdq.analyzers.base import ScanShareableAnalyzer, col, conditional
from streamdq.analyzers.metric import Distribution, Metric
from streamdq.analyzers.row_aggregate import RowAggregate, count_if
from streamdq.analyzers.state import JsonState, State

FRACTIONAL = r"^(-|\+)? ?\d+((\.\d+)|((?:\.\d+)?[Ee][-+]?\d+))$"
INTEGRAL = r"^(-|\+)? ?\d+$"
BOOLEAN = r"^(true|false)$"
TYPE_KEYS = ("Unknown", "Fractional", "Integral", "Boolean", "String")


@dataclass(frozen=True)
class DataTypeState(JsonState):
    """Row counts per inferred type (Unknown includes NULLs and out-of-scope rows).

    Examples
    --------
    >>> DataTypeState(unknown=1, integral=2).merge(DataTypeState(integral=3, string=1))
    DataTypeState(unknown=1, fractional=0, integral=5, boolean=0, string=1)
    """

    TYPE_TAG = "DataTypeHistogram"
    unknown: int = 0
    fractional: int = 0
    integral: int = 0
    boolean: int = 0
    string: int = 0

    @classmethod
    def empty(cls) -> Self:
        return cls()

    def merge(self, other: Self) -> Self:
        return type(self)(*(a + b for a, b in zip(self.counts(), other.counts(), strict=True)))

    def counts(self) -> tuple[int, int, int, int, int]:
        return (self.unknown, self.fractional, self.integral, self.boolean, self.string)

    @property
    def total(self) -> int:
        return sum(self.counts())


@dataclass(frozen=True)
class DataType(ScanShareableAnalyzer):
    """Distribution of inferred value types over all rows (out-of-scope rows are Unknown).

    Examples
    --------
    The scan's row counts (Unknown, Fractional, Integral, Boolean, String):

    >>> d = DataType("code")
    >>> m = d.metric(d.state_from([1, 0, 2, 0, 1], 0).merge(d.state_from([0, 0, 4, 0, 0], 0)))
    >>> m.value["values"]["Integral"]
    {'absolute': 6, 'ratio': 0.75}
    """

    NAME = "DataType"
    column: str
    where: str | None = None

    def row_aggregations(self, schema: StructType) -> list[RowAggregate]:
        text = conditional(col(self.column).cast("string"), self.where)
        frac = F.coalesce(text.rlike(FRACTIONAL), F.lit(False))
        integ = ~frac & F.coalesce(text.rlike(INTEGRAL), F.lit(False))
        boolean = ~frac & ~integ & F.coalesce(text.rlike(BOOLEAN), F.lit(False))
        string = text.isNotNull() & ~frac & ~integ & ~boolean
        return [count_if(text.isNull()), count_if(frac), count_if(integ), count_if(boolean), count_if(string)]

    def state_from(self, row: Sequence[Any], offset: int) -> State:
        return DataTypeState(*(int(row[offset + i] or 0) for i in range(5)))

    def empty_state(self) -> State:
        return DataTypeState.empty()

    def metric(self, state: State) -> Metric:
        assert isinstance(state, DataTypeState)
        total = state.total
        if total == 0:
            return self.empty_failure()
        bins = {key: (n, n / total) for key, n in zip(TYPE_KEYS, state.counts(), strict=True)}
        return self.ok(Distribution.of(bins, number_of_bins=len(TYPE_KEYS)))
