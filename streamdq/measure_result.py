"""The value of a measure at one scope (``MeasureResult``), JSON-safe.

It lives at the report layer (``BatchReport.measures``, ``VerificationResult.measures``);
``streamdq.checks.measure`` re-exports it beside ``Measure``.

>>> MeasureResult("counts", "map", {"c": 3, "cd": 2}).to_json()["value"]
{'c': 3, 'cd': 2}
"""

from __future__ import annotations

import datetime as _dt
import decimal
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


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
