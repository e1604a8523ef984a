"""river adapters: PredictiveAnomalyDetection with time_series forecasters, ADWIN and PageHinkley."""

from __future__ import annotations

import math

import numpy as np
import pytest

from streamdq.detectors import (
    Adwin,
    Detector,
    PageHinkley,
    Point,
    RiverPredictive,
    Verdict,
    detector_from_spec,
    dump_state,
    load_state,
)

SPIKES = [150, 190, 220]


def seasonal(days: int = 10, seed: int = 0) -> list[float]:
    rng = np.random.default_rng(seed)
    values = [float(100 + 20 * math.sin(2 * math.pi * i / 24) + rng.normal(0, 1)) for i in range(24 * days)]
    for index in SPIKES:
        if index < len(values):
            values[index] += 30.0
    return values


def run(detector: Detector, values: list[float], through_bytes: bool = False) -> tuple[dict, list[Verdict]]:
    state = detector.initial_state()
    verdicts = []
    for i, value in enumerate(values):
        if through_bytes:
            state = load_state(dump_state(state))
        state, verdict = detector.update(state, Point(float(i), value, i))
        verdicts.append(verdict)
    return state, verdicts


def test_predictive_snarimax_finds_spikes() -> None:
    _, verdicts = run(RiverPredictive(model="snarimax", period=24, warmup=48), seasonal())
    flagged = [i for i, v in enumerate(verdicts) if v.anomalous]
    assert set(SPIKES) <= set(flagged)
    assert len(flagged) <= len(SPIKES) + 3  # few false alarms on 240 points
    assert all(v.warming_up for v in verdicts[:72]) and not verdicts[72].warming_up
    spike = verdicts[SPIKES[0]]
    assert spike.upper is not None and spike.upper < seasonal()[SPIKES[0]]


def test_predictive_holt_winters_model_waits_instead_of_crashing() -> None:
    # river's HoltWinters cannot forecast before one season: the adapter's warm-up covers it
    _, verdicts = run(RiverPredictive(model="holt_winters", period=24, warmup=25), seasonal(days=3)[:40])
    assert verdicts[0].message == "warming up: waiting for 49 more points"
    assert verdicts[30].message == "warming up: calibrating the error threshold, waiting for 19 more points"
    assert not any(v.anomalous for v in verdicts)
    with pytest.raises(ValueError, match="warmup: "):
        RiverPredictive(model="holt_winters", period=24, warmup=10)


def test_predictive_state_survives_json_bytes() -> None:
    detector = RiverPredictive(period=24, warmup=48)
    values = seasonal(days=4)
    _, direct = run(detector, values)
    _, via_bytes = run(detector, values, through_bytes=True)
    assert direct == via_bytes


def test_river_state_from_another_version_restarts_the_model() -> None:
    detector = Adwin()
    state, _ = run(detector, [1.0] * 20)
    state["core"]["model"]["river"] = "0.0.1"
    state, verdict = detector.update(state, Point(20.0, 1.0, 20))
    assert "another river version: restarted" in verdict.message
    assert state["core"]["seen"] == 1


def test_adwin_flags_a_mean_shift_once() -> None:
    rng = np.random.default_rng(1)
    values = [float(v) for v in np.concatenate([rng.normal(0, 1, 200), rng.normal(5, 1, 200)])]
    _, verdicts = run(Adwin(), values, through_bytes=True)
    flagged = [i for i, v in enumerate(verdicts) if v.anomalous]
    assert len(flagged) == 1 and 200 <= flagged[0] < 240
    assert verdicts[0].warming_up and verdicts[0].message == "warming up: waiting for 9 more points"


def test_page_hinkley_flags_a_mean_shift() -> None:
    rng = np.random.default_rng(2)
    values = [float(v) for v in np.concatenate([rng.normal(0, 1, 200), rng.normal(5, 1, 100)])]
    _, verdicts = run(PageHinkley(threshold=20.0), values)
    flagged = [i for i, v in enumerate(verdicts) if v.anomalous]
    assert flagged and 200 <= flagged[0] < 230
    assert not any(v.anomalous for v in verdicts[:200])
    assert PageHinkley(threshold=20.0).detect(values) == flagged


@pytest.mark.parametrize(
    "detector", [RiverPredictive(model="holt_winters", warmup=30), Adwin(delta=0.01), PageHinkley(mode="up")]
)
def test_spec_round_trip(detector: Detector) -> None:
    assert detector_from_spec(detector.to_spec()) == detector


@pytest.mark.parametrize(
    ("spec", "key"),
    [
        ({"type": "river_predictive", "model": "arima"}, "model: "),
        ({"type": "river_predictive", "score_threshold": 0}, "score_threshold: "),
        ({"type": "adwin", "delta": 2}, "delta: "),
        ({"type": "page_hinkley", "mode": "sideways"}, "mode: "),
    ],
)
def test_spec_errors(spec: dict, key: str) -> None:
    with pytest.raises(ValueError, match=key):
        detector_from_spec(spec)
