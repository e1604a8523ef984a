"""PageHinkley: river's Page-Hinkley change detector on a metric series (see ``river_drift``).

Flags the point at which the cumulative deviation from the running mean exceeds ``threshold``;
parameters are river's (``min_instances``, ``delta``, ``threshold``, ``alpha``, ``mode``: "up",
"down" or "both").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from river import drift

from streamdq.detectors.base import register_detector, require
from streamdq.detectors.river_drift import RiverDriftDetector

MODES = ("up", "down", "both")


@register_detector
@dataclass(frozen=True)
class PageHinkley(RiverDriftDetector):
    TYPE: ClassVar[str] = "page_hinkley"

    min_instances: int = 30
    delta: float = 0.005
    threshold: float = 50.0
    alpha: float = 1 - 0.0001
    mode: str = "both"

    def __post_init__(self) -> None:
        require(
            self.min_instances >= 1, self.TYPE, "min_instances", f"must be >= 1, got {self.min_instances}"
        )
        require(self.delta >= 0, self.TYPE, "delta", f"must be >= 0, got {self.delta}")
        require(self.threshold > 0, self.TYPE, "threshold", f"must be > 0, got {self.threshold}")
        require(0 < self.alpha <= 1, self.TYPE, "alpha", f"must be in (0, 1], got {self.alpha}")
        require(
            self.mode in MODES, self.TYPE, "mode", f"must be one of {', '.join(MODES)}, got {self.mode!r}"
        )

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
