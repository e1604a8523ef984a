"""Shared base of the analyzers computed from central moments (StdDev, Variance, Skewness, Kurtosis).

All four request the same five aggregates (count, avg, var_pop, skewness, kurtosis of the
column cast to double, NULL outside the ``where`` scope); Spark deduplicates equal
aggregate expressions, so several of them on one column cost one set of aggregates in
the fused ``agg``. The state is ``MomentsState`` (count, mean, m2..m4) rebuilt with
``MomentsState.from_spark``, which also turns Spark's NULL skewness/kurtosis of a
constant column into m3 = m4 = 0. States merge with Chan/Pébay's pairwise formulas.
Population formulas throughout; no non-NULL value in scope -> Failure (empty).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from streamdq.analyzers.base import ScanShareableAnalyzer, col, conditional
from streamdq.analyzers.basic_states import MomentsState
from streamdq.analyzers.metric import Metric
from streamdq.analyzers.numeric import numeric_precondition
from streamdq.analyzers.state import State


def _opt_float(value: Any) -> float | None:
    return None if value is None else float(value)


@dataclass(frozen=True)
class MomentsAnalyzer(ScanShareableAnalyzer):
    """A statistic of ``MomentsState``; subclasses implement ``statistic``."""

    column: str
    where: str | None = None

    def preconditions(self, schema: StructType) -> str | None:
        return super().preconditions(schema) or numeric_precondition(self, schema, self.column)

    def aggregations(self, schema: StructType) -> list[Column]:
        value = conditional(col(self.column).cast("double"), self.where)
        return [F.count(value), F.avg(value), F.var_pop(value), F.skewness(value), F.kurtosis(value)]

    def state_from(self, row: Sequence[Any], offset: int) -> State:
        n, mean, var, skew, kurt = (row[offset + i] for i in range(5))
        return MomentsState.from_spark(
            int(n or 0), _opt_float(mean), _opt_float(var), _opt_float(skew), _opt_float(kurt)
        )

    def empty_state(self) -> State:
        return MomentsState.empty()

    def metric(self, state: State) -> Metric:
        assert isinstance(state, MomentsState)
        if state.n == 0:
            return self.empty_failure()
        return self.ok(self.statistic(state))

    @abstractmethod
    def statistic(self, state: MomentsState) -> float:
        """The statistic of a non-empty state."""
