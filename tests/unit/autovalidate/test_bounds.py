import math

import numpy as np
import pytest

from streamdq.autovalidate.avh.bounds import fpr_at, interval, k_for


@pytest.mark.parametrize("bound", ["chebyshev", "cantelli", "normal", "extreme", "skewed"])
def test_k_for_inverts_fpr_at(bound):
    for fpr in (0.5, 0.1, 0.01, 0.001, 1e-5):
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


def test_extreme_tail_holds_for_maxima_of_unbounded_and_bounded_batches():
    """The bound covers a standardised batch maximum whichever extreme value law it follows:
    exponential values (Gumbel law, long upper side) and uniform ones (reversed Weibull law,
    long lower side, which attains the bound), at rates the normal tail would under-state."""
    rng = np.random.default_rng(1)
    k = k_for(0.01, "extreme")
    assert k_for(0.01, "normal") < k < k_for(0.01, "chebyshev")
    for values in (rng.exponential(size=(40_000, 200)), rng.uniform(size=(40_000, 200))):
        maxima = values.max(axis=1)
        z = (maxima - maxima.mean()) / maxima.std()
        assert np.mean(np.abs(z) >= k) <= 0.01 * 1.1  # the bound, up to sampling error
        assert np.mean(np.abs(z) >= k_for(0.01, "normal")) > 0.01  # the normal tail is too thin
    assert np.mean(z <= -k) == pytest.approx(0.005, rel=0.2)  # uniform maxima: one side holds it all
    assert fpr_at(0.0, "extreme") == 1.0


def test_the_skewed_tail_is_the_exponential_one_between_normal_and_chebyshev():
    """A standardised exponential (the skewed law at the edge of the bound) stays inside it,
    where the normal tail would under-state its upper side several times over."""
    for fpr in (1e-3, 1e-5):
        assert k_for(fpr, "skewed") == pytest.approx(k_for(fpr, "extreme"))
        assert k_for(fpr, "normal", 30) < k_for(fpr, "skewed") < k_for(fpr, "chebyshev")
    z = np.random.default_rng(4).exponential(size=2_000_000) - 1.0
    k = k_for(0.001, "skewed")
    assert np.mean(np.abs(z) >= k) <= 0.001 * 1.1
    assert np.mean(np.abs(z) >= k_for(0.001, "normal")) > 0.01


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


def test_normal_tail_with_n_history_values_is_the_student_t_prediction_law():
    assert k_for(1e-5, "normal", 30) == pytest.approx(5.423, abs=1e-3)  # 4.417 without n
    assert k_for(1e-5, "normal", 30) > k_for(1e-5, "normal", 300) > k_for(1e-5, "normal")
    for n in (3, 10, 30):
        for fpr in (0.1, 0.01, 1e-5):
            assert fpr_at(k_for(fpr, "normal", n), "normal", n) == pytest.approx(fpr, rel=1e-9)
    assert k_for(0.01, "normal", 2) == k_for(0.01, "normal")  # too few values for a t law
    with pytest.raises(ValueError):
        k_for(0.01, "normal", 0)


def test_prediction_interval_holds_its_rate_where_the_plain_normal_tail_does_not():
    """A new normal value falls outside mean +- k s of 10 earlier ones at the nominal rate only
    with the prediction law; the plain normal k ignores that mean and s are estimates."""
    rng = np.random.default_rng(3)
    draws = rng.standard_normal((200_000, 11))
    history, new = draws[:, :10], draws[:, 10]
    z = np.abs(new - history.mean(axis=1)) / history.std(axis=1, ddof=1)
    fpr = 0.01
    assert np.mean(z >= k_for(fpr, "normal", 10)) == pytest.approx(fpr, rel=0.1)
    assert np.mean(z >= k_for(fpr, "normal")) > 2 * fpr


def test_interval_uses_the_prediction_law_for_the_normal_tail():
    history = [1.0, 2.0, 3.0, 4.0, 5.0]
    low, high = interval(history, fpr=0.01, bound="normal")
    k = (high - low) / 2 / float(np.std(history, ddof=1))
    assert k == pytest.approx(k_for(0.01, "normal", 5))
