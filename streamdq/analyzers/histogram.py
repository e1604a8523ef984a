"""Histogram: the distribution of one column's values (cast to string).

Grouping analyzer on its own histogram ``FrequencySpec``: where-filter, values cast to
string with NULL as the key ``"NullValue"`` (a bin of its own), booleans "true"/"false".
Value: ``{"number_of_bins": #all keys, "values": {key: {"absolute": count, "ratio": r}},
"tail_count": rows in the bins not shown}`` with the top ``max_detail_bins`` keys (count
desc, key asc); ``tail_count`` is Deequ's tail: the rows in scope outside the detailed bins
(0 when every bin is shown); ``ratio`` = count / the
UNFILTERED row count (or the absolute count when ``compute_frequencies_as_ratio`` is
False). ``max_detail_bins`` outside 1..1000 -> Failure. Empty input -> zero bins (a
success, as in Deequ).

Binning (Deequ's ``binningUdf``, as data so it serializes): ``binning`` maps a key (the
value cast to string; ``"NullValue"`` for NULL) to a bin name, and ``default_bin`` names the
bin of every key not in the map (without it, such keys stay their own bins). The mapping is
applied before grouping, in the same Spark expression on both engine paths, so states of
one binning merge like any histogram. Example: ``Histogram("country", binning={"DE": "EU",
"FR": "EU"}, default_bin="other")``.

Not supported: Deequ's ``Sum(aggColumn)`` aggregate function (a per-bin sum of another
column instead of the row count): the shared frequency state counts rows per key.

From the sketch form (more than ``max_groups`` keys): the top bins come from the
frequent-items sketch (at most ``max_detail_bins`` of the keys it still tracks, so fewer
when many keys weigh the same; absolute counts are estimates within its guaranteed bounds;
``error_bound`` = the widest count uncertainty divided by the ratio denominator), and
``number_of_bins`` is the distinct-key estimate (its 3-sigma bound in ``extra``).
"""

from __future__ import annotations

from collections.abc import Mapping
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
    binning: Mapping[str, str] | tuple[tuple[str, str], ...] = ()  # a tuple of pairs once built
    default_bin: str | None = None

    def __post_init__(self) -> None:
        binning: Any = self.binning
        pairs = binning.items() if isinstance(binning, Mapping) else binning
        try:
            canonical = tuple(sorted((str(k), str(v)) for k, v in pairs))
        except (TypeError, ValueError):
            raise ValueError(
                f"Histogram binning: got {binning!r}; expected a mapping of value -> bin name"
            ) from None
        object.__setattr__(self, "binning", canonical)

    def _pairs(self) -> list[tuple[str, str]]:
        return list(self.binning.items() if isinstance(self.binning, Mapping) else self.binning)

    def to_spec(self) -> dict[str, Any]:
        spec = super().to_spec()
        if not self.binning:
            spec.pop("binning", None)
        else:
            spec["binning"] = dict(self._pairs())
        if self.default_bin is None:
            spec.pop("default_bin", None)
        return spec

    def _bins_problem(self) -> str | None:
        bins = self.max_detail_bins
        if isinstance(bins, bool) or not isinstance(bins, int) or not 1 <= bins <= MAX_DETAIL_BINS:
            return f"Histogram max_detail_bins must be in 1..{MAX_DETAIL_BINS}, got {bins!r}"
        return None

    def preconditions(self, schema: StructType) -> str | None:
        return self._bins_problem() or super().preconditions(schema)

    def frequency_spec(self) -> FrequencySpec:
        return FrequencySpec(
            (self.column,),
            self.where,
            histogram=True,
            bins=tuple(self._pairs()),
            default_bin=self.default_bin,
        )

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
        shown = sum(int(count) for _, count in top)
        tail = max(0, int(state.n) - shown)
        value = {"number_of_bins": int(round(groups)), "values": values, "tail_count": tail}
        if not state.approximate:
            return self.ok(value)
        bound = (
            count_error / denominator if self.compute_frequencies_as_ratio and denominator else count_error
        )
        return self.ok(
            value, approximate=True, error_bound=bound, extra={"number_of_bins_bound": groups_bound}
        )
