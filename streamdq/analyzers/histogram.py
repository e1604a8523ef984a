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

Aggregate function (Deequ's ``aggregateFunction = Sum(aggColumn)``): with
``sum_column="amount"`` the value of a bin is the sum of ``CAST(amount AS BIGINT)`` over
its rows instead of their count (NULL values skipped; a bin whose values are all NULL reads
0 and ranks last, as in Deequ). Bins are ranked by that sum desc, key asc; ``ratio`` = bin
sum / the sum over ALL rows (unfiltered, as Deequ's ``Sum.total``); ``tail_count`` = the
sum of the bins not shown. As in Deequ, ratios need an integral ``sum_column`` (Deequ reads
the total as a long; another type is a Failure); without ratios any numeric column works.
The total sum being NULL (no non-NULL value; also empty input) is an empty Failure; a total
of 0 is a Failure too (Deequ divides into NaN or Infinity). ``number_of_bins`` counts every
bin as before. Example: ``Histogram("country", sum_column="amount")``.

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

from streamdq.analyzers.base import (
    INTEGRAL_TYPES,
    GroupingAnalyzer,
    field_type,
    is_numeric,
)
from streamdq.analyzers.frequency import NULL_VALUE, FrequencySpec, FrequencyState
from streamdq.analyzers.metric import COLUMN, Distribution, Metric
from streamdq.errors import ConfigError

MAX_DETAIL_BINS = 1000

__all__ = ["Histogram", "NULL_VALUE", "MAX_DETAIL_BINS"]


@dataclass(frozen=True)
class Histogram(GroupingAnalyzer):
    """Count (and ratio) per value of one column: the top max_detail_bins bins in detail.

    Examples
    --------
    Bins are the values cast to string (NULL is the bin ``NullValue``), ordered by count;
    the ratio's denominator is every row seen (``total``):

    >>> import pyarrow as pa
    >>> from streamdq.analyzers.frequency import FrequencyState
    >>> table = pa.table({"k0": ["a", "NullValue", "b"], "count": pa.array([2, 1, 1], pa.int64())})
    >>> state = FrequencyState.from_table(table, n=4, total=4, max_groups=100)
    >>> h = Histogram("item", max_detail_bins=2).metric(state.merge(Histogram("item").empty_state())).value
    >>> h["number_of_bins"], h["values"], h["tail_count"]
    (3, {'a': {'absolute': 2, 'ratio': 0.5}, 'NullValue': {'absolute': 1, 'ratio': 0.25}}, 1)
    """

    NAME = "Histogram"
    column: str
    max_detail_bins: int = MAX_DETAIL_BINS
    compute_frequencies_as_ratio: bool = True
    where: str | None = None
    binning: Mapping[str, str] | tuple[tuple[str, str], ...] = ()  # a tuple of pairs once built
    default_bin: str | None = None
    sum_column: str | None = None  # Deequ's aggregateFunction = Sum(sum_column); None = Count

    def __post_init__(self) -> None:
        binning: Any = self.binning
        pairs = binning.items() if isinstance(binning, Mapping) else binning
        try:
            canonical = tuple(sorted((str(k), str(v)) for k, v in pairs))
        except (TypeError, ValueError):
            raise ConfigError(
                "binning", f"Histogram: got {binning!r}", "give a mapping of value -> bin name"
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
        if self.sum_column is None:
            spec.pop("sum_column", None)
        return spec

    def input_columns(self) -> tuple[str, ...]:
        return (self.column,) if self.sum_column is None else (self.column, self.sum_column)

    @property
    def entity(self) -> str:
        return COLUMN  # a histogram of ``column``, whatever it sums (Deequ's HistogramMetric)

    @property
    def instance(self) -> str:
        return self.column

    def _bins_problem(self) -> str | None:
        bins = self.max_detail_bins
        if isinstance(bins, bool) or not isinstance(bins, int) or not 1 <= bins <= MAX_DETAIL_BINS:
            return f"Histogram max_detail_bins must be in 1..{MAX_DETAIL_BINS}, got {bins!r}"
        return None

    def preconditions(self, schema: StructType) -> str | None:
        return self._bins_problem() or super().preconditions(schema) or self._sum_problem(schema)

    def _sum_problem(self, schema: StructType) -> str | None:
        if self.sum_column is None:
            return None
        dtype = field_type(schema, self.sum_column)
        if not is_numeric(dtype):
            return f"Histogram sum_column {self.sum_column!r} must be numeric, got {dtype}"
        if self.compute_frequencies_as_ratio and not isinstance(dtype, INTEGRAL_TYPES):
            return (
                f"Histogram Sum({self.sum_column}) ratios need an integral column (Deequ reads the "
                f"total sum as a long), got {dtype}; use compute_frequencies_as_ratio=False"
            )
        return None

    def frequency_spec(self) -> FrequencySpec:
        return FrequencySpec(
            (self.column,),
            self.where,
            histogram=True,
            bins=tuple(self._pairs()),
            default_bin=self.default_bin,
            sum_of=self.sum_column,
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
        mass = state.n  # rows in the bins (or, with Sum, the bins' summed values)
        if self.sum_column is not None:
            sums = state.sums
            if sums is None:  # a state of another spec: never built for this analyzer
                return self.failed(f"Histogram Sum({self.sum_column}): the state carries no sums")
            mass = sums.kept or 0
            if self.compute_frequencies_as_ratio:
                if sums.total is None:
                    return self.failed(
                        f"Histogram Sum({self.sum_column}): no non-NULL value to divide by", empty=True
                    )
                if sums.total == 0:
                    return self.failed(
                        f"Histogram Sum({self.sum_column}): the ratio denominator sum({self.sum_column}) is 0"
                    )
                denominator = sums.total
        bins: dict[str, tuple[int, float]] = {}
        for key, count in top:
            if self.compute_frequencies_as_ratio:
                ratio = count / denominator if denominator else 0.0
            else:
                ratio = float(count)
            bins[key] = (int(count), ratio)
        shown = sum(int(count) for _, count in top)
        tail = int(mass) - shown if self.sum_column is not None else max(0, int(mass) - shown)
        value = Distribution.of(bins, number_of_bins=int(round(groups)), tail_count=tail)
        if not state.approximate:
            return self.ok(value)
        bound = (
            count_error / denominator if self.compute_frequencies_as_ratio and denominator else count_error
        )
        return self.ok(
            value, approximate=True, error_bound=bound, extra={"number_of_bins_bound": groups_bound}
        )
