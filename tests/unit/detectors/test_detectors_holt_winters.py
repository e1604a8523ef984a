"""Holt-Winters: Deequ's model and batch rules, online fitting, spikes in a seasonal series, short series."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pytest

from streamdq.detectors import Point, detector_from_spec
from streamdq.detectors.holt_winters import HoltWinters
from streamdq.detectors.holt_winters_model import HWModel, fit, forecasts, initial_model, smooth

SPIKES = [24 * 7 + 5, 24 * 8 + 13, 24 * 10 + 2, 24 * 11 + 20]


def hourly_series(seed: int = 1, days: int = 12, spikes: list[int] | None = None) -> list[float]:
    rng = np.random.default_rng(seed)
    t = np.arange(24 * days)
    values = 100 + 0.05 * t + 20 * np.sin(2 * math.pi * t / 24) + rng.normal(0, 1.0, t.size)
    for index in spikes or []:
        values[index] += 15.0
    return [float(v) for v in values]


def run_online(detector: HoltWinters, values: Sequence[float | None]) -> tuple[dict, list]:
    state = detector.initial_state()
    verdicts = []
    for i, value in enumerate(values):
        state, verdict = detector.update(state, Point(time=float(i), value=value, seq=i))
        verdicts.append(verdict)
    return state, verdicts


# -- the model (Deequ's additiveHoltWinters) --------------------------------------------------------
def test_initialisation_and_one_step_residuals_by_hand() -> None:
    series = [1.0, 3.0, 3.0, 5.0]
    model = initial_model(series, 2)
    # level0 = mean of the first period, trend0 = (8 - 4) / 2^2, season = first period - level0
    assert model == HWModel(2.0, 1.0, (-1.0, 1.0))
    _, residuals = smooth(series, 2, 0.5, 0.5, 0.5)
    # t=0: forecast 2 + 1 - 1 = 2 -> -1; level 2.5, trend 0.75, season -1.5; t=1: forecast 4.25 -> -1.25
    assert residuals[:2] == [-1.0, -1.25]


def test_multi_step_forecasts_feed_the_forecast_back() -> None:
    model = HWModel(10.0, 2.0, (1.0, -1.0, 0.5))
    # feeding the forecast back keeps level + trend and the season: L + h*T + season[h-1]
    assert forecasts(model, 4, 0.3, 0.1, 0.1) == pytest.approx([13.0, 13.0, 16.5, 19.0])


def test_fit_recovers_good_parameters_and_stays_in_bounds() -> None:
    values = hourly_series()[: 24 * 4]
    alpha, beta, gamma = fit(values, 24)
    assert all(0.0 <= p <= 1.0 for p in (alpha, beta, gamma))
    _, fitted = smooth(values, 24, alpha, beta, gamma)
    _, start = smooth(values, 24, 0.3, 0.1, 0.1)
    assert sum(r * r for r in fitted) <= sum(r * r for r in start)


# -- Deequ's batch form ----------------------------------------------------------------------------
def test_deequ_detect_errors() -> None:
    detector = HoltWinters.deequ(7)
    weekly = [float(i % 7) for i in range(30)]
    with pytest.raises(ValueError, match="empty"):
        detector.detect([], 14, 15)
    with pytest.raises(ValueError, match="must be before end"):
        detector.detect(weekly, 20, 20)
    with pytest.raises(ValueError, match="non-negative"):
        detector.detect(weekly, -1, 5)
    with pytest.raises(ValueError, match="two full cycles"):
        detector.detect(weekly, 13, 20)
    with pytest.raises(ValueError, match="two full cycles"):
        detector.detect(weekly)  # start defaults to 0


def test_deequ_detect_finds_spike_and_handles_horizon() -> None:
    rng = np.random.default_rng(3)
    weekly = [float(10 + 5 * ((i % 7) in (5, 6)) + rng.normal(0, 0.5)) for i in range(70)]
    weekly[60] += 20.0
    detector = HoltWinters.deequ(7)
    flagged = detector.detect(weekly, 56, 70)
    assert 60 in flagged
    assert detector.detect(weekly, 56) == flagged  # end defaults to "to the end"
    # horizon = min(end, len) - start: points after `end` are not tested
    assert detector.detect(weekly, 56, 60) == [i for i in flagged if i < 60]
    # start beyond the series: one forecast, nothing to test
    assert detector.detect(weekly, 80, 90) == []


def test_deequ_rule_is_1_96_sample_stddev_of_absolute_residuals() -> None:
    values = hourly_series(days=6)
    detector = HoltWinters.deequ(24)
    start = 24 * 5
    alpha, beta, gamma = fit(values[:start], 24)
    model, residuals = smooth(values[:start], 24, alpha, beta, gamma)
    absolute = np.abs(residuals)
    width = 1.96 * float(np.std(absolute, ddof=1))
    predicted = forecasts(model, 24, alpha, beta, gamma)
    expected = [start + i for i in range(24) if abs(values[start + i] - predicted[i]) > width]
    assert detector.detect(values, start, start + 24) == expected


# -- online form -----------------------------------------------------------------------------------
def test_online_finds_injected_spikes_without_false_alarms() -> None:
    values = hourly_series(spikes=SPIKES)
    _, verdicts = run_online(HoltWinters(period=24), values)
    flagged = [i for i, v in enumerate(verdicts) if v.anomalous]
    assert flagged == SPIKES
    spike = verdicts[SPIKES[0]]
    assert spike.upper is not None and values[SPIKES[0]] > spike.upper and spike.score is not None


def test_batch_form_with_default_rule_agrees_on_spikes() -> None:
    values = hourly_series(spikes=SPIKES)
    assert HoltWinters(period=24).detect(values, 24 * 7, 24 * 12) == SPIKES


@pytest.mark.parametrize("detector", [HoltWinters.deequ(24, min_history=96), HoltWinters(min_history=96)])
@pytest.mark.parametrize("spike", [0.0, 12.0])
def test_first_online_verdict_after_fit_equals_detect(detector: HoltWinters, spike: float) -> None:
    values = hourly_series(seed=5, days=5)
    values[96] += spike
    _, verdicts = run_online(detector, values[:97])
    assert verdicts[96].anomalous == (detector.detect(values, 96, 97) == [96])
    assert verdicts[96].anomalous == (spike > 0)


def test_short_series_waits_and_says_so() -> None:
    state, verdicts = run_online(HoltWinters(period=24), [1.0] * 10)
    assert all(v.warming_up and not v.anomalous for v in verdicts)
    assert verdicts[0].message.startswith("warming up: waiting for 47 more points")
    assert verdicts[-1].message.startswith("warming up: waiting for 38 more points")
    assert state["core"]["model"] is None


def test_state_is_bounded_and_refits_periodically() -> None:
    detector = HoltWinters(period=24, history_periods=3, refit_every=24)
    state, _ = run_online(detector, hourly_series(days=10))
    assert len(state["core"]["buffer"]) == 72
    assert state["core"]["since_fit"] == (240 - 48) % 24


def test_missing_values_keep_the_seasonal_phase() -> None:
    values: list[float | None] = list(hourly_series(days=8))
    for i in (24 * 5 + 3, 24 * 5 + 4, 24 * 6 + 10):
        values[i] = None
    _, verdicts = run_online(HoltWinters(period=24), values)
    assert not any(v.anomalous for v in verdicts)
    assert verdicts[24 * 5 + 3].message.startswith("missing value: advanced with forecast")


def test_anomalies_do_not_bend_the_model_unless_configured() -> None:
    values = hourly_series(days=8)
    for i in range(24 * 6, 24 * 6 + 3):
        values[i] += 40.0
    ignoring, _ = run_online(HoltWinters(period=24, refit_every=1000), values)
    learning, _ = run_online(HoltWinters(period=24, refit_every=1000, learn_from_anomalies=True), values)
    assert max(ignoring["core"]["buffer"]) < 140
    assert max(learning["core"]["buffer"]) > 150


def test_spec_round_trip_and_errors() -> None:
    detector = HoltWinters(period=7, z=2.5, residual_scale="abs_stddev", refit_every=7)
    assert detector_from_spec(detector.to_spec()) == detector
    with pytest.raises(ValueError, match="residual_scale: "):
        detector_from_spec({"type": "holt_winters", "residual_scale": "mad"})
    with pytest.raises(ValueError, match="min_history: "):
        HoltWinters(period=12, min_history=20)
    with pytest.raises(ValueError, match="period: "):
        HoltWinters(period=0)


def test_relearn_after_turns_a_lasting_level_shift_into_the_new_normal() -> None:
    values = hourly_series(days=10)
    shift = 24 * 6
    values[shift:] = [v + 40.0 for v in values[shift:]]
    _, stuck = run_online(HoltWinters(period=24), values)
    _, adapting = run_online(HoltWinters(period=24, relearn_after=3), values)
    stuck_flags = [i for i, v in enumerate(stuck) if v.anomalous]
    adapting_flags = [i for i, v in enumerate(adapting) if v.anomalous]
    assert len(stuck_flags) > 48  # never accepts the new level
    assert adapting_flags[:3] == [shift, shift + 1, shift + 2]
    assert "learned anyway after 3 consecutive anomalies" in adapting[shift + 2].message
    # the run at the shift ends; a refit on a buffer that still holds the step may flag an odd hour
    assert len(adapting_flags) <= 16
    assert all(verdict.anomalous for verdict in adapting[shift : shift + 3])


def test_min_width_floors_the_interval_of_a_perfectly_regular_series() -> None:
    values: list[float] = [100.0, 200.0, 300.0, 200.0] * 6 + [101.0, 205.0, 300.0]
    _, strict = run_online(HoltWinters(period=4), values)
    _, floored = run_online(HoltWinters(period=4, min_width=10.0), values)
    assert [i for i, v in enumerate(strict) if v.anomalous] == [24, 25]
    assert not any(v.anomalous for v in floored)
    assert floored[25].upper is not None and floored[25].upper - floored[25].lower == pytest.approx(20.0)
    with pytest.raises(ValueError, match="min_width: "):
        HoltWinters(min_width=-1.0)
