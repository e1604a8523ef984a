import math
import warnings

import numpy as np
import pytest

from streamdq.autovalidate.avh.stationarity import Transform, fit, is_stationary


def test_white_noise_keeps_identity():
    x = np.random.default_rng(1).normal(10, 1, 60)
    assert is_stationary(x)
    assert fit(list(x)) == Transform()


def test_linear_trend_is_differenced():
    rng = np.random.default_rng(2)
    x = 100 + 5.0 * np.arange(60) + rng.normal(0, 1, 60)
    assert not is_stationary(x)
    t = fit(list(x))
    assert t.diff
    # the remembered transform maps the next point of the trend near the step
    assert t.apply_next(list(x), x[-1] + 5.0) == pytest.approx(
        5.0 if not t.log else np.log((x[-1] + 5.0) / x[-1]), rel=1e-9
    )


def test_short_or_constant_history_is_identity():
    assert fit([1.0, 2.0, 3.0]) == Transform()
    assert fit([4.0] * 30) == Transform()


def test_log_diff_transform_roundtrip():
    t = Transform(log=True, diff=True)
    h = [1.0, 2.0, 4.0]
    assert t.series(h) == pytest.approx([np.log(2), np.log(2)])
    assert t.apply_next(h, 8.0) == pytest.approx(np.log(2))


def test_value_of_applies_the_remembered_transform_to_a_new_point():
    assert Transform().value_of(5.0) == 5.0
    assert Transform(diff=True).value_of(5.0, [1.0, 3.0]) == 2.0
    assert Transform(diff=True).value_of(5.0, []) is None
    assert Transform(log=True).value_of(0.0) is None  # outside the learned domain
    assert abs(Transform(log=True, diff=True).value_of(math.e**2, [math.e]) - 1.0) < 1e-12
    assert Transform().value_of(None, [1.0]) is None
    assert Transform().value_of(math.inf, [1.0]) == math.inf
    # a seasonal difference reads the value one period back, and needs that many
    week = [900.0, 700.0, 850.0, 930.0, 920.0, 910.0, 940.0]
    assert Transform(diff=True, lag=7).value_of(690.0, week) == -210.0
    assert Transform(diff=True, lag=7).value_of(690.0, week[1:]) is None
    assert Transform(diff=True, lag=7).needs == 7 and Transform(lag=7).needs == 0
    with pytest.raises(ValueError):
        Transform(diff=True, lag=0)


def _weekly(rng: np.random.Generator, n: int = 30, noise: float = 10.0) -> list[float]:
    """Flights per day: about 930 on weekdays, 690 on Saturdays, 820 on Sundays."""
    pattern = np.array([930.0, 925.0, 920.0, 935.0, 940.0, 690.0, 820.0])
    return list(np.resize(pattern, n) + rng.normal(0.0, noise, n))


def test_a_weekly_series_is_differenced_one_period_back():
    rng = np.random.default_rng(4)
    history = _weekly(rng)
    t = fit(history)
    assert t == Transform(diff=True, lag=7)
    seasonal = np.array(t.series(history))
    assert len(seasonal) == 23 and seasonal.std() < 25.0  # against ~90 for the raw series
    # day 30 is a weekday (day 30 mod 7 = 2): judged against the weekday a week earlier, so a
    # Saturday-sized count stands out while an ordinary weekday does not
    assert abs(t.apply_next(history, 920.0)) < 40.0
    assert t.apply_next(history, 690.0) < -180.0


def test_seasonal_differencing_needs_evidence_and_enough_points():
    rng = np.random.default_rng(5)
    noise = list(rng.normal(900.0, 30.0, 30))
    assert fit(noise).lag == 1  # no period: the seasonal difference doubles the variance
    assert fit(_weekly(rng, n=14)).lag == 1  # 14 points leave only 7 weekly differences
    assert fit(_weekly(rng), seasonal_lags=()).lag == 1
    hourly = list(np.resize(np.r_[np.full(8, 100.0), np.full(16, 900.0)], 60) + rng.normal(0, 5, 60))
    assert fit(hourly) == Transform(diff=True, lag=24)


def test_a_mostly_tied_series_is_not_tested_and_prints_no_warning():
    series = [10.0] * 26 + [9.0, 8.5, 10.0, 10.0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any statsmodels warning escaping would fail here
        assert is_stationary(series)
        assert fit(series) == Transform()


def test_a_transformed_series_leaves_out_the_points_that_read_a_skipped_value():
    flags = [False, False, True, False, False]
    assert Transform().series([1.0, 2.0, 3.0, 4.0, 5.0], flags) == [1.0, 2.0, 4.0, 5.0]
    # lag-1 differences x1-x0 .. x4-x3: the two around the skipped x2 go
    assert Transform(diff=True).series([1.0, 2.0, 4.0, 8.0, 16.0], flags) == [1.0, 8.0]
    # lag-3 differences x3-x0, x4-x1: the second reads the skipped x1
    assert Transform(diff=True, lag=3).series(
        [1.0, 2.0, 4.0, 8.0, 16.0], [False, True, False, False, False]
    ) == [7.0]


def test_a_skipped_holiday_does_not_hide_the_weekly_period():
    """One day with 40% fewer rows inflates the weekly difference twice (the day and a week
    later), enough to lose the period; judged without it, the weekly form is found again."""
    rng = np.random.default_rng(12)
    counts = np.resize(np.array([930.0, 925.0, 920.0, 935.0, 940.0, 690.0, 820.0]), 30) + rng.normal(0, 8, 30)
    counts[16] *= 0.6
    flags = [i == 16 for i in range(30)]
    assert fit(list(counts), seasonal_lags=(7,)).lag == 1
    assert fit(list(counts), seasonal_lags=(7,), skip=flags).lag == 7
