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
