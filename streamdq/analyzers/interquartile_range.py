"""InterquartileRange: Q3 - Q1 of a numeric column, from a KLL sketch (mergeable).

Runs in the fused scan as the same ``kll_sketch_agg_double`` as ApproxQuantile (one sketch
per column, k, where; NaN, +-Infinity and NULL skipped), so its state (``KllState``) merges
over microbatches, windows and history.

Relation to Deequ's InterquartileRange: Deequ computes Spark's exact ``percentile`` at 0.25
and 0.75 (linear interpolation: IQR([1..6]) = 4.75 - 2.25 = 2.5) and its state does not
merge. Here each quartile is the same linear interpolation over the sketch's retained items,
weighted by their KLL weights (``interpolated_quantile``): while the sketch holds every
value (n <= k, no compaction yet) the weights are all 1 and the result is EXACTLY Deequ's
value; beyond that each quartile is within the sketch's normalized rank error
(``error_bound``, ~1.3% at k = 200) of the true one, and the metric is flagged approximate.
Numeric columns only; no finite value in scope -> Failure (empty); bad k -> Failure.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from pyspark.sql.types import StructType

from streamdq.analyzers.approx_quantile import KllAnalyzer, k_problem
from streamdq.analyzers.base import conditional
from streamdq.analyzers.metric import Metric
from streamdq.analyzers.numeric import numeric_precondition, sketch_value
from streamdq.analyzers.row_aggregate import RowAggregate, of
from streamdq.analyzers.sketch_states import KllState


def interpolated_quantile(state: KllState, q: float) -> float:
    """The q-quantile with linear interpolation between neighbouring ranks (numpy's default)
    over the sketch's retained items, each repeated by its weight (exact while n <= k)."""
    items = sorted(state.kll())
    values = np.array([v for v, _ in items], dtype=np.float64)
    ends = np.cumsum(np.array([w for _, w in items], dtype=np.int64))  # exclusive end rank
    position = (int(ends[-1]) - 1) * q
    lower, higher = math.floor(position), math.ceil(position)
    low = float(values[np.searchsorted(ends, lower, side="right")])
    high = float(values[np.searchsorted(ends, higher, side="right")])
    if lower == higher or low == high:
        return low
    return (higher - position) * low + (position - lower) * high


@dataclass(frozen=True)
class InterquartileRange(KllAnalyzer):
    """Q3 - Q1 (interpolated quartiles from a KLL sketch; exact while the sketch is).

    Examples
    --------
    A batch's state is the KLL sketch the scan returns; exact while the sketch is (IQR of
    1..6 = 4.75 - 2.25, SEMANTICS.md):

    >>> import datasketches as ds
    >>> def scanned(values):
    ...     sk = ds.kll_doubles_sketch(200)
    ...     for v in values:
    ...         sk.update(v)
    ...     return [sk.serialize()]
    >>> iqr = InterquartileRange("x")
    >>> m = iqr.metric(iqr.state_from(scanned([1.0, 2.0, 3.0]), 0).merge(iqr.state_from(scanned([4.0, 5.0, 6.0]), 0)))
    >>> m.value, m.approximate
    (2.5, False)
    """

    NAME = "InterquartileRange"
    column: str
    k: int = 200
    where: str | None = None

    def preconditions(self, schema: StructType) -> str | None:
        return (
            k_problem(self.k)
            or super().preconditions(schema)
            or numeric_precondition(self, schema, self.column)
        )

    def row_aggregations(self, schema: StructType) -> list[RowAggregate]:
        return [of("kll", conditional(sketch_value(schema, self.column), self.where), self.k)]

    def sketch_metric(self, state: KllState) -> Metric:
        iqr = interpolated_quantile(state, 0.75) - interpolated_quantile(state, 0.25)
        if not state.kll().is_estimation_mode():
            return self.ok(iqr)
        return self.ok(iqr, approximate=True, error_bound=state.rank_error())
