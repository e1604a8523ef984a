"""Deequ's own anomaly-detection test cases (awslabs/deequ src/test/.../anomalydetection), reproduced.

The series are built exactly as Deequ's tests build them, with a port of ``java.util.Random`` (the
generator behind ``scala.util.Random``) so the Gaussian noise is the same; expected indices, bounds and
anomaly counts are Deequ's asserted values.
"""

from __future__ import annotations

import math

import pytest

from streamdq.detectors import (
    MAX_DOUBLE,
    MIN_DOUBLE,
    AbsoluteChange,
    BatchNormal,
    OnlineNormal,
    Point,
    RelativeRateOfChange,
    SimpleThreshold,
)
from streamdq.detectors.absolute_change import nth_difference
from streamdq.detectors.holt_winters import HoltWinters


class JavaRandom:
    """``java.util.Random``: 48-bit LCG, ``nextDouble`` from 26 + 27 bits, polar ``nextGaussian``."""

    MULTIPLIER = 0x5DEECE66D
    MASK = (1 << 48) - 1

    def __init__(self, seed: int) -> None:
        self.seed = (seed ^ self.MULTIPLIER) & self.MASK
        self.spare: float | None = None

    def _next(self, bits: int) -> int:
        self.seed = (self.seed * self.MULTIPLIER + 0xB) & self.MASK
        return self.seed >> (48 - bits)

    def next_double(self) -> float:
        return ((self._next(26) << 27) + self._next(27)) * 2.0**-53

    def next_gaussian(self) -> float:
        if self.spare is not None:
            value, self.spare = self.spare, None
            return value
        while True:
            v1 = 2 * self.next_double() - 1
            v2 = 2 * self.next_double() - 1
            s = v1 * v1 + v2 * v2
            if 0 < s < 1:
                break
        multiplier = math.sqrt(-2 * math.log(s) / s)
        self.spare = v2 * multiplier
        return v1 * multiplier


def gaussian_with_alternating_spikes(n: int) -> list[float]:
    """Deequ's setupDefaultStrategyAndData: N(0,1) noise, +i at even and -i at odd i in 20..30."""
    rng = JavaRandom(1)
    data = [rng.next_gaussian() for _ in range(n)]
    for i in range(20, 31):
        data[i] += i + (i % 2) * -2 * i
    return data


def online_bounds(detector: OnlineNormal, data: list[float], flagged: list[int]) -> list[tuple[float, float]]:
    """Bounds the online form reports for the flagged points (min_points = Deequ's skip count)."""
    state = detector.initial_state()
    bounds = {}
    for i, value in enumerate(data):
        state, verdict = detector.update(state, Point(float(i), value, i))
        bounds[i] = (verdict.lower, verdict.upper)
    return [bounds[i] for i in flagged]  # type: ignore[misc]


# -- OnlineNormalStrategyTest ------------------------------------------------------------------------
ONLINE_DATA = gaussian_with_alternating_spikes(51)


def test_java_random_port_matches_known_java_output() -> None:
    # new java.util.Random(42).nextInt() == -1170105035 (a well-known value), via next(32)
    rng = JavaRandom(42)
    raw = rng._next(32)
    signed = raw - (1 << 32) if raw >= 1 << 31 else raw
    assert signed == -1170105035


def test_online_normal_all_anomalies_with_deequ_bounds() -> None:
    strategy = OnlineNormal(3.5, 3.5, ignore_start_percentage=0.2)
    assert strategy.detect(ONLINE_DATA) == list(range(20, 31))
    expected = [
        (-14.868489924421404, 14.255383455388895),
        (-13.6338479733374, 13.02074150430489),
        (-16.71733585267535, 16.104229383642842),
        (-17.346915620547467, 16.733809151514958),
        (-17.496117397890874, 16.883010928858365),
        (-17.90391150851199, 17.29080503947948),
        (-17.028892797350824, 16.415786328318315),
        (-17.720100310354653, 17.106993841322144),
        (-18.23663168508628, 17.62352521605377),
        (-19.32641622778204, 18.71330975874953),
        (-18.96540323993527, 18.35229677090276),
    ]
    online = OnlineNormal(3.5, 3.5, min_points=math.ceil(51 * 0.2))
    reported = online_bounds(online, ONLINE_DATA, list(range(20, 31)))
    assert reported == expected  # bit-exact


def test_online_normal_interval_and_missing_factors() -> None:
    default = OnlineNormal(1.5, 1.5, ignore_start_percentage=0.2)
    assert default.detect(ONLINE_DATA, 25, 31) == list(range(25, 31))
    assert OnlineNormal(None, 1.5).detect(ONLINE_DATA) == list(range(20, 31, 2))
    assert OnlineNormal(1.5, None).detect(ONLINE_DATA) == list(range(21, 30, 2))
    assert default.detect([]) == []
    assert OnlineNormal(MAX_DOUBLE, MAX_DOUBLE).detect(ONLINE_DATA) == []


