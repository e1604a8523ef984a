"""UniqueValueRatio: #keys occurring exactly once / #distinct keys.

Grouping analyzer (where-filter, all-NULL drop, group). No group -> empty Failure (as in
Deequ, whose aggregate is NULL then). From the sketch form: the proportion of singletons
among the sampled keys (a uniform sample of the distinct keys), error bound 3 standard
errors of that proportion, flagged approximate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from streamdq.analyzers.base import ColumnsGroupingAnalyzer
from streamdq.analyzers.frequency import FrequencyState
from streamdq.analyzers.frequency.estimators import SIGMAS, estimate_kwargs
from streamdq.analyzers.metric import Metric


@dataclass(frozen=True)
class UniqueValueRatio(ColumnsGroupingAnalyzer):
    """Share of distinct keys that occur exactly once.

    Examples
    --------
    ``[a, a, a, b]`` has two keys, one of them (``b``) unique (SEMANTICS.md's example):

    >>> import pyarrow as pa
    >>> from streamdq.analyzers.frequency import FrequencyState
    >>> table = pa.table({"k0": ["a", "b"], "count": pa.array([3, 1], pa.int64())})
    >>> state = FrequencyState.from_table(table, n=4, total=4, max_groups=100)
    >>> UniqueValueRatio(("item",)).metric(state).value
    0.5
    """

    NAME = "UniqueValueRatio"
    KEYS_EXPECTED_DISTINCT = True

    def metric_from_frequencies(self, state: FrequencyState) -> Metric:
        counts = state.counts()
        if state.n == 0 or len(counts) == 0:
            return self.empty_failure()
        sampled = len(counts)
        ratio = float((counts == 1).sum()) / sampled
        # sample proportion: standard error with finite-population correction (1 - theta)
        spread = max(ratio * (1.0 - ratio), 1.0 / sampled)
        bound = SIGMAS * math.sqrt(spread * (1.0 - state.theta) / sampled)
        return self.ok(ratio, **estimate_kwargs(state, bound))
