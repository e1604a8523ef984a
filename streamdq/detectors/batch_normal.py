"""BatchNormal: mean and *sample* standard deviation of the reference points (Deequ's BatchNormalStrategy).

Batch form (exact Deequ semantics): the reference is every point outside the search interval
(all points with ``include_interval``); a point in the interval is anomalous if it is outside
``[mean - lower_factor*sd, mean + upper_factor*sd]``; error if the series is empty or, excluding the
interval (clamped to the series, as Deequ's ``AnomalyDetector`` passes it), nothing remains. Mean and sample sd come from breeze's Welford update (sd = 0 for one point).

Online form: the reference is the history before the point (the interval is the new point), so the
verdict for point i equals ``detect(series[:i+1], i, i+1)`` while every point is learned
(``learn_from_anomalies=True``, the default, which is what the batch form does). Warm-up: ``min_points``
points of history. State: Welford ``[n, mean, m2]``; O(1) per point.
"""

from __future__ import annotations

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
    resolve_end,
    warming_up,
)
from streamdq.detectors.running_stats import sample_stddev, welford_add, welford_empty, welford_of
from streamdq.errors import InvalidArgument


@dataclass(frozen=True)
class BatchNormal(Detector):
    """Flags a point outside ``mean +- factor * sd`` of the reference points (sample sd).

    Warm-up: ``min_points`` points of history. The batch form raises on an empty series, as Deequ.

    Examples
    --------
    >>> detector = BatchNormal(lower_factor=2.0, upper_factor=2.0)
    >>> detector.detect([10.0, 11.0, 9.0, 10.0, 30.0], start=4)
    [4]
    >>> from streamdq.detectors import Point
    >>> state, verdict = detector.update(detector.initial_state(), Point(0.0, 10.0, 0))
    >>> verdict.message
    'warming up: waiting for 2 more points'
    """

    TYPE: ClassVar[str] = "batch_normal"

    lower_factor: float | None = 3.0
    upper_factor: float | None = 3.0
    include_interval: bool = False
    min_points: int = 2
    learn_from_anomalies: bool = True

    def __post_init__(self) -> None:
        require_factors(self)
        require(
            self.min_points >= 1,
            self.TYPE,
            "min_points",
            f"must be >= 1, got {self.min_points}",
            "give the number of points of history needed before judging",
        )

    @classmethod
    def _unit_test_params(cls) -> Iterable[Mapping[str, Any]]:
        yield {}
        yield {"include_interval": True}
        yield {"lower_factor": None, "upper_factor": 2.0, "min_points": 4, "learn_from_anomalies": False}

    def bounds(self, stats: list[float]) -> tuple[float, float]:
        sd = sample_stddev(stats)
        mean = stats[1]
        lower = mean - (MAX_DOUBLE if self.lower_factor is None else self.lower_factor) * sd
        upper = mean + (MAX_DOUBLE if self.upper_factor is None else self.upper_factor) * sd
        return lower, upper

    def _initial_core(self) -> dict[str, Any]:
        return {"stats": welford_empty()}

    def _step(self, core: dict[str, Any], point: Point) -> tuple[dict[str, Any], Verdict]:
        value = float(point.value)  # type: ignore[arg-type]
        stats = core["stats"]
        if stats[0] < self.min_points:
            core["stats"] = welford_add(stats, value)
            return core, warming_up(int(self.min_points - stats[0]))
        lower, upper = self.bounds(stats)
        anomalous = value > upper or value < lower
        sd = sample_stddev(stats)
        score = abs(value - stats[1]) / sd if sd > 0 else (0.0 if value == stats[1] else float("inf"))
        message = (
            f"value {value} is not in bounds [{lower}, {upper}] (mean {stats[1]}, sample sd {sd})"
            if anomalous
            else f"value {value} within [{lower}, {upper}]"
        )
        if not anomalous or self.learn_from_anomalies:
            core["stats"] = welford_add(stats, value)
        return core, Verdict(anomalous, lower, upper, score, message=message)

    def detect(self, series: Sequence[float], start: int = 0, end: int | None = None) -> list[int]:
        stop = resolve_end(end)
        check_interval(self.TYPE, start, stop)
        if not series:
            raise InvalidArgument(
                f"detector {self.TYPE!r}: data series is empty, can't calculate mean/stddev"
            )
        # the interval clamped to the series, as Deequ's AnomalyDetector passes it
        interval_length = max(0, min(stop, len(series)) - min(start, len(series)))
        if not self.include_interval and interval_length >= len(series):
            raise InvalidArgument(
                f"detector {self.TYPE!r}: excluding the search interval [{start}, {stop}) leaves no values "
                "to calculate mean and stddev (set include_interval or shorten the interval)"
            )
        lower, upper = self.bounds_for(series, start, stop)
        return [i for i in range(start, min(stop, len(series))) if series[i] > upper or series[i] < lower]

    def bounds_for(self, series: Sequence[float], start: int, end: int) -> tuple[float, float]:
        """Deequ's threshold for the search interval ``[start, end)`` (no validation)."""
        reference = list(series) if self.include_interval else [*series[:start], *series[end:]]
        return self.bounds(welford_of(float(v) for v in reference))
