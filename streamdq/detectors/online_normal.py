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
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from streamdq.detectors.base import (
    MAX_DOUBLE,
    Detector,
    Point,
    Verdict,
    check_interval,
    require,
    require_factors,
    require_relearn_after,
    resolve_end,
    warming_up,
)


def _z(value: float, mean: float, sd: float) -> float:
    if sd > 0:
        return abs(value - mean) / sd
    return 0.0 if value == mean else math.inf


@dataclass(frozen=True)
class OnlineNormal(Detector):
    """Flags a point outside ``mean +- factor * sd`` of the running (population) statistics.

    Warm-up: ``min_points`` points are learned before any is judged. The tested point enters the
    statistics first (Deequ), so one point among n is at most ``sqrt(n - 1)`` sd away: with the
    default factor 3 nothing is flagged before the 11th point.

    Examples
    --------
    >>> from streamdq.detectors import Point
    >>> detector = OnlineNormal(min_points=3)
    >>> series = [10.0, 11.0, 9.0, 10.0] * 3 + [60.0]
    >>> state = detector.initial_state()
    >>> verdicts = []
    >>> for seq, value in enumerate(series):
    ...     state, verdict = detector.update(state, Point(float(seq), value, seq))
    ...     verdicts.append(verdict)
    >>> [v.warming_up for v in verdicts[:4]]
    [True, True, True, False]
    >>> verdicts[-1].anomalous, round(verdicts[-1].upper, 2)
    (True, 50.02)
    >>> detector.detect(series)  # Deequ's batch form: the first 10% of the series are not judged
    [12]
    """

    TYPE: ClassVar[str] = "online_normal"

    lower_factor: float | None = 3.0
    upper_factor: float | None = 3.0
    ignore_start_percentage: float = 0.1
    min_points: int = 10
    learn_from_anomalies: bool = False
    relearn_after: int | None = None

    def __post_init__(self) -> None:
        require_relearn_after(self)
        require_factors(self)
        require(
            0.0 <= self.ignore_start_percentage <= 1.0,
            self.TYPE,
            "ignore_start_percentage",
            f"must be in [0, 1], got {self.ignore_start_percentage}",
            "give a fraction such as 0.1",
        )
        require(
            self.min_points >= 0,
            self.TYPE,
            "min_points",
            f"must be >= 0, got {self.min_points}",
            "give the number of points to learn before judging",
        )

    @classmethod
    def _unit_test_params(cls) -> Iterable[Mapping[str, Any]]:
        yield {"min_points": 5}
        yield {"lower_factor": 2.0, "upper_factor": None, "min_points": 3, "learn_from_anomalies": True}
        yield {"min_points": 4, "relearn_after": 3}

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
            verdict = warming_up(missing, lower=verdict.lower, upper=verdict.upper, score=verdict.score)
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
