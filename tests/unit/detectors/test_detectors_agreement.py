"""The online form (``update``) agrees with Deequ's batch form (``detect``) where its assumptions hold."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamdq.detectors import (
    AbsoluteChange,
    BatchNormal,
    Detector,
    OnlineNormal,
    Point,
    RelativeRateOfChange,
)


def series(seed: int, n: int = 80) -> list[float]:
    rng = np.random.default_rng(seed)
    values = rng.normal(10.0, 1.0, n)
    spikes = rng.choice(n, size=6, replace=False)
    values[spikes] += rng.choice([-8.0, 8.0], size=6)
    return [float(v) for v in values]


def online_flags(detector: Detector, values: list[float]) -> list[int]:
    state = detector.initial_state()
    flagged = []
    for i, value in enumerate(values):
        state, verdict = detector.update(state, Point(time=float(i), value=value, seq=i))
        if verdict.anomalous:
            flagged.append(i)
    return flagged


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("learn", [False, True])
def test_online_normal_agrees_with_detect(seed: int, learn: bool) -> None:
    values = series(seed)
    batch = OnlineNormal(ignore_start_percentage=0.1, learn_from_anomalies=learn)
    online = OnlineNormal(min_points=math.ceil(len(values) * 0.1), learn_from_anomalies=learn)
    flags = batch.detect(values)
    assert flags  # the injected spikes are found
    assert online_flags(online, values) == flags


@pytest.mark.parametrize("seed", range(5))
def test_batch_normal_online_verdict_equals_detect_on_prefix(seed: int) -> None:
    values = series(seed, 40)
    detector = BatchNormal(min_points=1)
    state = detector.initial_state()
    hits = 0
    for i, value in enumerate(values):
        state, verdict = detector.update(state, Point(float(i), value, i))
        if i >= 1:
            assert verdict.anomalous == (detector.detect(values[: i + 1], i, i + 1) == [i])
            hits += verdict.anomalous
    assert hits > 0


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize(
    "detector",
    [
        AbsoluteChange(-5.0, 5.0, order=1),
        AbsoluteChange(-9.0, 9.0, order=2),
        AbsoluteChange(max_rate_increase=12.0, order=3),
        RelativeRateOfChange(0.6, 1.6, order=1),
        RelativeRateOfChange(0.6, 1.6, order=3),
    ],
    ids=lambda d: f"{d.TYPE}-{d.order}",
)
def test_change_detectors_agree_with_detect(seed: int, detector: Detector) -> None:
    values = series(seed)
    flags = detector.detect(values)
    assert flags
    assert online_flags(detector, values) == flags
    # and on a search interval: online flags restricted to the interval (enough history before it)
    assert detector.detect(values, 30, 60) == [i for i in flags if 30 <= i < 60]


values_strategy = st.lists(
    st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False), min_size=1, max_size=60
)


@settings(max_examples=60, deadline=None)
@given(values=values_strategy, pct=st.sampled_from([0.0, 0.1, 0.25, 0.5]), learn=st.booleans())
def test_online_normal_agreement_property(values: list[float], pct: float, learn: bool) -> None:
    batch = OnlineNormal(1.5, 2.0, ignore_start_percentage=pct, learn_from_anomalies=learn)
    online = OnlineNormal(1.5, 2.0, min_points=math.ceil(len(values) * pct), learn_from_anomalies=learn)
    assert online_flags(online, values) == batch.detect(values)


@settings(max_examples=60, deadline=None)
@given(values=values_strategy, order=st.integers(min_value=1, max_value=3), start=st.integers(0, 70))
def test_change_agreement_property(values: list[float], order: int, start: int) -> None:
    for detector in (AbsoluteChange(-50.0, 50.0, order=order), RelativeRateOfChange(0.5, 2.0, order=order)):
        flags = online_flags(detector, values)
        # with enough history before `start`, the batch form flags exactly the online flags in the interval
        expected = [i for i in flags if i >= max(start, order)]
        assert detector.detect(values, start) == expected


@settings(max_examples=40, deadline=None)
@given(values=values_strategy, replay_at=st.integers(0, 59))
def test_replaying_any_point_changes_nothing(values: list[float], replay_at: int) -> None:
    detector = BatchNormal(min_points=1, learn_from_anomalies=False)
    state = detector.initial_state()
    verdicts = []
    for i, value in enumerate(values):
        state, verdict = detector.update(state, Point(float(i), value, i))
        verdicts.append(verdict)
    seq = min(replay_at, len(values) - 1)
    again, verdict = detector.update(state, Point(0.0, 123.0, seq))
    assert again == state and verdict == verdicts[seq]
