"""CountDistinct: the number of distinct keys (rows with all grouping columns NULL dropped).

Grouping analyzer; no rows -> 0.0 (a success, as in Deequ). From the sketch form: the
theta estimate of the distinct keys with its 3-sigma bound, flagged approximate.
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
class CountDistinct(GroupingAnalyzer):
    NAME = "CountDistinct"
    columns: tuple[str, ...]
    where: str | None = None

    def preconditions(self, schema: StructType) -> str | None:
        if not self.columns:
            return "CountDistinct needs at least one column"
        return super().preconditions(schema)

    def frequency_spec(self) -> FrequencySpec:
        return FrequencySpec(tuple(self.columns), self.where)

    def metric_from_frequencies(self, state: FrequencyState) -> Metric:
        groups, bound = state.count_groups()
        return self.ok(float(groups), **estimate_kwargs(state, bound))
