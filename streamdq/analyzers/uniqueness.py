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

from streamdq.analyzers.base import ColumnsGroupingAnalyzer
from streamdq.analyzers.frequency import FrequencyState
from streamdq.analyzers.frequency.estimators import estimate_kwargs
from streamdq.analyzers.metric import Metric


@dataclass(frozen=True)
class Uniqueness(ColumnsGroupingAnalyzer):
    """Share of rows whose key occurs exactly once (NULL-only keys dropped).

    Examples
    --------
    The frequencies of two batches, ``[a, a]`` and ``[a, b]``, merge into those of
    ``[a, a, a, b]``: only ``b`` is unique, one row of four (SEMANTICS.md's example):

    >>> import pyarrow as pa
    >>> from streamdq.analyzers.frequency import FrequencyState
    >>> def batch(keys, counts):
    ...     table = pa.table({"k0": keys, "count": pa.array(counts, pa.int64())})
    ...     return FrequencyState.from_table(table, n=sum(counts), total=sum(counts), max_groups=100)
    >>> Uniqueness(("item",)).metric(batch(["a"], [2]).merge(batch(["a", "b"], [1, 1]))).value
    0.25
    >>> Uniqueness(("item",)).metric(FrequencyState.empty()).empty
    True
    """

    NAME = "Uniqueness"
    KEYS_EXPECTED_DISTINCT = True

    def metric_from_frequencies(self, state: FrequencyState) -> Metric:
        if state.n == 0:
            return self.empty_failure()
        if not state.approximate:
            singletons, _ = state.count_groups(lambda c: c == 1)
            return self.ok(singletons / state.n)
        value, bound = state.row_share(lambda c: (c == 1).astype(np.float64))
        return self.ok(value, **estimate_kwargs(state, bound))