def test_online_normal_ignores_anomalies_in_stats() -> None:
    detector = OnlineNormal(1.5, 1.5, ignore_start_percentage=0.2)
    core = detector._initial_core()
    for value in [1.0, 1.0, 1.0, 2.0, 1.0, 1.0, 1.0]:
        core, _ = detector._advance(core, value, judge=True)
    assert core["mean"] == 1.0 and core["sn"] == 0.0


# -- BatchNormalStrategyTest -------------------------------------------------------------------------
BATCH_DATA = gaussian_with_alternating_spikes(50)


def test_batch_normal_deequ_cases() -> None:
    strategy = BatchNormal(1.0, 1.0)
    assert strategy.detect(BATCH_DATA, 25, 50) == list(range(25, 31))
    assert strategy.bounds_for(BATCH_DATA, 25, 50) == (-9.280850004177061, 10.639954755150061)
    assert BatchNormal(None, 1.0).detect(BATCH_DATA, 20, 31) == list(range(20, 31, 2))
    assert BatchNormal(None, 1.0).bounds_for(BATCH_DATA, 20, 31) == (-math.inf, 0.7781496015857838)
    assert BatchNormal(1.0, None).detect(BATCH_DATA, 10, 30) == list(range(21, 30, 2))
    assert BatchNormal(1.0, None).bounds_for(BATCH_DATA, 10, 30) == (-5.063730045618394, math.inf)
    spiky = [1.0, 1.0, 1.0, 1000.0, 500.0, 1.0]
    assert BatchNormal(3.0, 3.0).detect(spiky, 3, 5) == [3, 4]
    assert BatchNormal(3.0, 3.0).bounds_for(spiky, 3, 5) == (1.0, 1.0)
    with pytest.raises(ValueError, match="leaves no values"):
        BatchNormal().detect(BATCH_DATA)
    assert BatchNormal(MAX_DOUBLE, MAX_DOUBLE).detect(BATCH_DATA, 30, 51) == []


# -- AbsoluteChangeStrategyTest / RelativeRateOfChangeStrategyTest --------------------------------------
def test_absolute_change_deequ_cases() -> None:
    data = [1.0 if i < 20 or i > 30 else float(i if i % 2 == 0 else -i) for i in range(51)]
    strategy = AbsoluteChange(-2.0, 2.0)
    assert strategy.detect(data) == list(range(20, 32))
    assert strategy.detect(data, 25, 50) == list(range(25, 32))
    assert AbsoluteChange(None, 1.0).detect(data) == list(range(20, 31, 2))
    assert AbsoluteChange(-1.0, None).detect(data) == list(range(21, 32, 2))
    assert AbsoluteChange(MIN_DOUBLE, MAX_DOUBLE).detect(data) == []
    values = [1.0, 2.0, 4.0, 1.0, 2.0, 8.0]
    assert [nth_difference(values[j : j + 2]) for j in range(5)] == [1.0, 2.0, -3.0, 1.0, 6.0]
    assert [nth_difference(values[j : j + 3]) for j in range(4)] == [1.0, -5.0, 4.0, 5.0]
    third = [1.0, 5.0, -10.0, 3.0, 100.0, 0.01, 0.0065]
    assert [nth_difference(third[j : j + 4]) for j in range(4)] == [47, 56, -280.99, 296.9765]
    growth = [0.0, 1.0, 3.0, 6.0, 18.0, 72.0]
    assert AbsoluteChange(None, 8.0, order=2).detect(growth) == [4, 5]
    assert AbsoluteChange(None, 8.0, order=2).detect(growth, 5, 6) == [5]
    assert strategy.detect([1.0, -1.0, 4.0, -7.0]) == [2, 3]
    assert strategy.detect([]) == []
    with pytest.raises(ValueError):
        AbsoluteChange(-2.0, -3.0)


def test_relative_rate_of_change_deequ_cases() -> None:
    data = [1.0 if i < 20 or i > 30 else float(i if i % 2 == 0 else 1) for i in range(51)]
    strategy = RelativeRateOfChange(0.5, 2.0)
    assert strategy.detect(data) == list(range(20, 32))
    assert strategy.detect(data, 25, 50) == list(range(25, 32))
    assert RelativeRateOfChange(None, 1.0).detect(data) == list(range(20, 31, 2))
    assert RelativeRateOfChange(0.5, None).detect(data) == list(range(21, 32, 2))
    assert RelativeRateOfChange(MIN_DOUBLE, MAX_DOUBLE).detect(data) == []
    values = [1.0, 2.0, 4.0, 1.0, 2.0, 8.0]
    first, second = RelativeRateOfChange(None, 1.0, order=1), RelativeRateOfChange(None, 1.0, order=2)
    assert [first._change(values[j : j + 2]) for j in range(5)] == [2.0, 2.0, 0.25, 2.0, 4.0]
    assert [second._change(values[j : j + 3]) for j in range(4)] == [4.0, 0.5, 0.5, 8.0]
    third_values = [1.0, 5.0, -10.0, 3.0, 100.0, 0.01, 0.006]
    third = RelativeRateOfChange(None, 1.0, order=3)
    assert [third._change(third_values[j : j + 4]) for j in range(4)] == [3.0, 20.0, -0.001, 0.002]
    growth = [0.0, 1.0, 3.0, 6.0, 18.0, 72.0]
    assert RelativeRateOfChange(None, 8.0, order=2).detect(growth) == [2, 5]
    assert RelativeRateOfChange(None, 8.0, order=2).detect(growth, 5, 6) == [5]
    assert strategy.detect([]) == []


