"""Completeness: the fraction of rows in scope whose column is not NULL."""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql.types import StructType

from streamdq.analyzers.base import col, in_scope, rows_in_scope
from streamdq.analyzers.matches import MatchRatio
from streamdq.analyzers.row_aggregate import RowAggregate, count_if


@dataclass(frozen=True)
class Completeness(MatchRatio):
    """non-NULL / rows in scope. No rows in scope (e.g. a where-filter keeps none) -> Failure.

    Examples
    --------
    A batch's state is (non-NULL rows, rows in scope): 3 of 4, then 4 of 4:

    >>> c = Completeness("email")
    >>> c.metric(c.state_from([3, 4], 0).merge(c.state_from([4, 4], 0))).value
    0.875
    >>> c.metric(c.empty_state()).empty  # no row in scope
    True
    """

    NAME = "Completeness"
    column: str
    where: str | None = None

    def row_aggregations(self, schema: StructType) -> list[RowAggregate]:
        return [count_if(in_scope(self.where) & col(self.column).isNotNull()), rows_in_scope(self.where)]
