"""Metric: what an analyzer says about the data, a value or a failure.

A metric names its entity (``Dataset``, ``Column`` or ``Mutlicolumn`` as in Deequ, spelled
``Multicolumn`` here), the analyzer name and the instance (the column or comma-joined
columns, ``*`` for the dataset). ``value`` is a float for scalar metrics, or a plain dict
for distribution-valued metrics (Histogram, DataType, ApproxQuantiles). A failed metric
carries ``failure`` (the reason) and ``value`` None; ``empty`` marks a failure caused by
no input in scope, which a constraint with a ``where`` filter treats as success
(SEMANTICS.md, constraints). ``approximate`` metrics come from sketches and carry
``error_bound`` (the sketch's own bound, e.g. normalized rank error for KLL, relative
standard error for HLL).

It is a value every layer carries (analyzers make it, checks judge it, ``BatchReport`` holds
it), so it lives at the bottom of the import layers beside ``report`` and ``errors``;
``streamdq.analyzers.metric`` re-exports it.

>>> failure(COLUMN, "Completeness", "id", "no rows", empty=True).ok
False
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

DATASET = "Dataset"
COLUMN = "Column"
MULTICOLUMN = "Multicolumn"


@dataclass(frozen=True)
class Metric:
    entity: str
    name: str
    instance: str
    value: Any = None
    failure: str | None = None
    empty: bool = False
    approximate: bool = False
    error_bound: float | None = None
    extra: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @property
    def ok(self) -> bool:
        return self.failure is None

    @property
    def scalar(self) -> float | None:
        """The value as a float when it is scalar and successful, else None."""
        if self.failure is None and isinstance(self.value, int | float) and not isinstance(self.value, bool):
            return float(self.value)
        return None

    def to_dict(self) -> dict[str, Any]:
        value = self.value
        if isinstance(value, float) and not math.isfinite(value):
            value = repr(value)
        out: dict[str, Any] = {
            "entity": self.entity,
            "name": self.name,
            "instance": self.instance,
            "value": value,
        }
        if self.failure is not None:
            out["failure"] = self.failure
            out["empty"] = self.empty
        if self.approximate:
            out["approximate"] = True
            out["error_bound"] = self.error_bound
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Metric:
        value = data.get("value")
        if isinstance(value, str) and value in ("nan", "inf", "-inf"):
            value = float(value)
        return cls(
            entity=data["entity"],
            name=data["name"],
            instance=data["instance"],
            value=value,
            failure=data.get("failure"),
            empty=bool(data.get("empty", False)),
            approximate=bool(data.get("approximate", False)),
            error_bound=data.get("error_bound"),
        )


def success(entity: str, name: str, instance: str, value: Any, **kwargs: Any) -> Metric:
    return Metric(entity, name, instance, value=value, **kwargs)


def failure(entity: str, name: str, instance: str, reason: str, *, empty: bool = False) -> Metric:
    return Metric(entity, name, instance, failure=reason, empty=empty)
