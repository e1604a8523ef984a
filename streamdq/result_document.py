"""The measure/check/pass result document (DolphinScheduler's stored JSON), as a frozen value.

``MeasureCheckPass.to_dict()`` is exactly the seed's shape, keyed by measure and check names::

    {"measure": {"Null Count": 100, "count vs count distinct": [100, 10],
                 "multiple values": {"c": 100, "cd": 10}},
     "check": {"no null value": false, "count bigger than 50": true, ...},
     "pass": true}

A failed measure's value is ``null``. ``scope`` (``batch``, ``window``, ``total``; None for a
``verify`` run over a table) and ``window`` (ISO start, end) say which judgement the document
is; ``to_record()`` adds them beside the document (``BatchReport`` and the Delta results keep
records). Built by ``streamdq.checks.result_document.build_document``.

Example::

    >>> d = MeasureCheckPass({"Null Count": 100}, {"no null value": False}, True)
    >>> d.to_dict()
    {'measure': {'Null Count': 100}, 'check': {'no null value': False}, 'pass': True}
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class MeasureCheckPass:
    """One judgement's measures, check outcomes and pass verdict (see module docstring)."""

    measure: Mapping[str, Any] = field(default_factory=dict)
    check: Mapping[str, bool] = field(default_factory=dict)
    passed: bool = True
    scope: str | None = None
    window: tuple[str, str] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The seed's document: ``{"measure": {...}, "check": {...}, "pass": bool}``."""
        return {"measure": dict(self.measure), "check": dict(self.check), "pass": bool(self.passed)}

    def to_record(self) -> dict[str, Any]:
        """The document with its scope and window: ``{"scope", "window", "measure_check_pass"}``."""
        return {
            "scope": self.scope,
            "window": list(self.window) if self.window else None,
            "measure_check_pass": self.to_dict(),
        }

    @classmethod
    def from_record(cls, data: Mapping[str, Any]) -> MeasureCheckPass:
        doc = data.get("measure_check_pass") or {}
        window = data.get("window")
        return cls(
            dict(doc.get("measure") or {}),
            {str(k): bool(v) for k, v in (doc.get("check") or {}).items()},
            bool(doc.get("pass", True)),
            data.get("scope"),
            (str(window[0]), str(window[1])) if window else None,
        )
