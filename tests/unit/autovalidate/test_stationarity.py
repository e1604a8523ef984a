import math
import warnings

import numpy as np
import pytest

from streamdq.autovalidate.stationarity import Transform, fit, is_stationary


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
    assert Transform().value_of(5.0, None) == 5.0
    assert Transform(diff=True).value_of(5.0, 3.0) == 2.0
    assert Transform(diff=True).value_of(5.0, None) is None
    assert Transform(log=True).value_of(0.0, None) is None  # outside the learned domain
    assert abs(Transform(log=True, diff=True).value_of(math.e**2, math.e) - 1.0) < 1e-12
    assert Transform().value_of(None, 1.0) is None
    assert Transform().value_of(math.inf, 1.0) == math.inf


def test_a_mostly_tied_series_is_not_tested_and_prints_no_warning():
    series = [10.0] * 26 + [9.0, 8.5, 10.0, 10.0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any statsmodels warning escaping would fail here
        assert is_stationary(series)
        assert fit(series) == Transform()
