"""Compliance: the fraction of rows in scope on which a Spark SQL predicate is TRUE.

Runs in the fused scan as three conditional counts (TRUE, in scope, predicate not NULL);
states (``NumMatchesAndCount``) merge by addition. A NULL predicate counts as not
compliant but stays in the denominator; when rows are in scope but EVERY predicate value
is NULL (e.g. numeric bounds on a string column) the metric is a Failure. No row in scope
-> Failure (empty). ``columns`` names the columns the predicate reads so a missing
column fails before the pass with a clear message. A predicate that does not parse or
resolve fails this analyzer alone when the pass runs (the plan isolates it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from streamdq.analyzers.base import in_scope, rows_in_scope
from streamdq.analyzers.basic_states import NumMatchesAndCount
from streamdq.analyzers.matches import MatchRatio
from streamdq.analyzers.metric import COLUMN, Metric
from streamdq.analyzers.row_aggregate import RowAggregate, count_if
from streamdq.analyzers.state import State


@dataclass(frozen=True)
class Compliance(MatchRatio):
    """#rows with ``predicate`` TRUE / #rows in scope; instance = ``name``.

    Examples
    --------
    A batch's state is (rows with the predicate TRUE, rows in scope, rows where it is not
    NULL); a NULL predicate is not compliant but stays in the denominator:

    >>> c = Compliance("positive price", "price > 0", ("price",))
    >>> c.metric(c.state_from([2, 4, 3], 0).merge(c.state_from([4, 4, 4], 0))).value
    0.75
    >>> c.metric(c.state_from([0, 2, 0], 0)).failure
    "Compliance 'positive price': predicate 'price > 0' is NULL on every row in scope"
    """

    NAME = "Compliance"
    name: str
    predicate: str
    columns: tuple[str, ...] = ()
    where: str | None = None

    @property
    def entity(self) -> str:
        return COLUMN

    @property
    def instance(self) -> str:
        return self.name

    def row_aggregations(self, schema: StructType) -> list[RowAggregate]:
        scope = in_scope(self.where)
        pred = F.expr(self.predicate).cast("boolean")
        return [
            count_if(scope & F.coalesce(pred, F.lit(False))),
            rows_in_scope(self.where),
            count_if(scope & pred.isNotNull()),
        ]

    def state_from(self, row: Sequence[Any], offset: int) -> State:
        return NumMatchesAndCount(*(int(row[offset + i] or 0) for i in range(3)))

    def metric(self, state: State) -> Metric:
        assert isinstance(state, NumMatchesAndCount)
        if state.count and not state.evaluated:
            return self.failed(
                f"Compliance {self.name!r}: predicate {self.predicate!r} is NULL on every row in scope"
            )
        return super().metric(state)
