"""Distinctness: #distinct keys / n (rows left after the where-filter and the all-NULL drop).

Grouping analyzer; no rows left -> empty Failure. From the sketch form: the mean of
1/c over the sampled rows (ratio estimator, ``FrequencyState.row_share``), flagged
approximate; an all-unique sample gives exactly 1.0.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql.types import StructType

from streamdq.analyzers.base import GroupingAnalyzer, register_analyzer
from streamdq.analyzers.frequency import FrequencySpec, FrequencyState
from streamdq.analyzers.frequency.estimators import estimate_kwargs
from streamdq.analyzers.metric import Metric


@register_analyzer
@dataclass(frozen=True)
class Distinctness(GroupingAnalyzer):
    NAME = "Distinctness"
    columns: tuple[str, ...]
    where: str | None = None

    def preconditions(self, schema: StructType) -> str | None:
        if not self.columns:
            return "Distinctness needs at least one column"
        return super().preconditions(schema)

    def frequency_spec(self) -> FrequencySpec:
        return FrequencySpec(tuple(self.columns), self.where)

    def metric_from_frequencies(self, state: FrequencyState) -> Metric:
        if state.n == 0:
            return self.empty_failure()
        if not state.approximate:
            groups, _ = state.count_groups()
            return self.ok(groups / state.n)
        value, bound = state.row_share(lambda c: 1.0 / c)
        return self.ok(value, **estimate_kwargs(state, bound))