# -- HoltWintersTest -------------------------------------------------------------------------------
def two_weeks() -> list[float]:
    rng = JavaRandom(42)
    week = [1, 1, 1.2, 1.3, 1.5, 2.1, 1.9]
    return [v + rng.next_gaussian() for v in week * 2]


WEEKLY = HoltWinters.deequ(7)
INT_MAX = 2**31 - 1

MILK = [
    589, 561, 640, 656, 727, 697, 640, 599, 568, 577, 553, 582,
    600, 566, 653, 673, 742, 716, 660, 617, 583, 587, 565, 598,
    628, 618, 688, 705, 770, 736, 678, 639, 604, 611, 594, 634,
    658, 622, 709, 722, 782, 756, 702, 653, 615, 621, 602, 635,
]  # fmt: skip
CAR_SALES = [
    6550, 8728, 12026, 14395, 14587, 13791, 9498, 8251, 7049, 9545, 9364, 8456,
    7237, 9374, 11837, 13784, 15926, 13821, 11143, 7975, 7610, 10015, 12759, 8816,
    10677, 10947, 15200, 17010, 20900, 16205, 12143, 8997, 5568, 11474, 12256, 10583,
    10862, 10965, 14405, 20379, 20128, 17816, 12268, 8642, 7962, 13932, 15936, 12628,
]  # fmt: skip


def test_holt_winters_deequ_error_cases() -> None:
    with pytest.raises(ValueError, match="must be before end"):
        WEEKLY.detect(two_weeks(), 1, 1)
    with pytest.raises(ValueError, match="empty"):
        WEEKLY.detect([], 0, INT_MAX)
    with pytest.raises(ValueError, match="non-negative"):
        WEEKLY.detect(two_weeks(), -2, -1)
    with pytest.raises(ValueError, match="two full cycles"):
        WEEKLY.detect([1.0, 2.0, 3.0], 0, INT_MAX)


def test_holt_winters_deequ_weekly_cases() -> None:
    data = two_weeks()
    assert WEEKLY.detect(data, 100, 110) == []
    assert WEEKLY.detect([*data, data[0]], 14, 15) == []
    assert WEEKLY.detect([*data, 0.0], 14, INT_MAX) == [14]
    assert WEEKLY.detect(data + data, 26, INT_MAX) == []
    assert WEEKLY.detect([1.0] * 21, 14, INT_MAX) == []
    assert WEEKLY.detect([1.0] * 20 + [0.0], 14, INT_MAX) == [20]
    assert WEEKLY.detect([float(t) for t in range(48)], 36, INT_MAX) == []
    seasonal = [math.sin(2 * math.pi / 7 * t) + t for t in range(48)]
    assert WEEKLY.detect(seasonal, 36, INT_MAX) == []
    wrong_training = [0.0, 1, 1, 1, 1, 1, 1] * 2 + [1.0] * 7
    assert WEEKLY.detect(wrong_training, 14, 21) == [14]


@pytest.mark.parametrize(("series", "count"), [(MILK, 7), (CAR_SALES, 3)], ids=["milk", "car_sales"])
def test_holt_winters_deequ_monthly_real_data_counts(series: list[int], count: int) -> None:
    assert len(HoltWinters.deequ(12).detect([float(v) for v in series], 36, 48)) == count


# -- SimpleThresholdStrategyTest -------------------------------------------------------------------
def test_simple_threshold_deequ_cases() -> None:
    data = [-1.0, 2.0, 3.0, 0.5]
    strategy = SimpleThreshold(upper_bound=1.0)
    assert strategy.detect(data, 0, 4) == [1, 2]
    assert strategy.detect(data) == [1, 2]
    assert strategy.detect([]) == []
    assert SimpleThreshold(lower_bound=-0.5, upper_bound=1.0).detect(data) == [0, 1, 2]
    with pytest.raises(ValueError, match="lower_bound"):
        SimpleThreshold(lower_bound=2.0, upper_bound=1.0)
