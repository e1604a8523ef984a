"""Histogram: the distribution of one column's values (cast to string).

Grouping analyzer on its own histogram ``FrequencySpec``: where-filter, values cast to
string with NULL as the key ``"NullValue"`` (a bin of its own), booleans "true"/"false".
Value: ``{"number_of_bins": #all keys, "values": {key: {"absolute": count, "ratio": r}}}``
with the top ``max_detail_bins`` keys (count desc, key asc); ``ratio`` = count / the
UNFILTERED row count (or the absolute count when ``compute_frequencies_as_ratio`` is
False). ``max_detail_bins`` outside 1..1000 -> Failure. Empty input -> zero bins (a
success, as in Deequ).

From the sketch form (more than ``max_groups`` keys): the top bins come from the
frequent-items sketch (at most ``max_detail_bins`` of the keys it still tracks, so fewer
when many keys weigh the same; absolute counts are estimates within its guaranteed bounds;
``error_bound`` = the widest count uncertainty divided by the ratio denominator), and
``number_of_bins`` is the distinct-key estimate (its 3-sigma bound in ``extra``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pyspark.sql.types import StructType

from streamdq.analyzers.base import GroupingAnalyzer, register_analyzer
from streamdq.analyzers.frequency import NULL_VALUE, FrequencySpec, FrequencyState
from streamdq.analyzers.metric import Metric

MAX_DETAIL_BINS = 1000

__all__ = ["Histogram", "NULL_VALUE", "MAX_DETAIL_BINS"]


@register_analyzer
@dataclass(frozen=True)
class Histogram(GroupingAnalyzer):
    NAME = "Histogram"
    column: str
    max_detail_bins: int = MAX_DETAIL_BINS
    compute_frequencies_as_ratio: bool = True
    where: str | None = None

    def _bins_problem(self) -> str | None:
        bins = self.max_detail_bins
        if isinstance(bins, bool) or not isinstance(bins, int) or not 1 <= bins <= MAX_DETAIL_BINS:
            return f"Histogram max_detail_bins must be in 1..{MAX_DETAIL_BINS}, got {bins!r}"
        return None

    def preconditions(self, schema: StructType) -> str | None:
        return self._bins_problem() or super().preconditions(schema)

    def frequency_spec(self) -> FrequencySpec:
        return FrequencySpec((self.column,), self.where, histogram=True)

    def metric_from_frequencies(self, state: FrequencyState) -> Metric:
        reason = self._bins_problem()
        if reason is not None:
            return self.failed(reason)
        try:
            top, count_error = state.top_items(self.max_detail_bins)
        except ValueError as exc:
            return self.failed(f"Histogram: {exc}")
        groups, groups_bound = state.count_groups()
        denominator = state.total
        values: dict[str, dict[str, Any]] = {}
        for key, count in top:
            if self.compute_frequencies_as_ratio:
                ratio = count / denominator if denominator else 0.0
            else:
                ratio = float(count)
            values[key] = {"absolute": int(count), "ratio": ratio}
        value = {"number_of_bins": int(round(groups)), "values": values}
        if not state.approximate:
            return self.ok(value)
        bound = (
            count_error / denominator if self.compute_frequencies_as_ratio and denominator else count_error
        )
        return self.ok(
            value, approximate=True, error_bound=bound, extra={"number_of_bins_bound": groups_bound}
        )
