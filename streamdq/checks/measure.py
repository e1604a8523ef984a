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

import datetime as _dt
import decimal
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

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
            raise ValueError(f"measure name: got {self.name!r}; expected a non-empty string")
        if not isinstance(self.sql, str) or not self.sql.strip():
            raise ValueError(f"measure {self.name!r}: sql: got {self.sql!r}; expected a SQL query")
        if self.result_type not in RESULT_TYPES:
            raise ValueError(
                f"measure {self.name!r}: result_type: got {self.result_type!r}; "
                f"expected one of {', '.join(RESULT_TYPES)}"
            )

    def to_dict(self) -> dict[str, str]:
        out = {"name": self.name, "sql": self.sql, "result_type": self.result_type}
        if self.description:
            out["description"] = self.description
        return out


@dataclass(frozen=True)
class MeasureResult:
    """The value of one measure at one scope: scalar (single_value), list (list) or
    ``dict[str, object]`` (map); ``None`` with ``failure`` set when it failed.

    ``scope`` is ``batch`` (this microbatch, or the whole input of ``verify``), ``window`` (a
    closed event-time window, ``window`` holds its ``(start, end)`` ISO strings) or ``total``
    (since the query started). Only compiled measures (decomposable aggregates) have window and
    total results."""

    name: str
    result_type: str
    value: object
    failure: str | None = None
    scope: str = "batch"
    window: tuple[str, str] | None = None

    @property
    def ok(self) -> bool:
        return self.failure is None

    def to_json(self) -> dict[str, Any]:
        """A JSON-safe dict (values converted by ``json_value``)."""
        out: dict[str, Any] = {
            "name": self.name,
            "result_type": self.result_type,
            "value": json_value(self.value),
            "scope": self.scope,
        }
        if self.failure is not None:
            out["failure"] = self.failure
        if self.window is not None:
            out["window"] = list(self.window)
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> MeasureResult:
        window = data.get("window")
        value = data.get("value")
        if data.get("result_type") == "list" and isinstance(value, list):
            value = tuple(value)
        return cls(
            str(data["name"]),
            str(data["result_type"]),
            value,
            data.get("failure"),
            str(data.get("scope", "batch")),
            (str(window[0]), str(window[1])) if window else None,
        )


def json_value(value: object) -> object:
    """``value`` as JSON-safe data: int/float/str/bool/None, lists and string-keyed dicts.

    Decimals become int when integral, else float; dates/timestamps ISO strings; bytes hex;
    NaN and infinities stay floats only where the caller allows them (``json.dumps`` writes
    ``NaN``): they are turned into None here so the value is strict JSON."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, decimal.Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, (_dt.datetime, _dt.date)):
        return value.isoformat()
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).hex()
    if isinstance(value, Mapping):
        return {str(k): json_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_value(v) for v in value]
    try:  # numpy scalars
        item = value.item()  # type: ignore[attr-defined]
    except Exception:
        return str(value)
    return json_value(item)
