"""Correlation: Pearson correlation of two numeric columns over rows where both are non-NULL.

Runs in the fused scan as count/avg/avg/covar_pop/var_pop/var_pop of the pair (each
value NULL unless the row is in scope and BOTH values are non-NULL), from which the
co-moments (n, means, C, M2x, M2y) are rebuilt; states merge exactly (up to rounding)
with the pairwise co-moment update. A constant column gives NaN (a success, as in Deequ;
Spark's F.corr would give NULL). No complete pair in scope -> Failure (empty).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from streamdq.analyzers.base import ScanShareableAnalyzer, in_scope
from streamdq.analyzers.basic_states import CoMomentsState
from streamdq.analyzers.metric import MULTICOLUMN, Metric
from streamdq.analyzers.numeric import finite_value, numeric_precondition
from streamdq.analyzers.row_aggregate import RowAggregate, of
from streamdq.analyzers.state import State


@dataclass(frozen=True)
class Correlation(ScanShareableAnalyzer):
    """Pearson r of (first_column, second_column); NaN when either column is constant.

    Examples
    --------
    A batch's state comes from the scan's (count, avg x, avg y, covar_pop, var_pop x, var_pop y)
    over the rows where both are non-NULL; (1, 2), (2, 4) and then (3, 6) lie on a line:

    >>> c = Correlation("x", "y")
    >>> first = c.state_from([2, 1.5, 3.0, 0.5, 0.25, 1.0], 0)
    >>> c.metric(first.merge(c.state_from([1, 3.0, 6.0, 0.0, 0.0, 0.0], 0))).value
    1.0
    """

    NAME = "Correlation"
    first_column: str
    second_column: str
    where: str | None = None

    @property
    def entity(self) -> str:
        return MULTICOLUMN

    def preconditions(self, schema: StructType) -> str | None:
        return (
            super().preconditions(schema)
            or numeric_precondition(self, schema, self.first_column)
            or numeric_precondition(self, schema, self.second_column)
        )

    def row_aggregations(self, schema: StructType) -> list[RowAggregate]:
        x, y = finite_value(schema, self.first_column), finite_value(schema, self.second_column)
        both = in_scope(self.where) & x.isNotNull() & y.isNotNull()
        xs, ys = F.when(both, x), F.when(both, y)
        return [
            of("count", xs),
            of("avg", xs),
            of("avg", ys),
            RowAggregate("covar_pop", (xs, ys)),
            of("var_pop", xs),
            of("var_pop", ys),
        ]

    def state_from(self, row: Sequence[Any], offset: int) -> State:
        n = int(row[offset] or 0)
        if n == 0:
            return CoMomentsState.empty()
        x_mean, y_mean, cov, vx, vy = (float(row[offset + i] or 0.0) for i in range(1, 6))
        return CoMomentsState(n, x_mean, y_mean, cov * n, max(vx, 0.0) * n, max(vy, 0.0) * n)

    def empty_state(self) -> State:
        return CoMomentsState.empty()

    def metric(self, state: State) -> Metric:
        assert isinstance(state, CoMomentsState)
        if state.n == 0:
            return self.empty_failure()
        return self.ok(state.correlation())
