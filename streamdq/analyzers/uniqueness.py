"""Uniqueness: the fraction of rows (after the all-NULL drop) whose key occurs exactly once.

Grouping analyzer (shares the grouped pass of its ``FrequencySpec``): where-filter, drop
rows whose grouping columns are all NULL, group; value = #groups with c_k = 1 / n.
No rows left -> empty Failure. From the sketch form: the share of sampled rows whose key
is a singleton (ratio estimator, see ``FrequencyState.row_share``), flagged approximate;
an all-unique sample gives exactly 1.0, so ``is_unique`` still holds on large batches.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from pyspark.sql.types import StructType

from streamdq.analyzers.base import GroupingAnalyzer, register_analyzer
from streamdq.analyzers.frequency import FrequencySpec, FrequencyState
from streamdq.analyzers.frequency.estimators import estimate_kwargs
from streamdq.analyzers.metric import Metric


@register_analyzer
@dataclass(frozen=True)
class Uniqueness(GroupingAnalyzer):
    NAME = "Uniqueness"
    columns: tuple[str, ...]
    where: str | None = None

    def preconditions(self, schema: StructType) -> str | None:
        if not self.columns:
            return "Uniqueness needs at least one column"
        return super().preconditions(schema)

    def frequency_spec(self) -> FrequencySpec:
        return FrequencySpec(tuple(self.columns), self.where)

    def metric_from_frequencies(self, state: FrequencyState) -> Metric:
        if state.n == 0:
            return self.empty_failure()
        if not state.approximate:
            singletons, _ = state.count_groups(lambda c: c == 1)
            return self.ok(singletons / state.n)
        value, bound = state.row_share(lambda c: (c == 1).astype(np.float64))
        return self.ok(value, **estimate_kwargs(state, bound))
