"""ADWIN: river's adaptive-windowing drift detector on a metric series (see ``river_drift``).

Flags the point at which the mean of the recent window differs significantly (confidence ``delta``)
from the older part; parameters are river's (``delta``, ``clock``, ``max_buckets``,
``min_window_length``, ``grace_period``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from river import drift

from streamdq.detectors.base import require
from streamdq.detectors.river_drift import RiverDriftDetector


@dataclass(frozen=True)
class Adwin(RiverDriftDetector):
    """Flags the point where river's ADWIN sees the mean of the recent window drift away.

    Warm-up: ``grace_period`` points.

    Examples
    --------
    >>> Adwin(grace_period=5).detect([1.0] * 50 + [10.0] * 30)
    [63]
    >>> Adwin(delta=2.0)
    Traceback (most recent call last):
    ...
    streamdq.errors.ConfigError: delta: must be in (0, 1), got 2.0 (detector adwin) (fix: e.g. 0.002: the smaller, the fewer false alarms)
    """

    TYPE: ClassVar[str] = "adwin"

    delta: float = 0.002
    clock: int = 32
    max_buckets: int = 5
    min_window_length: int = 5
    grace_period: int = 10

    def __post_init__(self) -> None:
        require(
            0 < self.delta < 1,
            self.TYPE,
            "delta",
            f"must be in (0, 1), got {self.delta}",
            "e.g. 0.002: the smaller, the fewer false alarms",
        )
        for key in ("clock", "max_buckets", "min_window_length", "grace_period"):
            require(
                getattr(self, key) >= 1,
                self.TYPE,
                key,
                f"must be >= 1, got {getattr(self, key)}",
                "give 1 or more",
            )

    @classmethod
    def _unit_test_params(cls) -> Iterable[Mapping[str, Any]]:
        yield {"grace_period": 2}
        yield {"delta": 0.05, "clock": 4, "min_window_length": 3, "grace_period": 8}

    def _new_river(self) -> Any:
        return drift.ADWIN(
            delta=self.delta,
            clock=self.clock,
            max_buckets=self.max_buckets,
            min_window_length=self.min_window_length,
            grace_period=self.grace_period,
        )

    @property
    def warm_up_points(self) -> int:
        return self.grace_period
