"""SeasonalBuckets: z-score against the history of the same seasonal bucket (hour of day, day of week,
hour of week or month of year).

Each point falls into a bucket derived from its time (UTC; a naive datetime is taken as UTC, a float
is epoch seconds). Every bucket keeps its own Welford ``[n, mean, m2]``; a point is anomalous if its
value is more than ``z`` sample standard deviations (at least ``min_stddev``) away from its bucket's
mean. A bucket judges only once it has ``min_points_per_bucket`` points; until then the verdict is
"waiting for k more points in bucket ...". With ``learn_from_anomalies=False`` (default) flagged points
do not enter the bucket statistics. State: at most 168 buckets of three numbers: O(1) per point.

Batch form ``detect(series)`` replays the series with point i at ``i`` hours (hour buckets), days
(day of week) or 30-day months after the epoch, i.e. an equally spaced series starting at a bucket
boundary.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, ClassVar

from streamdq.detectors.base import (
    Detector,
    Point,
    Verdict,
    require,
    require_relearn_after,
    warming_up,
)
from streamdq.detectors.running_stats import sample_stddev, welford_add

BUCKETS = {
    "hour_of_day": 3600.0,
    "day_of_week": 86400.0,
    "hour_of_week": 3600.0,
    "month_of_year": 30 * 86400.0,
}


def bucket_of(kind: str, time: datetime | float) -> str:
    """The bucket key of ``time`` ("13" for 13:xx with hour_of_day; Monday is "0" for day_of_week)."""
    when = datetime.fromtimestamp(float(time), UTC) if not isinstance(time, datetime) else time
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    when = when.astimezone(UTC)
    if kind == "hour_of_day":
        return str(when.hour)
    if kind == "day_of_week":
        return str(when.weekday())
    if kind == "hour_of_week":
        return str(when.weekday() * 24 + when.hour)
    return str(when.month)


@dataclass(frozen=True)
class SeasonalBuckets(Detector):
    """Flags a point more than ``z`` sd away from the mean of its seasonal bucket.

    Warm-up: per bucket, ``min_points_per_bucket`` points.

    Examples
    --------
    >>> detector = SeasonalBuckets(bucket="hour_of_day", min_points_per_bucket=2, min_stddev=1.0)
    >>> detector.detect([5.0] * 24 * 3 + [50.0])  # point i is at i hours: three quiet days, then a spike
    [72]
    >>> from streamdq.detectors import Point
    >>> detector.update(detector.initial_state(), Point(0.0, 5.0, 0))[1].message
    'warming up: waiting for 2 more points in bucket hour_of_day=0'
    """

    TYPE: ClassVar[str] = "seasonal_buckets"

    bucket: str = "hour_of_day"
    z: float = 3.0
    min_points_per_bucket: int = 3
    min_stddev: float = 0.0
    learn_from_anomalies: bool = False
    relearn_after: int | None = None

    def __post_init__(self) -> None:
        require_relearn_after(self)
        require(
            self.bucket in BUCKETS,
            self.TYPE,
            "bucket",
            f"must be one of {', '.join(BUCKETS)}, got {self.bucket!r}",
            f"use one of {', '.join(BUCKETS)}",
        )
        require(self.z > 0, self.TYPE, "z", f"must be > 0, got {self.z}", "e.g. 3.0")
        require(
            self.min_points_per_bucket >= 2,
            self.TYPE,
            "min_points_per_bucket",
            f"must be >= 2 (a standard deviation needs two points), got {self.min_points_per_bucket}",
            "give 2 or more",
        )
        require(
            self.min_stddev >= 0, self.TYPE, "min_stddev", f"must be >= 0, got {self.min_stddev}", "e.g. 0.0"
        )

    @classmethod
    def _unit_test_params(cls) -> Iterable[Mapping[str, Any]]:
        yield {"bucket": "hour_of_day", "min_points_per_bucket": 2, "min_stddev": 0.5}
        yield {"bucket": "day_of_week", "min_points_per_bucket": 2, "z": 2.0, "relearn_after": 2}

    def _initial_core(self) -> dict[str, Any]:
        return {"buckets": {}}

    def _batch_time(self, index: int) -> float:
        return index * BUCKETS[self.bucket]

    def _step(self, core: dict[str, Any], point: Point) -> tuple[dict[str, Any], Verdict]:
        value = float(point.value)  # type: ignore[arg-type]
        key = bucket_of(self.bucket, point.time)
        label = f"{self.bucket}={key}"
        stats = core["buckets"].get(key, [0.0, 0.0, 0.0])
        if stats[0] < self.min_points_per_bucket:
            core["buckets"] = {**core["buckets"], key: welford_add(stats, value)}
            return core, warming_up(int(self.min_points_per_bucket - stats[0]), f"points in bucket {label}")
        mean = stats[1]
        sd = max(sample_stddev(stats), self.min_stddev)
        lower, upper = mean - self.z * sd, mean + self.z * sd
        score = abs(value - mean) / sd if sd > 0 else (0.0 if value == mean else math.inf)
        anomalous = score > self.z
        message = (
            f"value {value} is {score:.2f} sd from the mean {mean} of bucket {label} (n={int(stats[0])}), "
            f"outside [{lower}, {upper}]"
            if anomalous
            else f"value {value} within [{lower}, {upper}] for bucket {label}"
        )
        if not anomalous or self.learn_from_anomalies:
            core["buckets"] = {**core["buckets"], key: welford_add(stats, value)}
        return core, Verdict(anomalous, lower, upper, score, message=message)
