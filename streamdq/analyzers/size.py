"""Size: the number of rows in scope (rows where ``where`` is TRUE)."""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql.types import StructType

from streamdq.analyzers.base import rows_in_scope
from streamdq.analyzers.matches import MatchCount
from streamdq.analyzers.row_aggregate import RowAggregate


@dataclass(frozen=True)
class Size(MatchCount):
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
