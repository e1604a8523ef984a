import math

import numpy as np
import pytest

from streamdq.autovalidate.bounds import fpr_at, interval, k_for


@pytest.mark.parametrize("bound", ["chebyshev", "cantelli", "normal"])
def test_k_for_inverts_fpr_at(bound):
    for fpr in (0.1, 0.01, 0.001):
        assert fpr_at(k_for(fpr, bound), bound) == pytest.approx(fpr, rel=1e-9)


def test_known_values():
    assert k_for(0.01, "chebyshev") == pytest.approx(10.0)
    assert k_for(0.1, "cantelli") == pytest.approx(3.0)
    assert k_for(0.0027, "normal") == pytest.approx(3.0, abs=1e-3)
    # distribution-free bounds are wider than the normal one
    assert k_for(0.001, "chebyshev") > k_for(0.001, "cantelli") > k_for(0.001, "normal")


def test_chebyshev_holds_empirically_on_heavy_tails():
    rng = np.random.default_rng(0)
    x = rng.standard_t(3, size=200_000)
    mu, sd = x.mean(), x.std()
    k = k_for(0.01, "chebyshev")
    assert np.mean(np.abs(x - mu) >= k * sd) <= 0.01


def test_interval_and_floor():
    low, high = interval([1.0, 2.0, 3.0], fpr=0.01, bound="chebyshev")
    assert (low, high) == pytest.approx((2.0 - 10.0, 2.0 + 10.0))
    low, high = interval([5.0, 5.0, 5.0], fpr=0.01, min_std=1e-3)
    assert high - low == pytest.approx(2 * 10.0 * 5e-3)
    assert low < 5.0 < high


def test_interval_rejects_bad_input():
    with pytest.raises(ValueError):
        interval([], fpr=0.01)
    with pytest.raises(ValueError):
        interval([float("nan")], fpr=0.01)
    with pytest.raises(ValueError):
        k_for(0.0, "normal")
    assert math.isinf(k_for(1e-300, "chebyshev")) is False
