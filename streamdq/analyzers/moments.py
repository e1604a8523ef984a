"""Shared base of the analyzers computed from central moments (StdDev, Variance, Skewness, Kurtosis).

Each analyzer asks only for the aggregates of the moments it needs (``ORDER``):
count, sum and var_pop of the column cast to double (NULL outside the ``where`` scope)
for StandardDeviation and Variance; plus skewness for Skewness; plus kurtosis for
Kurtosis. Spark deduplicates equal aggregate expressions, so several of them on one
column (and Mean's sum and count) cost one set of aggregates in the fused ``agg``. The
state is ``MomentsState`` (count, mean = sum / count, m2..m4 up to ``ORDER``) rebuilt
with ``MomentsState.from_spark``, which also turns Spark's NULL skewness/kurtosis of a
constant column into m3 = m4 = 0. States merge with Chan/Pébay's pairwise formulas.
Population formulas throughout; no non-NULL value in scope -> Failure (empty).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from pyspark.sql.types import StructType

from streamdq.analyzers.basic_states import MomentsState
from streamdq.analyzers.metric import Metric
from streamdq.analyzers.numeric import NumericColumnAnalyzer
from streamdq.analyzers.row_aggregate import RowAggregate, of
from streamdq.analyzers.state import State


def _opt_float(value: Any) -> float | None:
    return None if value is None else float(value)


@dataclass(frozen=True)
class MomentsAnalyzer(NumericColumnAnalyzer):
    """A statistic of ``MomentsState``; subclasses implement ``statistic``."""

    ORDER: ClassVar[int] = 4  # the highest central moment ``statistic`` reads

    def row_aggregations(self, schema: StructType) -> list[RowAggregate]:
        value = self.value(schema)
        exprs = [of("count", value), of("sum", value), of("var_pop", value)]
        if self.ORDER >= 3:
            exprs.append(of("skewness", value))
        if self.ORDER >= 4:
            exprs.append(of("kurtosis", value))
        return exprs

    def state_from(self, row: Sequence[Any], offset: int) -> State:
        n, total, var = int(row[offset] or 0), row[offset + 1], row[offset + 2]
        skew = row[offset + 3] if self.ORDER >= 3 else None
        kurt = row[offset + 4] if self.ORDER >= 4 else None
        # Spark's avg of a double is exactly sum / count (one IEEE division)
        mean = float(total) / n if n and total is not None else None
        return MomentsState.from_spark(
            n, mean, _opt_float(var), _opt_float(skew), _opt_float(kurt), order=self.ORDER
        )

    def empty_state(self) -> State:
        return MomentsState.empty()

    def metric(self, state: State) -> Metric:
        assert isinstance(state, MomentsState)
        if state.n == 0:
            return self.empty_failure()
        if state.order < self.ORDER:
            return self.failed(
                f"{self.NAME} needs central moments up to order {self.ORDER}, the state carries "
                f"only up to {state.order}"
            )
        return self.ok(self.statistic(state))

    @abstractmethod
    def statistic(self, state: MomentsState) -> float:
        """The statistic of a non-empty state."""
