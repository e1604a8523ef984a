"""Measures (DolphinScheduler): a named Spark SQL query over ``data`` that returns one row.

A ``Measure`` is data: its name, its SQL (``FROM data`` names the data under validation: the
DataFrame or table in ``verify``, the microbatch in the streaming job), its result type and
an optional description. The result type says how the one row becomes a value:

* ``single_value``: the row's first (only) column, a scalar;
* ``list``: the row's columns in order, a list (``[100, 10]``);
* ``map``: the row as ``{column name: value}`` (``{"c": 100, "cd": 10}``).

A ``MeasureResult`` is what one run of a measure gave at one scope (``batch``, ``window`` or
``total``; a measure that runs as SQL per microbatch only has ``batch``): a JSON-safe value,
or ``None`` with ``failure`` naming why (no row, several rows, a Spark error, an empty
window). A failed measure never stops the others.

Example::

    >>> m = Measure("Null Count", "select sum(cast((col1 is null) as int)) from data", "single_value")
    >>> r = MeasureResult("Null Count", "single_value", 3)
    >>> r.ok, r.to_json()
    (True, {'name': 'Null Count', 'result_type': 'single_value', 'value': 3, 'scope': 'batch'})
    >>> MeasureResult("x", "list", None, failure="returned 2 rows; a measure must return exactly one").ok
    False
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from streamdq.errors import ConfigError
from streamdq.measure_result import MeasureResult, json_value

__all__ = ["RESULT_TYPES", "Measure", "MeasureResult", "MeasureScope", "ResultType", "json_value"]

ResultType = Literal["single_value", "list", "map"]
RESULT_TYPES: tuple[str, ...] = ("single_value", "list", "map")
MeasureScope = Literal["batch", "window", "total"]


@dataclass(frozen=True)
class Measure:
    """A named SQL query over ``data`` returning exactly one row, read as ``result_type``."""

    name: str
    sql: str
    result_type: ResultType
    description: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise ConfigError("name", f"got {self.name!r}; expected a non-empty measure name")
        if not isinstance(self.sql, str) or not self.sql.strip():
            raise ConfigError("sql", f"measure {self.name!r}: got {self.sql!r}; expected a SQL query")
        if self.result_type not in RESULT_TYPES:
            raise ConfigError(
                "result_type",
                f"measure {self.name!r}: got {self.result_type!r}; expected one of {', '.join(RESULT_TYPES)}",
            )

    def to_dict(self) -> dict[str, str]:
        out = {"name": self.name, "sql": self.sql, "result_type": self.result_type}
        if self.description:
            out["description"] = self.description
        return out
