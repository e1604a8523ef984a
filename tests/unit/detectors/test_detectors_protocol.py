"""The detector protocol: spec round-trip and errors, replay safety, warm-up, state serialization."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import pytest

from streamdq.detectors import (
    AbsoluteChange,
    BatchNormal,
    Detector,
    OnlineNormal,
    Point,
    SimpleThreshold,
    Verdict,
    detector_from_spec,
    detector_types,
    dump_state,
    load_state,
)
from streamdq.testing.detector_checks import registered_detectors

# every built-in detector in each configuration its class gives the conformance kit (not a hand list)
DETECTORS: list[Detector] = [
    cls(**params)
    for _, cls in sorted(registered_detectors().items())
    if cls.__module__.startswith("streamdq.")
    for params in cls._unit_test_params()  # type: ignore[attr-defined]
]


def feed(detector: Detector, values: list[float]) -> tuple[dict, list[Verdict]]:
    state = detector.initial_state()
    verdicts = []
    for i, value in enumerate(values):
        state, verdict = detector.update(state, Point(time=float(i), value=value, seq=i))
        verdicts.append(verdict)
    return state, verdicts


@pytest.mark.parametrize("detector", DETECTORS, ids=lambda d: d.TYPE)
def test_spec_round_trip(detector: Detector) -> None:
    spec = detector.to_spec()
    assert spec["type"] == detector.TYPE
    assert detector_from_spec(spec) == detector
    assert hash(detector_from_spec(dict(spec))) == hash(detector)


def test_spec_accepts_yaml_style_numbers_and_defaults() -> None:
    detector = detector_from_spec({"type": "online_normal", "lower_factor": 3, "upper_factor": 2})
    assert detector == OnlineNormal(lower_factor=3.0, upper_factor=2.0)


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [
        ({"lower_factor": 3}, "type: missing"),
        ({"type": "no_such_detector"}, "unknown detector type 'no_such_detector'"),
        ({"type": "online_normal", "lower_facter": 3}, "lower_facter: unknown key"),
        ({"type": "online_normal", "lower_factor": "three"}, "lower_factor: must be a number"),
        ({"type": "online_normal", "min_points": 2.5}, "min_points: must be an integer"),
        (
            {"type": "online_normal", "learn_from_anomalies": "yes"},
            "learn_from_anomalies: must be true or false",
        ),
        ({"type": "online_normal", "lower_factor": -1}, "lower_factor: factor cannot be negative"),
        ({"type": "simple_threshold", "lower_bound": 0}, "upper_bound: missing required key"),
        ({"type": "simple_threshold", "upper_bound": None}, "upper_bound: must not be null"),
    ],
)
def test_spec_errors_name_the_key(spec: dict, fragment: str) -> None:
    with pytest.raises(ValueError, match=fragment):
        detector_from_spec(spec)


def test_registry_lists_types() -> None:
    assert {
        "online_normal",
        "batch_normal",
        "simple_threshold",
        "absolute_change",
        "relative_rate_of_change",
    } <= set(detector_types())


@pytest.mark.parametrize("detector", DETECTORS, ids=lambda d: d.TYPE)
def test_replay_returns_stored_verdict_and_leaves_state_unchanged(detector: Detector) -> None:
    values = [1.0, 2.0, 1.5, 2.5, 1.0, 50.0, 2.0, 1.0, 2.5]
    state, verdicts = feed(detector, values)
    before = dump_state(state)
    for seq in (len(values) - 1, len(values) - 2, 0):
        again, verdict = detector.update(state, Point(time=0.0, value=-999.0, seq=seq))
        assert verdict == verdicts[seq]
        assert dump_state(again) == before
    # a fresh point is judged and changes the state
    after, _ = detector.update(state, Point(time=99.0, value=1.0, seq=len(values)))
    assert after["last_seq"] == len(values)
    assert dump_state(state) == before  # the given state was not mutated


def test_replay_of_forgotten_seq_is_not_judged() -> None:
    detector = SimpleThreshold(upper_bound=1.0)
    state, _ = feed(detector, [0.0] * 40)
    again, verdict = detector.update(state, Point(time=0.0, value=100.0, seq=1))
    assert not verdict.anomalous and "replayed point seq=1" in verdict.message
    assert again is state


def test_warm_up_says_how_many_points_are_missing() -> None:
    detector = OnlineNormal(min_points=3)
    _, verdicts = feed(detector, [1.0] * 10 + [100.0])
    assert [v.message for v in verdicts[:3]] == [
        "warming up: waiting for 3 more points",
        "warming up: waiting for 2 more points",
        "warming up: waiting for 1 more points",
    ]
    assert all(v.warming_up and not v.anomalous for v in verdicts[:3])
    assert not verdicts[3].warming_up
    assert not any(v.anomalous for v in verdicts[:10])
    assert verdicts[10].anomalous


def test_warm_up_never_flags() -> None:
    _, verdicts = feed(AbsoluteChange(-1.0, 1.0, order=2), [0.0, 100.0, 0.0])
    assert [v.warming_up for v in verdicts] == [True, True, False]
    assert [v.anomalous for v in verdicts] == [False, False, True]
    assert verdicts[0].message == "warming up: waiting for 2 more points"


def test_do_not_learn_from_flagged_points_is_configurable() -> None:
    values = [1.0, 1.1, 0.9, 1.0, 1.05, 0.95, 1.0, 30.0, 30.0, 30.0]
    _, ignoring = feed(BatchNormal(learn_from_anomalies=False), values)
    _, learning = feed(BatchNormal(learn_from_anomalies=True), values)
    assert [v.anomalous for v in ignoring[7:]] == [True, True, True]
    assert [v.anomalous for v in learning[7:]] == [True, False, False]


def test_missing_values_are_skipped() -> None:
    detector = BatchNormal(min_points=2)
    state, _ = feed(detector, [1.0, 2.0, 3.0])
    core_before = state["core"]
    for i, missing in enumerate([None, math.nan]):
        state, verdict = detector.update(state, Point(time=0.0, value=missing, seq=10 + i))
        assert not verdict.anomalous and "missing" in verdict.message
        assert state["core"] == core_before


def test_state_bytes_round_trip_with_non_finite_values() -> None:
    detector = OnlineNormal(lower_factor=None, upper_factor=3.0, min_points=0)
    state, verdicts = feed(detector, [1.0, 5.0, 2.0])
    assert verdicts[-1].lower == -math.inf  # Double.MaxValue * sd overflows
    loaded = load_state(dump_state(state))
    assert loaded == state
    s1, v1 = detector.update(state, Point(datetime(2026, 1, 1, tzinfo=UTC), 3.0, 3))
    s2, v2 = detector.update(loaded, Point(datetime(2026, 1, 1, tzinfo=UTC), 3.0, 3))
    assert v1 == v2 and dump_state(s1) == dump_state(s2)
    again, verdict = detector.update(loaded, Point(0.0, 0.0, 2))
    assert verdict == verdicts[-1]


def test_state_errors() -> None:
    with pytest.raises(ValueError, match="not a detector state"):
        load_state(b"{not json")
    with pytest.raises(ValueError, match="belongs to detector type 'online_normal'"):
        BatchNormal().update(OnlineNormal().initial_state(), Point(0.0, 1.0, 0))


def test_relearn_after_applies_only_to_runs_of_anomalies() -> None:
    values = [1.0, 1.2, 0.8, 1.1, 0.9, 1.0, 1.05, 0.95, 1.0, 1.1] + [20.0] * 30
    _, stuck = feed(OnlineNormal(min_points=5), values)
    _, adapting = feed(OnlineNormal(min_points=5, relearn_after=2), values)
    assert all(v.anomalous for v in stuck[10:])
    assert [v.anomalous for v in adapting[10:13]] == [True, True, False]
    assert adapting[11].message.endswith("learned anyway after 2 consecutive anomalies")
    # an isolated anomaly is still not learned
    _, single = feed(OnlineNormal(min_points=5, relearn_after=2), [*values[:10], 20.0, 1.0, 20.0])
    assert [v.anomalous for v in single[10:]] == [True, False, True]
    with pytest.raises(ValueError, match="relearn_after: "):
        OnlineNormal(relearn_after=0)
