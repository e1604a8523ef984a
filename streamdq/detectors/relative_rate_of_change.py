"""RelativeRateOfChange: the lag ratio ``x[i] / x[i - order]`` (Deequ's RelativeRateOfChangeStrategy).

Unlike AbsoluteChange this is a lag, not repeated differencing. Division follows IEEE doubles as in
Scala: ``x / 0`` is +-infinity and is flagged by any finite bound, ``0 / 0`` is NaN and is never
flagged. ``order`` must be >= 1. See ``streamdq.detectors.change`` for bounds, forms and state.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from streamdq.detectors.change import ChangeDetector


def ieee_divide(numerator: float, denominator: float) -> float:
    """``numerator / denominator`` with IEEE semantics (no ZeroDivisionError)."""
    if denominator != 0:
        return numerator / denominator
    if numerator == 0 or math.isnan(numerator):
        return math.nan
    return math.copysign(math.inf, numerator) * math.copysign(1.0, denominator)


@dataclass(frozen=True)
class RelativeRateOfChange(ChangeDetector):
    """Flags a point whose ratio to the point ``order`` steps back leaves
    ``[max_rate_decrease, max_rate_increase]``.

    Warm-up: the first ``order`` points. ``order`` must be >= 1.

    Examples
    --------
    >>> detector = RelativeRateOfChange(max_rate_decrease=0.5, max_rate_increase=2.0)
    >>> detector.detect([100.0, 120.0, 300.0, 280.0])
    [2]
    >>> RelativeRateOfChange(max_rate_increase=2.0, order=0)
    Traceback (most recent call last):
    ...
    streamdq.errors.ConfigError: order: must be >= 1, got 0 (detector relative_rate_of_change) (fix: give an order of 1 or more)
    """

    TYPE: ClassVar[str] = "relative_rate_of_change"
    MIN_ORDER: ClassVar[int] = 1

    @classmethod
    def _unit_test_params(cls) -> Iterable[Mapping[str, Any]]:
        yield {"max_rate_decrease": 0.5, "max_rate_increase": 2.0}
        yield {"max_rate_increase": 1.5, "order": 2, "learn_from_anomalies": False}

    def _change(self, window: Sequence[float]) -> float:
        return ieee_divide(window[-1], window[0])

    def _value_bounds(self, window: Sequence[float], change: float) -> tuple[float | None, float | None]:
        reference = window[0]
        if reference == 0 or not math.isfinite(reference):
            return None, None
        low = None if self.max_rate_decrease is None else reference * self.max_rate_decrease
        high = None if self.max_rate_increase is None else reference * self.max_rate_increase
        if reference < 0:
            low, high = high, low
        return low, high
