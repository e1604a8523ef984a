"""AbsoluteChange: order-n differences (Deequ's AbsoluteChangeStrategy; RateOfChange is its alias).

The change of point i is its n-th difference, computed by repeated differencing of the ``n + 1``
values ending at i (order 1: ``x[i] - x[i-1]``; order 0 acts like a threshold on the value itself),
exactly as Deequ's ``diff``. See ``streamdq.detectors.change`` for bounds, batch/online forms and state.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from streamdq.detectors.change import ChangeDetector


def nth_difference(values: Sequence[float]) -> float:
    """The ``len(values) - 1``-th difference of ``values`` at its last position, by repeated differencing."""
    current = list(values)
    while len(current) > 1:
        current = [right - left for left, right in zip(current[:-1], current[1:], strict=True)]
    return current[0]


@dataclass(frozen=True)
class AbsoluteChange(ChangeDetector):
    """Flags a point whose ``order``-th difference leaves ``[max_rate_decrease, max_rate_increase]``.

    Warm-up: the first ``order`` points. The expected interval is the values of the point that
    would keep the change inside the bounds.

    Examples
    --------
    >>> from streamdq.detectors import Point
    >>> detector = AbsoluteChange(max_rate_decrease=-5.0, max_rate_increase=5.0)
    >>> detector.detect([10.0, 12.0, 30.0, 31.0])
    [2]
    >>> state = detector.initial_state()
    >>> state, verdict = detector.update(state, Point(0.0, 10.0, 0))
    >>> verdict.warming_up, verdict.message
    (True, 'warming up: waiting for 1 more points')
    >>> state, verdict = detector.update(state, Point(1.0, 30.0, 1))
    >>> verdict.anomalous, verdict.lower, verdict.upper
    (True, 5.0, 15.0)
    """

    TYPE: ClassVar[str] = "absolute_change"
    MIN_ORDER: ClassVar[int] = 0

    @classmethod
    def _unit_test_params(cls) -> Iterable[Mapping[str, Any]]:
        yield {"max_rate_decrease": -3.0, "max_rate_increase": 3.0}
        yield {"max_rate_increase": 5.0, "order": 2, "learn_from_anomalies": False}
        yield {"max_rate_decrease": -1.0, "order": 0}

    def _change(self, window: Sequence[float]) -> float:
        return nth_difference(window)

    def _value_bounds(self, window: Sequence[float], change: float) -> tuple[float | None, float | None]:
        # the n-th difference is linear in the newest value with coefficient 1
        base = window[-1] - change
        lower = None if self.max_rate_decrease is None else base + self.max_rate_decrease
        upper = None if self.max_rate_increase is None else base + self.max_rate_increase
        return lower, upper
