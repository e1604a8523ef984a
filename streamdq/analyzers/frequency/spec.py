"""What one grouped pass groups: ``FrequencySpec`` (pure data, hashable, no Spark).

``columns`` (``()`` = all columns of the input), the ``where`` filter, and whether it is a
*histogram* grouping (one column cast to string, NULL as the key ``"NullValue"``, a bin of
its own; no row is dropped) with its binning map and default bin, and ``sum_of``: a column
whose per-bin sum the state carries beside the row count (Deequ's Histogram
``aggregateFunction = Sum(aggColumn)``; histograms only). Analyzers with equal
specs share ONE grouped Spark aggregation and ONE stored state; ``key()`` is the stable
text the state store files that state under (it must not change for an existing spec).

>>> FrequencySpec(("a", "b"), "x > 1").key()
'{"columns":["a","b"],"histogram":false,"where":"x > 1"}'
>>> FrequencySpec(("c",)).resolve_columns(["c", "d"]), FrequencySpec(()).resolve_columns(["c", "d"])
(('c',), ('c', 'd'))
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from streamdq.errors import InvalidArgument

NULL_VALUE = "NullValue"


@dataclass(frozen=True)
class FrequencySpec:
    """What one grouped pass groups: columns (``()`` = all), filter, histogram mode."""

    columns: tuple[str, ...]
    where: str | None = None
    histogram: bool = False
    # histogram binning (Histogram's binning map): (key, bin) pairs, the bin of other keys
    bins: tuple[tuple[str, str], ...] = ()
    default_bin: str | None = None
    # histogram aggregate: the column summed per bin (``CAST(col AS BIGINT)``, as Deequ's Sum)
    sum_of: str | None = None

    def __post_init__(self) -> None:
        if self.sum_of is not None and not self.histogram:
            raise InvalidArgument("FrequencySpec.sum_of (a per-bin sum) needs a histogram grouping")

    def key(self) -> str:
        body: dict[str, Any] = {
            "columns": list(self.columns),
            "where": self.where,
            "histogram": self.histogram,
        }
        if self.bins or self.default_bin is not None:
            body["bins"] = [list(b) for b in self.bins]
            body["default_bin"] = self.default_bin
        if self.sum_of is not None:
            body["sum_of"] = self.sum_of
        return json.dumps(body, sort_keys=True, separators=(",", ":"))

    def resolve_columns(self, all_columns: list[str]) -> tuple[str, ...]:
        return self.columns if self.columns else tuple(all_columns)
