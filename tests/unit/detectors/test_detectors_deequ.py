"""Deequ's strategies against SEMANTICS.md "Anomaly detection": hand-computed cases and errors."""

from __future__ import annotations

import math

import pytest

from streamdq.detectors import (
    MIN_DOUBLE,
    AbsoluteChange,
    BatchNormal,
    OnlineNormal,
    RelativeRateOfChange,
    SimpleThreshold,
)

SPIKE = [1.0] * 10 + [100.0]


# -- OnlineNormal ----------------------------------------------------------------------------------
def test_online_normal_flags_spike_with_point_in_running_stats() -> None:
    # i=10: mean = 1 + 99/11 = 10, Sn = 99 * 90 = 8910, sd = sqrt(810) = 28.46, upper = 95.38 < 100
    assert OnlineNormal().detect(SPIKE) == [10]


def test_online_normal_tested_point_enters_stats_first() -> None:
    # [0,0,0,10]: mean 2.5, population sd 4.33 including the 10 -> upper 15.49: not flagged,
    # although the previous points have sd 0 (BatchNormal flags it).
    series = [0.0, 0.0, 0.0, 10.0]
    assert OnlineNormal(ignore_start_percentage=0.0).detect(series) == []
    assert BatchNormal().detect(series, 3, 4) == [3]
    # with factor 1.5: upper = 2.5 + 6.495 = 8.995 < 10 -> flagged
    assert OnlineNormal(1.5, 1.5, ignore_start_percentage=0.0).detect(series) == [3]


def test_online_normal_ignore_start_percentage_is_relative_to_length() -> None:
    series = [0.0, 10.0, 0.0, 0.0]
    # index 1: mean 5, sd 5: bounds [5 - 0.5*5, 5 + 0.5*5] = [2.5, 7.5] -> 10 flagged unless skipped
    assert OnlineNormal(0.5, 0.5, ignore_start_percentage=0.0).detect(series)[:1] == [1]
    # skip = 4 * 0.5 = 2 -> indices 0 and 1 are not judged
    assert 1 not in OnlineNormal(0.5, 0.5, ignore_start_percentage=0.5).detect(series)


def test_online_normal_ignore_anomalies_removes_point_but_keeps_index_weight() -> None:
    series = [*SPIKE, 1.0, 40.0]
    # ignoring the spike: at i=11 mean stays 1, sd 0 -> 1.0 fine; at i=12 40 enters with weight 1/13
    assert OnlineNormal().detect(series) == [10, 12]
    # learning from the spike inflates sd, so 40 is no longer anomalous
    assert OnlineNormal(learn_from_anomalies=True).detect(series) == [10]


def test_online_normal_interval_and_missing_factor() -> None:
    assert OnlineNormal().detect(SPIKE, 0, 10) == []
    assert OnlineNormal().detect(SPIKE, 10, 11) == [10]
    assert OnlineNormal(lower_factor=3.0, upper_factor=None).detect(SPIKE) == []
    dip = [1.0] * 10 + [-100.0]
    assert OnlineNormal(lower_factor=None, upper_factor=3.0).detect(dip) == []
    assert OnlineNormal().detect(dip) == [10]


@pytest.mark.parametrize(
    ("kwargs", "key"),
    [
        ({"lower_factor": None, "upper_factor": None}, "lower_factor"),
        ({"lower_factor": -1.0}, "lower_factor"),
        ({"upper_factor": -0.1}, "upper_factor"),
        ({"ignore_start_percentage": 1.5}, "ignore_start_percentage"),
    ],
)
def test_online_normal_parameter_errors(kwargs: dict, key: str) -> None:
    with pytest.raises(ValueError, match=key):
        OnlineNormal(**kwargs)


def test_interval_start_after_end_is_an_error() -> None:
    for detector in (
        OnlineNormal(),
        BatchNormal(),
        SimpleThreshold(upper_bound=1.0),
        AbsoluteChange(0.0, 1.0),
    ):
        with pytest.raises(ValueError, match="can't be larger than the end"):
            detector.detect([1.0, 2.0, 3.0], 2, 1)


# -- BatchNormal -----------------------------------------------------------------------------------
def test_batch_normal_uses_sample_stddev_of_points_outside_interval() -> None:
    series = [1.0, 2.0, 3.0, 4.0, 5.0, 7.8]
    # reference [1..5]: mean 3, sample sd sqrt(2.5) = 1.5811 -> upper 3 + 4.743 = 7.743 < 7.8
    # (population sd 1.414 would give 7.24; any sd >= 1.6 would accept 7.8)
    assert BatchNormal().detect(series, 5, 6) == [5]
    assert BatchNormal().detect([*series[:5], 7.7], 5, 6) == []
    # including the interval: mean 3.8, sample sd 2.45 -> upper 11.1
    assert BatchNormal(include_interval=True).detect(series, 5, 6) == []


