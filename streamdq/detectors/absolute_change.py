"""AbsoluteChange: order-n differences (Deequ's AbsoluteChangeStrategy; RateOfChange is its alias).

The change of point i is its n-th difference, computed by repeated differencing of the ``n + 1``
values ending at i (order 1: ``x[i] - x[i-1]``; order 0 acts like a threshold on the value itself),
exactly as Deequ's ``diff``. See ``streamdq.detectors.change`` for bounds, batch/online forms and state.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from streamdq.detectors.base import register_detector
from streamdq.detectors.change import ChangeDetector


def nth_difference(values: Sequence[float]) -> float:
    """The ``len(values) - 1``-th difference of ``values`` at its last position, by repeated differencing."""
    current = list(values)
    while len(current) > 1:
        current = [right - left for left, right in zip(current[:-1], current[1:], strict=True)]
    return current[0]


@register_detector
@dataclass(frozen=True)
class AbsoluteChange(ChangeDetector):
    TYPE: ClassVar[str] = "absolute_change"
    MIN_ORDER: ClassVar[int] = 0

    max_rate_decrease: float | None = None
    max_rate_increase: float | None = None
    order: int = 1
    learn_from_anomalies: bool = True

    def __post_init__(self) -> None:
        self._validate()

    def _change(self, window: Sequence[float]) -> float:
        return nth_difference(window)

    def _value_bounds(self, window: Sequence[float], change: float) -> tuple[float | None, float | None]:
        # the n-th difference is linear in the newest value with coefficient 1
        base = window[-1] - change
        lower = None if self.max_rate_decrease is None else base + self.max_rate_decrease
        upper = None if self.max_rate_increase is None else base + self.max_rate_increase
        return lower, upper
