"""PageHinkley: river's Page-Hinkley change detector on a metric series (see ``river_drift``).

Flags the point at which the cumulative deviation from the running mean exceeds ``threshold``;
parameters are river's (``min_instances``, ``delta``, ``threshold``, ``alpha``, ``mode``: "up",
"down" or "both").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from river import drift

from streamdq.detectors.base import require
from streamdq.detectors.river_drift import RiverDriftDetector

MODES = ("up", "down", "both")


@dataclass(frozen=True)
class PageHinkley(RiverDriftDetector):
    """Flags the point where river's Page-Hinkley test sees the running mean shift.

    Warm-up: ``min_instances`` points.

    Examples
    --------
    >>> PageHinkley(min_instances=5, threshold=10.0).detect([1.0] * 50 + [10.0] * 30)
    [51]
    >>> PageHinkley(mode="sideways")
    Traceback (most recent call last):
    ...
    streamdq.errors.ConfigError: mode: must be one of up, down, both, got 'sideways' (detector page_hinkley) (fix: use one of up, down, both)
    """

    TYPE: ClassVar[str] = "page_hinkley"

    min_instances: int = 30
    delta: float = 0.005
    threshold: float = 50.0
    alpha: float = 1 - 0.0001
    mode: str = "both"

    def __post_init__(self) -> None:
        kind = self.TYPE
        require(
            self.min_instances >= 1,
            kind,
            "min_instances",
            f"must be >= 1, got {self.min_instances}",
            "e.g. 30",
        )
        require(self.delta >= 0, kind, "delta", f"must be >= 0, got {self.delta}", "e.g. 0.005")
        require(self.threshold > 0, kind, "threshold", f"must be > 0, got {self.threshold}", "e.g. 50.0")
        require(0 < self.alpha <= 1, kind, "alpha", f"must be in (0, 1], got {self.alpha}", "e.g. 0.9999")
        require(
            self.mode in MODES,
            kind,
            "mode",
            f"must be one of {', '.join(MODES)}, got {self.mode!r}",
            f"use one of {', '.join(MODES)}",
        )

    @classmethod
    def _unit_test_params(cls) -> Iterable[Mapping[str, Any]]:
        yield {"min_instances": 5, "threshold": 10.0}
        yield {"min_instances": 2}
        yield {"min_instances": 3, "threshold": 5.0, "mode": "up"}

    def _new_river(self) -> Any:
        return drift.PageHinkley(
            min_instances=self.min_instances,
            delta=self.delta,
            threshold=self.threshold,
            alpha=self.alpha,
            mode=self.mode,
        )

    @property
    def warm_up_points(self) -> int:
        return self.min_instances
