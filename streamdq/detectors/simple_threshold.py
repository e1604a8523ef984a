"""SimpleThreshold: a fixed band ``[lower_bound, upper_bound]`` (Deequ's SimpleThresholdStrategy).

A point is anomalous if it is below ``lower_bound`` or above ``upper_bound`` (bounds inclusive);
the default lower bound is Scala's ``Double.MinValue`` (-1.797e308); ``lower_bound > upper_bound`` is
an error. Stateless: no warm-up, nothing learned, O(1) per point; online and batch forms agree trivially.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from streamdq.detectors.base import (
    MIN_DOUBLE,
    Detector,
    Point,
    Verdict,
    check_interval,
    require,
    resolve_end,
)


@dataclass(frozen=True)
class SimpleThreshold(Detector):
    """Flags a point outside ``[lower_bound, upper_bound]``; no warm-up, nothing learned.

    Examples
    --------
    >>> SimpleThreshold(upper_bound=1.0, lower_bound=0.0).detect([0.5, 1.5, -0.1, 1.0])
    [1, 2]
    >>> SimpleThreshold(upper_bound=0.0, lower_bound=1.0)
    Traceback (most recent call last):
    ...
    streamdq.errors.ConfigError: lower_bound: the lower bound 1.0 must be smaller or equal to the upper bound 0.0 (detector simple_threshold) (fix: swap the two bounds)
    """

    TYPE: ClassVar[str] = "simple_threshold"

    upper_bound: float
    lower_bound: float = MIN_DOUBLE

    def __post_init__(self) -> None:
        require(
            self.lower_bound <= self.upper_bound,
            self.TYPE,
            "lower_bound",
            f"the lower bound {self.lower_bound} must be smaller or equal to the upper bound {self.upper_bound}",
            "swap the two bounds",
        )

    @classmethod
    def _unit_test_params(cls) -> Iterable[Mapping[str, Any]]:
        yield {"upper_bound": 10.0}
        yield {"upper_bound": 5.0, "lower_bound": -5.0}

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
