"""Shared adapter for river's drift detectors on a metric series (ADWIN, PageHinkley).

A drift detector is fed every value; the verdict is anomalous when river reports ``drift_detected``
on that point (the metric's distribution changed, e.g. a mean shift), with river's current estimate
as the score. Drift detectors always learn every point (that is how they work), so there is no
``learn_from_anomalies`` switch. Warm-up: river's own grace period / minimum number of instances.
State: the pickled river detector inside the JSON state (``streamdq.detectors.river_state``); ADWIN's
window is compressed in exponential buckets (O(log n) memory and amortised time per point),
PageHinkley keeps a few numbers (O(1)).
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Any

from streamdq.detectors.base import Detector, Point, Verdict, warming_up
from streamdq.detectors.river_state import dump_river, load_river


class RiverDriftDetector(Detector):
    """Base of the river drift adapters; subclasses build the river object and name its warm-up."""

    @abstractmethod
    def _new_river(self) -> Any:
        """A fresh river drift detector."""

    @property
    @abstractmethod
    def warm_up_points(self) -> int:
        """Points river needs before it can report a drift."""

    def _initial_core(self) -> dict[str, Any]:
        return {"seen": 0, "model": None}

    def _step(self, core: dict[str, Any], point: Point) -> tuple[dict[str, Any], Verdict]:
        value = float(point.value)  # type: ignore[arg-type]
        detector = load_river(core["model"])
        restarted = ""
        if detector is None:
            if core["model"] is not None:
                restarted = " (detector written by another river version: restarted)"
                core["seen"] = 0
            detector = self._new_river()
        detector.update(value)
        seen = core["seen"] + 1
        core.update(seen=seen, model=dump_river(detector))
        estimate = float(detector.estimation) if hasattr(detector, "estimation") else None
        if seen < self.warm_up_points:  # river reports no drift before this either
            return core, warming_up(self.warm_up_points - seen, score=estimate, note=restarted)
        if detector.drift_detected:
            return core, Verdict(
                True, score=estimate, message=f"{self.TYPE}: drift detected at value {value}{restarted}"
            )
        return core, Verdict(
            False, score=estimate, message=f"{self.TYPE}: no drift at value {value}{restarted}"
        )