def test_batch_normal_single_reference_point_has_zero_stddev() -> None:
    # breeze: sample variance of one point is 0 -> bounds collapse to [5, 5]
    assert BatchNormal().detect([5.0, 5.0, 6.0], 1, 3) == [2]


def test_batch_normal_errors() -> None:
    with pytest.raises(ValueError, match="empty"):
        BatchNormal().detect([], 0, 0)
    with pytest.raises(ValueError, match="leaves no values"):
        BatchNormal().detect([1.0, 2.0], 0, 2)
    assert BatchNormal(include_interval=True).detect([1.0, 1.0], 0, 2) == []
    with pytest.raises(ValueError, match="upper_factor"):
        BatchNormal(upper_factor=-1.0)
    with pytest.raises(ValueError, match="lower_factor"):
        BatchNormal(lower_factor=None, upper_factor=None)


# -- SimpleThreshold -------------------------------------------------------------------------------
def test_simple_threshold_bounds_inclusive() -> None:
    series = [-1.0, 0.0, 0.5, 1.0, 2.0]
    assert SimpleThreshold(lower_bound=0.0, upper_bound=1.0).detect(series) == [0, 4]
    assert SimpleThreshold(lower_bound=0.0, upper_bound=1.0).detect(series, 1, 4) == []


def test_simple_threshold_default_lower_is_double_min_value() -> None:
    assert MIN_DOUBLE == -1.7976931348623157e308
    detector = SimpleThreshold(upper_bound=1.0)
    assert detector.lower_bound == MIN_DOUBLE
    assert detector.detect([-1e300, 0.0, -math.inf]) == [2]
    with pytest.raises(ValueError, match="lower_bound"):
        SimpleThreshold(lower_bound=2.0, upper_bound=1.0)


# -- AbsoluteChange --------------------------------------------------------------------------------
def test_absolute_change_order_one_bounds_inclusive_later_index() -> None:
    series = [1.0, 2.0, 3.0, 10.0, 11.0]
    assert AbsoluteChange(max_rate_increase=2.0).detect(series) == [3]
    assert AbsoluteChange(max_rate_increase=7.0).detect(series) == []  # change of exactly 7 is fine
    assert AbsoluteChange(max_rate_decrease=-1.0).detect([5.0, 4.0, 2.0]) == [2]


def test_absolute_change_higher_order_is_repeated_differencing() -> None:
    series = [1.0, 2.0, 3.0, 10.0, 11.0]
    # second differences: [0, 6, -6] at indices 2, 3, 4
    assert AbsoluteChange(-5.0, 5.0, order=2).detect(series) == [3, 4]
    # start=4: computed from max(4 - 2, 0) = 2: [3, 10, 11] -> -6 at index 4
    assert AbsoluteChange(-5.0, 5.0, order=2).detect(series, 4, 5) == [4]
    # too little history before the interval: the first `order` points cannot be flagged
    assert AbsoluteChange(-0.5, 0.5, order=2).detect([100.0, -100.0, 100.0, 100.0], 0, 2) == []
    # order 0 acts like a threshold on the values
    assert AbsoluteChange(max_rate_increase=3.0, order=0).detect([0.0, 5.0]) == [1]


def test_absolute_change_errors() -> None:
    with pytest.raises(ValueError, match="max_rate_decrease"):
        AbsoluteChange()
    with pytest.raises(ValueError, match="max_rate_increase"):
        AbsoluteChange(max_rate_decrease=2.0, max_rate_increase=1.0)
    with pytest.raises(ValueError, match="order"):
        AbsoluteChange(max_rate_increase=1.0, order=-1)


# -- RelativeRateOfChange --------------------------------------------------------------------------
def test_relative_rate_of_change_ratio_and_division_by_zero() -> None:
    # ratios: 2 (flagged), 1, 0 (flagged), 5/0 = inf (flagged)
    detector = RelativeRateOfChange(max_rate_decrease=0.5, max_rate_increase=1.5)
    assert detector.detect([1.0, 2.0, 2.0, 0.0, 5.0]) == [1, 3, 4]
    # 0/0 = NaN is never flagged
    assert detector.detect([0.0, 0.0]) == []


def test_relative_rate_of_change_order_is_a_lag_not_repeated_differencing() -> None:
    series = [1.0, 10.0, 2.0, 20.0]
    # x[2]/x[0] = 2, x[3]/x[1] = 2
    assert RelativeRateOfChange(max_rate_increase=1.5, order=2).detect(series) == [2, 3]
    assert RelativeRateOfChange(max_rate_increase=2.0, order=2).detect(series) == []
    with pytest.raises(ValueError, match="order"):
        RelativeRateOfChange(max_rate_increase=1.0, order=0)
