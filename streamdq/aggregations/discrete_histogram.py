"""``discreteValuesHistogram``: how often each value occurs (CDAP's discrete values histogram).

Exact: the state keeps one count per distinct value, so it is NOT bounded; use it for
discrete and categorical fields with few values (status codes, methods, referrer hosts). For
fields with many distinct values use the ``Histogram`` analyzer (``has_histogram_values``),
whose state becomes a frequent-items sketch past ``max_groups`` keys.

Values are keyed by their Arrow string cast (``200``, ``true``, ``1.5``); NULLs are not
counted. Combinable: merging two histograms adds their counts, so a histogram over any range
of windows is the merge of the windows' histograms. Value: ``{value: count}`` (CDAP's
``{"200": 504, "404": 23}``); zero values give ``{}`` (a success). Takes no params.

>>> import pyarrow as pa
>>> a = DiscreteValuesHistogram.from_arrow(pa.array([200, 200, 404]), {})
>>> b = DiscreteValuesHistogram.from_arrow(pa.array([200, 500]), {})
>>> a.merge(b).value({})
{'200': 3, '404': 1, '500': 1}
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Self

import pyarrow as pa
import pyarrow.compute as pc

from streamdq.analyzers.aggregation import Aggregation


def as_strings(values: pa.Array) -> pa.Array:
    """The values as Arrow strings (dictionary arrays decoded first)."""
    if pa.types.is_dictionary(values.type):
        values = values.dictionary_decode()
    if pa.types.is_string(values.type):
        return values
    return pc.cast(values, pa.string())


@dataclass(frozen=True)
class DiscreteValuesHistogram(Aggregation):
    """Exact counts per distinct value (see the module docstring).

    Examples
    --------
    ``from_arrow`` gets the non-NULL values of a batch (both engine paths drop the NULLs);
    the state's bytes carry its tag and read back:

    >>> import pyarrow as pa
    >>> h = DiscreteValuesHistogram.from_arrow(pa.array(["GET", "POST", "GET"]), {})
    >>> h.merge(DiscreteValuesHistogram.empty()).value({})
    {'GET': 2, 'POST': 1}
    >>> DiscreteValuesHistogram.from_bytes(h.to_bytes()) == h
    True
    """

    NAME = "discreteValuesHistogram"
    TYPE_TAG = "agg.DiscreteValuesHistogram"
    counts: dict[str, int] = field(default_factory=dict)

    @classmethod
    def empty(cls) -> Self:
        return cls()

    def merge(self, other: Self) -> Self:
        if not other.counts:
            return self
        if not self.counts:
            return other
        total = Counter(self.counts)
        total.update(other.counts)
        return type(self)(dict(total))

    @classmethod
    def from_arrow(cls, values: pa.Array, params: Mapping[str, Any]) -> Self:
        if len(values) == 0:
            return cls()
        counts = pc.value_counts(as_strings(values))
        keys = counts.field("values").to_pylist()
        return cls({str(k): int(n) for k, n in zip(keys, counts.field("counts").to_pylist(), strict=True)})

    def value(self, params: Mapping[str, Any]) -> dict[str, int]:
        return dict(sorted(self.counts.items(), key=lambda kv: (-kv[1], kv[0])))

    @classmethod
    def validate_params(cls, params: Mapping[str, Any]) -> str | None:
        return f"{cls.NAME} takes no params, got {sorted(params)}" if params else None

    @classmethod
    def _unit_test_params(cls) -> Iterator[dict[str, Any]]:
        yield {}
