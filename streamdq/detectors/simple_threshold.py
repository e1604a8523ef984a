"""SimpleThreshold: a fixed band ``[lower_bound, upper_bound]`` (Deequ's SimpleThresholdStrategy).

A point is anomalous if it is below ``lower_bound`` or above ``upper_bound`` (bounds inclusive);
the default lower bound is Scala's ``Double.MinValue`` (-1.797e308); ``lower_bound > upper_bound`` is
an error. Stateless: no warm-up, nothing learned, O(1) per point; online and batch forms agree trivially.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from streamdq.detectors.base import (
    MIN_DOUBLE,
    Detector,
    Point,
    Verdict,
    check_interval,
    register_detector,
    require,
    resolve_end,
)


@register_detector
@dataclass(frozen=True)
class SimpleThreshold(Detector):
    TYPE: ClassVar[str] = "simple_threshold"

    upper_bound: float
    lower_bound: float = MIN_DOUBLE

    def __post_init__(self) -> None:
        require(
            self.lower_bound <= self.upper_bound,
            self.TYPE,
            "lower_bound",
            f"the lower bound {self.lower_bound} must be smaller or equal to the upper bound {self.upper_bound}",
        )

    def _initial_core(self) -> dict[str, Any]:
        return {}

    def _outside(self, value: float) -> bool:
        return value < self.lower_bound or value > self.upper_bound

    def _step(self, core: dict[str, Any], point: Point) -> tuple[dict[str, Any], Verdict]:
        value = float(point.value)  # type: ignore[arg-type]
        anomalous = self._outside(value)
        message = (
            f"value {value} is not in bounds [{self.lower_bound}, {self.upper_bound}]"
            if anomalous
            else f"value {value} within [{self.lower_bound}, {self.upper_bound}]"
        )
        return core, Verdict(anomalous, self.lower_bound, self.upper_bound, None, message=message)

    def detect(self, series: Sequence[float], start: int = 0, end: int | None = None) -> list[int]:
        stop = resolve_end(end)
        check_interval(self.TYPE, start, stop)
        return [i for i in range(start, min(stop, len(series))) if self._outside(float(series[i]))]
