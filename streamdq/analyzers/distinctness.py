"""Distinctness: #distinct keys / n (rows left after the where-filter and the all-NULL drop).

Grouping analyzer; no rows left -> empty Failure. From the sketch form: the mean of
1/c over the sampled rows (ratio estimator, ``FrequencyState.row_share``), flagged
approximate; an all-unique sample gives exactly 1.0.
"""

from __future__ import annotations

from dataclasses import dataclass

from streamdq.analyzers.base import ColumnsGroupingAnalyzer
from streamdq.analyzers.frequency import FrequencyState
from streamdq.analyzers.frequency.estimators import estimate_kwargs
from streamdq.analyzers.metric import Metric


@dataclass(frozen=True)
class Distinctness(ColumnsGroupingAnalyzer):
    """#distinct keys / rows in scope (NULL-only keys dropped).

    Examples
    --------
    The frequencies of two batches, ``[a, a]`` and ``[a, b]``, merge into those of
    ``[a, a, a, b]``: two distinct keys over four rows (SEMANTICS.md's example):

    >>> import pyarrow as pa
    >>> from streamdq.analyzers.frequency import FrequencyState
    >>> def batch(keys, counts):
    ...     table = pa.table({"k0": keys, "count": pa.array(counts, pa.int64())})
    ...     return FrequencyState.from_table(table, n=sum(counts), total=sum(counts), max_groups=100)
    >>> Distinctness(("item",)).metric(batch(["a"], [2]).merge(batch(["a", "b"], [1, 1]))).value
    0.5
    """

    NAME = "Distinctness"
    KEYS_EXPECTED_DISTINCT = True

    def metric_from_frequencies(self, state: FrequencyState) -> Metric:
        if state.n == 0:
            return self.empty_failure()
        if not state.approximate:
            groups, _ = state.count_groups()
            return self.ok(groups / state.n)
        value, bound = state.row_share(lambda c: 1.0 / c)
        return self.ok(value, **estimate_kwargs(state, bound))
