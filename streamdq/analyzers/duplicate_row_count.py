"""DuplicateRowCount: rows whose key occurs more than once, sum of c_k over groups with c_k > 1.

It counts every row involved (not the extra copies). ``columns=()`` means all columns of
the input. Grouping analyzer (where-filter, all-NULL drop, group). No rows -> 0.0. From
the sketch form: n times the share of sampled rows whose key repeats (ratio estimator,
``FrequencyState.row_share``), flagged approximate; 0.0 when the sample has no repeat.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from streamdq.analyzers.base import GroupingAnalyzer
from streamdq.analyzers.frequency import FrequencySpec, FrequencyState
from streamdq.analyzers.frequency.estimators import estimate_kwargs
from streamdq.analyzers.metric import Metric


@dataclass(frozen=True)
class DuplicateRowCount(GroupingAnalyzer):
    """Rows whose key occurs more than once (every such row, not the extra copies).

    Examples
    --------
    ``[a, a, a, b]`` in two batches: the three rows of ``a`` are duplicates:

    >>> import pyarrow as pa
    >>> from streamdq.analyzers.frequency import FrequencyState
    >>> def batch(keys, counts):
    ...     table = pa.table({"k0": keys, "count": pa.array(counts, pa.int64())})
    ...     return FrequencyState.from_table(table, n=sum(counts), total=sum(counts), max_groups=100)
    >>> DuplicateRowCount(("item",)).metric(batch(["a"], [2]).merge(batch(["a", "b"], [1, 1]))).value
    3.0
    """

    NAME = "DuplicateRowCount"
    columns: tuple[str, ...] = ()
    where: str | None = None

    def frequency_spec(self) -> FrequencySpec:
        return FrequencySpec(tuple(self.columns), self.where)

    def metric_from_frequencies(self, state: FrequencyState) -> Metric:
        if not state.approximate:
            value, _ = state.sum_over_groups(lambda c: np.where(c > 1, c, 0.0))
            return self.ok(float(value))
        share, bound = state.row_share(lambda c: (c > 1).astype(np.float64))
        return self.ok(share * state.n, **estimate_kwargs(state, bound * state.n))
