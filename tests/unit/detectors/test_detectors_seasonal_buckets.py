"""SeasonalBuckets: z-score against the same hour-of-day / day-of-week bucket (Welford per bucket)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from streamdq.detectors import Point, SeasonalBuckets, detector_from_spec, dump_state, load_state
from streamdq.detectors.seasonal_buckets import bucket_of

START = datetime(2026, 3, 2, tzinfo=UTC)  # a Monday


def daily_profile(days: int, seed: int = 0) -> list[float]:
    rng = np.random.default_rng(seed)
    # night hours low, day hours high: a value normal at 14:00 is abnormal at 03:00
    return [float((20 if 8 <= h % 24 < 20 else 2) + rng.normal(0, 1)) for h in range(24 * days)]


def test_bucket_keys() -> None:
    assert bucket_of("hour_of_day", START + timedelta(hours=13, minutes=59)) == "13"
    assert bucket_of("day_of_week", START + timedelta(days=6)) == "6"
    assert bucket_of("hour_of_week", START + timedelta(days=1, hours=2)) == "26"
    assert bucket_of("month_of_year", START) == "3"
    # floats are epoch seconds (UTC); naive datetimes are UTC
    assert bucket_of("hour_of_day", START.timestamp() + 3600) == "1"
    assert bucket_of("hour_of_day", datetime(2026, 3, 2, 5)) == "5"
    assert bucket_of("hour_of_day", datetime(2026, 3, 2, 5, tzinfo=UTC).astimezone(UTC)) == "5"


def test_value_normal_for_the_day_is_anomalous_at_night() -> None:
    detector = SeasonalBuckets(bucket="hour_of_day", z=4.0, min_points_per_bucket=7)
    values = daily_profile(14)
    values[24 * 13 + 3] = 20.0  # a daytime level at 03:00
    state = detector.initial_state()
    flagged = []
    for i, value in enumerate(values):
        state, verdict = detector.update(state, Point(START + timedelta(hours=i), value, i))
        if verdict.anomalous:
            flagged.append(i)
    assert flagged == [24 * 13 + 3]
    # a global OnlineNormal-style z-score would accept 20 (it is the daytime mean); the bucket does not
    assert detector.detect(values) == flagged


def test_warm_up_is_per_bucket() -> None:
    detector = SeasonalBuckets(bucket="day_of_week", min_points_per_bucket=2)
    state = detector.initial_state()
    messages = []
    for i, value in enumerate([1.0, 2.0, 1.0, 2.0, 1.5]):
        day = START + timedelta(days=7 * (i // 2) + (i % 2))  # Monday, Tuesday, Monday, Tuesday, Monday
        state, verdict = detector.update(state, Point(day, value, i))
        messages.append((verdict.warming_up, verdict.message.split(" (")[0]))
    assert messages[0] == (True, "warming up: waiting for 2 more points in bucket day_of_week=0")
    assert messages[1] == (True, "warming up: waiting for 2 more points in bucket day_of_week=1")
    assert messages[2] == (True, "warming up: waiting for 1 more points in bucket day_of_week=0")
    assert messages[4][0] is False


def test_flagged_points_stay_out_of_bucket_unless_configured() -> None:
    values = [10.0, 11.0, 9.0, 10.0, 50.0, 50.0]
    times = [START + timedelta(days=i) for i in range(len(values))]
    for learn, expected in ((False, [True, True]), (True, [True, False])):
        detector = SeasonalBuckets(bucket="hour_of_day", learn_from_anomalies=learn)
        state = detector.initial_state()
        verdicts = []
        for i, (time, value) in enumerate(zip(times, values, strict=True)):
            state, verdict = detector.update(state, Point(time, value, i))
            verdicts.append(verdict.anomalous)
        assert verdicts[4:] == expected


def test_min_stddev_and_constant_bucket() -> None:
    times = [START + timedelta(days=i) for i in range(5)]
    strict = SeasonalBuckets(min_points_per_bucket=3)
    tolerant = SeasonalBuckets(min_points_per_bucket=3, min_stddev=1.0)
    for detector, expected in ((strict, True), (tolerant, False)):
        state = detector.initial_state()
        for i, value in enumerate([5.0, 5.0, 5.0]):
            state, _ = detector.update(state, Point(times[i], value, i))
        _, verdict = detector.update(state, Point(times[3], 6.0, 3))
        assert verdict.anomalous is expected


def test_state_round_trip_and_spec_errors() -> None:
    detector = SeasonalBuckets(bucket="hour_of_week", z=3.5)
    assert detector_from_spec(detector.to_spec()) == detector
    state = detector.initial_state()
    for i, value in enumerate(daily_profile(2)):
        state, _ = detector.update(state, Point(START + timedelta(hours=i), value, i))
    assert load_state(dump_state(state)) == state
    assert len(state["core"]["buckets"]) == 48
    with pytest.raises(ValueError, match="bucket: "):
        detector_from_spec({"type": "seasonal_buckets", "bucket": "minute_of_hour"})
    with pytest.raises(ValueError, match="min_points_per_bucket: "):
        SeasonalBuckets(min_points_per_bucket=1)
