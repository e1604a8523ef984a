"""Entropy: -sum_k (c_k/n) ln(c_k/n) over the values of one column (natural log).

Grouping analyzer (where-filter, NULL rows dropped, group). No rows -> empty Failure.
From the sketch form: the mean of -ln(c/n) over the sampled rows (ratio estimator,
``FrequencyState.row_share``), flagged approximate.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from streamdq.analyzers.base import GroupingAnalyzer
from streamdq.analyzers.frequency import FrequencySpec, FrequencyState
from streamdq.analyzers.frequency.estimators import estimate_kwargs
from streamdq.analyzers.metric import Metric


@dataclass(frozen=True)
class Entropy(GroupingAnalyzer):
    """-sum (c/n) ln(c/n) over the values of one column (natural log).

    Examples
    --------
    The frequencies of ``[a, a, b, b]``, in two batches: ln 2:

    >>> import math
    >>> import pyarrow as pa
    >>> from streamdq.analyzers.frequency import FrequencyState
    >>> def batch(keys, counts):
    ...     table = pa.table({"k0": keys, "count": pa.array(counts, pa.int64())})
    ...     return FrequencyState.from_table(table, n=sum(counts), total=sum(counts), max_groups=100)
    >>> e = Entropy("item").metric(batch(["a", "b"], [1, 1]).merge(batch(["a", "b"], [1, 1]))).value
    >>> math.isclose(e, math.log(2))
    True
    """

    NAME = "Entropy"
    column: str
    where: str | None = None

    def frequency_spec(self) -> FrequencySpec:
        return FrequencySpec((self.column,), self.where)

    def metric_from_frequencies(self, state: FrequencyState) -> Metric:
        n = state.n
        if n == 0:
            return self.empty_failure()

        def term(c: np.ndarray) -> np.ndarray:
            p = c / n
            return np.asarray(-p * np.log(p))

        if not state.approximate:
            value, _ = state.sum_over_groups(term)
            return self.ok(value)
        value, bound = state.row_share(lambda c: -np.log(c / n))
        return self.ok(value, **estimate_kwargs(state, bound))
