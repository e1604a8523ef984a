"""MutualInformation of two columns, natural log.

MI = sum over pairs (x, y) with BOTH sides non-NULL of (c_xy/n) ln(c_xy n / (c_x c_y)),
where n counts every row left after the where-filter and the drop of rows whose two
columns are both NULL, and the marginals c_x, c_y count pairs with a NULL other side too.
No rows, or no pair with both sides non-NULL -> empty Failure.

Needs the exact table (marginals are sums over keys that a sample of pair keys does not
give): on a state in the bounded sketch form (more than ``max_groups`` distinct pairs)
the metric is a Failure that says so and names the fix (raise ``max_groups``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.types import StructType

from streamdq.analyzers.base import GroupingAnalyzer
from streamdq.analyzers.frequency import ExactFrequencies, FrequencySpec, FrequencyState
from streamdq.analyzers.metric import Metric


@dataclass(frozen=True)
class MutualInformation(GroupingAnalyzer):
    """Mutual information of two columns over the pairs with both sides non-NULL (natural log).

    Examples
    --------
    Two columns that always agree share all their information (ln 2 for two equally
    frequent values); the table's key columns are ``k0`` (first column) and ``k1``:

    >>> import math
    >>> import pyarrow as pa
    >>> from streamdq.analyzers.frequency import FrequencyState
    >>> table = pa.table({"k0": ["a", "b"], "k1": ["x", "y"], "count": pa.array([2, 2], pa.int64())})
    >>> state = FrequencyState.from_table(table, n=4, total=4, max_groups=100)
    >>> math.isclose(MutualInformation(("c1", "c2")).metric(state).value, math.log(2))
    True
    """

    NAME = "MutualInformation"
    columns: tuple[str, str]
    where: str | None = None

    def preconditions(self, schema: StructType) -> str | None:
        if len(self.columns) != 2:
            return f"MutualInformation needs exactly two columns, got {len(self.columns)}"
        return super().preconditions(schema)

    def frequency_spec(self) -> FrequencySpec:
        return FrequencySpec(tuple(self.columns), self.where)

    def metric_from_frequencies(self, state: FrequencyState) -> Metric:
        if not isinstance(state, ExactFrequencies):
            return self.failed(
                "MutualInformation needs the exact frequency table, but this state holds more than "
                f"max_groups={state.max_groups} distinct pairs as a bounded sketch; raise max_groups"
            )
        table = state.table
        n = state.n
        if n == 0 or table is None or table.num_rows == 0:
            return self.empty_failure()
        both = table.filter(pc.and_(pc.is_valid(table["k0"]), pc.is_valid(table["k1"])))
        if both.num_rows == 0:
            return self.failed("MutualInformation: no row has both columns non-NULL", empty=True)
        mx = _marginal(table, "k0", "cx")
        my = _marginal(table, "k1", "cy")
        joined = both.join(mx, "k0").join(my, "k1")
        cxy = joined["count"].to_numpy().astype(np.float64)
        cx = joined["cx"].to_numpy().astype(np.float64)
        cy = joined["cy"].to_numpy().astype(np.float64)
        value = float(np.sum(cxy / n * np.log(cxy * n / (cx * cy))))
        return self.ok(value)


def _marginal(table: pa.Table, key: str, name: str) -> pa.Table:
    """Sum of counts per value of ``key`` (pairs with a NULL other side included)."""
    summed = table.group_by(key).aggregate([("count", "sum")])
    return pa.table({key: summed[key], name: summed["count_sum"]})
