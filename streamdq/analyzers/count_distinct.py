"""CountDistinct: the number of distinct keys (rows with all grouping columns NULL dropped).

Grouping analyzer; no rows -> 0.0 (a success, as in Deequ). From the sketch form: the
theta estimate of the distinct keys with its 3-sigma bound, flagged approximate.
"""

from __future__ import annotations

from dataclasses import dataclass

from streamdq.analyzers.base import ColumnsGroupingAnalyzer
from streamdq.analyzers.frequency import FrequencyState
from streamdq.analyzers.frequency.estimators import estimate_kwargs
from streamdq.analyzers.metric import Metric


@dataclass(frozen=True)
class CountDistinct(ColumnsGroupingAnalyzer):
    """The number of distinct keys (NULL-only keys not counted); no rows -> 0.0.

    Examples
    --------
    Two batches ``[a, a]`` and ``[a, b]`` merged: two distinct keys; nothing seen: 0.0:

    >>> import pyarrow as pa
    >>> from streamdq.analyzers.frequency import FrequencyState
    >>> def batch(keys, counts):
    ...     table = pa.table({"k0": keys, "count": pa.array(counts, pa.int64())})
    ...     return FrequencyState.from_table(table, n=sum(counts), total=sum(counts), max_groups=100)
    >>> CountDistinct(("item",)).metric(batch(["a"], [2]).merge(batch(["a", "b"], [1, 1]))).value
    2.0
    >>> CountDistinct(("item",)).metric(FrequencyState.empty()).value
    0.0
    """

    NAME = "CountDistinct"

    def metric_from_frequencies(self, state: FrequencyState) -> Metric:
        groups, bound = state.count_groups()
        return self.ok(float(groups), **estimate_kwargs(state, bound))
