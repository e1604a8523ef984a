"""ZerosCount: the number of rows in scope whose numeric column equals 0.

Runs in the fused scan as one conditional count; states merge by addition. Empty input,
an all-NULL column or a filter keeping nothing give 0.0 (a success, unlike the other
statistics). Numeric columns only.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from streamdq.analyzers.base import col, in_scope
from streamdq.analyzers.matches import MatchCount
from streamdq.analyzers.numeric import numeric_precondition
from streamdq.analyzers.row_aggregate import RowAggregate, count_if


@dataclass(frozen=True)
class ZerosCount(MatchCount):
    """Count of values == 0 in scope (NULL is not zero).

    Examples
    --------
    A batch's state is the count of zeros; states add; nothing seen is 0.0, a success:

    >>> z = ZerosCount("quantity")
    >>> z.metric(z.state_from([2], 0).merge(z.state_from([1], 0))).value
    3.0
    >>> z.metric(z.empty_state()).value
    0.0
    """

    NAME = "ZerosCount"
    column: str
    where: str | None = None

    def preconditions(self, schema: StructType) -> str | None:
        return super().preconditions(schema) or numeric_precondition(self, schema, self.column)

    def row_aggregations(self, schema: StructType) -> list[RowAggregate]:
        return [count_if(in_scope(self.where) & (col(self.column) == F.lit(0)))]
