"""Shared machinery of the change detectors (Deequ's BaseChangeStrategy).

A change detector computes a "change" of the newest point from the ``order`` points before it
(``_change(window)`` on ``order + 1`` consecutive values) and flags the point when the change is
``< max_rate_decrease`` or ``> max_rate_increase`` (bounds inclusive = not anomalous; a missing bound
is Scala's Double.MinValue / Double.MaxValue). The flagged index is the position of the later point.

Batch form (exact Deequ semantics): the changes are computed from ``max(start - order, 0)``, so with
too little history before ``start`` the first points of the interval cannot be flagged. Online form:
a window of the last ``order`` values (O(order) per point, independent of history length); warm-up
until ``order`` values were seen; both forms call the same ``_change`` on the same values, so they
agree exactly. With ``learn_from_anomalies=False`` a flagged point does not enter the window (the next
point is compared with the last accepted values); the default ``True`` is what Deequ does.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from streamdq.detectors.base import (
    MAX_DOUBLE,
    MIN_DOUBLE,
    Detector,
    Point,
    Verdict,
    check_interval,
    require,
    resolve_end,
    warming_up,
)


@dataclass(frozen=True)
class ChangeDetector(Detector):
    """Base for AbsoluteChange and RelativeRateOfChange: their four fields and their validation
    live here; a subclass names its ``TYPE``, ``MIN_ORDER`` and how a change is computed."""

    MIN_ORDER: ClassVar[int] = 0

    max_rate_decrease: float | None = None
    max_rate_increase: float | None = None
    order: int = 1
    learn_from_anomalies: bool = True

    def __post_init__(self) -> None:
        require(
            self.max_rate_decrease is not None or self.max_rate_increase is not None,
            self.TYPE,
            "max_rate_decrease",
            "at least one of max_rate_decrease / max_rate_increase has to be set",
            "give max_rate_decrease, max_rate_increase or both",
        )
        require(
            self.low <= self.high,
            self.TYPE,
            "max_rate_increase",
            f"max_rate_increase ({self.high}) has to be >= max_rate_decrease ({self.low})",
            "swap the two bounds",
        )
        require(
            self.order >= self.MIN_ORDER,
            self.TYPE,
            "order",
            f"must be >= {self.MIN_ORDER}, got {self.order}",
            f"give an order of {self.MIN_ORDER} or more",
        )

    @property
    def low(self) -> float:
        return MIN_DOUBLE if self.max_rate_decrease is None else self.max_rate_decrease

    @property
    def high(self) -> float:
        return MAX_DOUBLE if self.max_rate_increase is None else self.max_rate_increase

    @abstractmethod
    def _change(self, window: Sequence[float]) -> float:
        """The change of ``window[-1]`` from the ``order`` values before it (``len(window) == order + 1``)."""

    @abstractmethod
    def _value_bounds(self, window: Sequence[float], change: float) -> tuple[float | None, float | None]:
        """The interval of values of ``window[-1]`` that would not be anomalous."""

    def _flags(self, change: float) -> bool:
        return change < self.low or change > self.high

    def _initial_core(self) -> dict[str, Any]:
        return {"window": []}

    def _step(self, core: dict[str, Any], point: Point) -> tuple[dict[str, Any], Verdict]:
        value = float(point.value)  # type: ignore[arg-type]
        window: list[float] = core["window"]
        if len(window) < self.order:
            core["window"] = [*window, value]
            return core, warming_up(self.order - len(window))
        values = [*window, value]
        change = self._change(values)
        anomalous = self._flags(change)
        lower, upper = self._value_bounds(values, change)
        message = (
            f"change of {change} is not in bounds [{self.low}, {self.high}] (order {self.order})"
            if anomalous
            else f"change of {change} within [{self.low}, {self.high}] (order {self.order})"
        )
        if (not anomalous or self.learn_from_anomalies) and self.order > 0:
            core["window"] = values[-self.order :]
        return core, Verdict(anomalous, lower, upper, change, message=message)

    def detect(self, series: Sequence[float], start: int = 0, end: int | None = None) -> list[int]:
        stop = resolve_end(end)
        check_interval(self.TYPE, start, stop)
        first = max(start - self.order, 0)
        values = [float(v) for v in series[first:stop]]
        return [
            first + j + self.order
            for j in range(len(values) - self.order)
            if self._flags(self._change(values[j : j + self.order + 1]))
        ]
