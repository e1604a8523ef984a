"""OnlineNormal: running mean and population standard deviation (Deequ's OnlineNormalStrategy).

Semantics (SEMANTICS.md): the tested point enters the running mean and variance *first*
(Welford, population variance, the weight of the i-th point is 1/(i+1) even after anomalies were
left out); the point is anomalous if it lies outside ``[mean - lower_factor*sd, mean + upper_factor*sd]``;
a missing factor is Scala's ``Double.MaxValue`` (so ``MaxValue * 0 == 0``). When
``learn_from_anomalies`` is false (Deequ's ``ignoreAnomalies=true``, the default) an anomalous point
is taken back out of the running statistics.

Online form: warm-up is a point count (``min_points``); the batch form ``detect`` skips the first
``len(series) * ignore_start_percentage`` indices, as Deequ does. Both use ``_advance``, so the online
form with ``min_points = ceil(len * ignore_start_percentage)`` flags exactly what ``detect`` flags.
State: ``{"i", "mean", "sn"}``; O(1) per point.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from streamdq.detectors.base import (
    MAX_DOUBLE,
    Detector,
    Point,
    Verdict,
    check_interval,
    register_detector,
    require,
    resolve_end,
)


def _z(value: float, mean: float, sd: float) -> float:
    if sd > 0:
        return abs(value - mean) / sd
    return 0.0 if value == mean else math.inf


@register_detector
@dataclass(frozen=True)
class OnlineNormal(Detector):
    TYPE: ClassVar[str] = "online_normal"

    lower_factor: float | None = 3.0
    upper_factor: float | None = 3.0
    ignore_start_percentage: float = 0.1
    min_points: int = 10
    learn_from_anomalies: bool = False
    relearn_after: int | None = None

    def __post_init__(self) -> None:
        require(
            self.relearn_after is None or self.relearn_after >= 1,
            self.TYPE,
            "relearn_after",
            f"must be >= 1 or null, got {self.relearn_after}",
        )
        require(
            self.lower_factor is not None or self.upper_factor is not None,
            self.TYPE,
            "lower_factor",
            "at least one of lower_factor / upper_factor has to be set",
        )
        for key in ("lower_factor", "upper_factor"):
            factor = getattr(self, key)
            require(factor is None or factor >= 0, self.TYPE, key, f"factor cannot be negative, got {factor}")
        require(
            0.0 <= self.ignore_start_percentage <= 1.0,
            self.TYPE,
            "ignore_start_percentage",
            f"must be in [0, 1], got {self.ignore_start_percentage}",
        )
        require(self.min_points >= 0, self.TYPE, "min_points", f"must be >= 0, got {self.min_points}")

    def _initial_core(self) -> dict[str, Any]:
        return {"i": 0, "mean": 0.0, "sn": 0.0}

    def _advance(self, core: dict[str, Any], value: float, judge: bool) -> tuple[dict[str, Any], Verdict]:
        i, last_mean, last_sn = core["i"], core["mean"], core["sn"]
        mean = value if i == 0 else last_mean + (1.0 / (i + 1)) * (value - last_mean)
        sn = last_sn + (value - last_mean) * (value - mean)
        sd = math.sqrt(sn / (i + 1))
        upper = mean + (MAX_DOUBLE if self.upper_factor is None else self.upper_factor) * sd
        lower = mean - (MAX_DOUBLE if self.lower_factor is None else self.lower_factor) * sd
        anomalous = judge and not (lower <= value <= upper)
        score = _z(value, mean, sd)
        if anomalous and not self.learn_from_anomalies:
            mean, sn = last_mean, last_sn
            # Deequ reports the bounds of an ignored anomaly around the restored mean (with the sd
            # that includes the point); the decision above used the mean including the point.
            upper = mean + (MAX_DOUBLE if self.upper_factor is None else self.upper_factor) * sd
            lower = mean - (MAX_DOUBLE if self.lower_factor is None else self.lower_factor) * sd
        if anomalous:
            message = f"value {value} is not in bounds [{lower}, {upper}] (running mean {mean}, sd {sd})"
        else:
            message = f"value {value} within [{lower}, {upper}]"
        verdict = Verdict(anomalous, lower, upper, score, message=message)
        return {"i": i + 1, "mean": mean, "sn": sn}, verdict

    def _step(self, core: dict[str, Any], point: Point) -> tuple[dict[str, Any], Verdict]:
        judge = core["i"] >= self.min_points
        core, verdict = self._advance(core, float(point.value), judge)  # type: ignore[arg-type]
        if not judge:
            missing = self.min_points - core["i"] + 1
            verdict = Verdict(
                False,
                verdict.lower,
                verdict.upper,
                verdict.score,
                warming_up=True,
                message=f"warming up: waiting for {missing} more points",
            )
        return core, verdict

    def detect(self, series: Sequence[float], start: int = 0, end: int | None = None) -> list[int]:
        stop = resolve_end(end)
        check_interval(self.TYPE, start, stop)
        skip = len(series) * self.ignore_start_percentage
        core = self._initial_core()
        flagged = []
        for i, value in enumerate(series):
            core, verdict = self._advance(core, float(value), judge=i >= skip and start <= i < stop)
            if verdict.anomalous:
                flagged.append(i)
        return flagged
