"""A user-defined aggregation for the access-log example (docs/aggregations.md).

``RequestRate`` is the number of requests per second in an interval. Within one interval its
states merge (the engine adds the counts of the interval's microbatches), but merging the
states of several intervals would divide a longer span's count by one interval's length:
the class says ``combinable = False``, so streamdq serves it as a time series (one value per
window) and refuses to merge it over a range.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from streamdq.aggregations import Aggregation, EmptyInput


@dataclass(frozen=True)
class RequestRate(Aggregation):
    """Requests per second over an interval of ``params["seconds"]`` (the run's window)."""

    NAME = "requestRate"
    TYPE_TAG = "example.RequestRate"
    combinable = False
    count: int = 0

    @classmethod
    def empty(cls) -> RequestRate:
        return cls()

    def merge(self, other: RequestRate) -> RequestRate:
        return RequestRate(self.count + other.count)

    @classmethod
    def from_arrow(cls, values: pa.Array, params: Mapping[str, Any]) -> RequestRate:
        return cls(len(values))

    def value(self, params: Mapping[str, Any]) -> float:
        if self.count == 0:
            raise EmptyInput("no request")
        return self.count / float(params["seconds"])

    @classmethod
    def validate_params(cls, params: Mapping[str, Any]) -> str | None:
        seconds = params.get("seconds")
        if isinstance(seconds, bool) or not isinstance(seconds, int | float) or seconds <= 0:
            return f"params.seconds must be a positive number (the window length), got {seconds!r}"
        return None

    @classmethod
    def _unit_test_params(cls) -> Iterator[dict[str, Any]]:
        yield {"seconds": 300}
