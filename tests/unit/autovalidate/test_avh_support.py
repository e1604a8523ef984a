"""The value support of a numeric column (issue 22): a digit dropped from a value recorded at its
decimal resolution stays on the value grid but leaves the decade the history's values stayed in;
a digit changed in a capped value goes past the cap. Profile-level, no Spark: real KLL sketches."""

from __future__ import annotations

import json

import numpy as np
import pytest

from streamdq.autovalidate import Program, learn_from_profiles
from streamdq.autovalidate.avh.profile import ColumnProfile
from streamdq.autovalidate.avh.support import (
    METRIC,
    Support,
    decade_above,
    decade_below,
    history_support,
    off_support_share,
)
from tests.unit.autovalidate.avh_profiles import numeric_profile


def _profile(values: list[float]) -> ColumnProfile:
    return numeric_profile(values, "humid")


def _humid_day(rng: np.random.Generator, rows: int = 72) -> list[float]:
    """Relative humidity in percent at 0.01 resolution, between 20 and 100 (no grid a digit edit leaves)."""
    level = rng.uniform(35, 80)
    return [float(v) for v in np.round(np.clip(rng.normal(level, 12, rows), 20, 100), 2)]


def _drop_leading_digit(value: float) -> float:
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return float(text[1:])  # 96.17 -> 6.17, 100 -> 0


def test_decade_limits_need_the_margin():
    assert decade_below(15.0) == 10.0 and decade_below(14.9) is None
    assert decade_below(0.2) == pytest.approx(0.1) and decade_below(-5.0) is None
    assert decade_above(66.0) == 100.0 and decade_above(67.0) is None
    assert decade_above(1042.1) == 10000.0 and decade_above(0.0) is None


def test_history_support_takes_a_cap_reached_on_half_the_days_and_decades_otherwise():
    rng = np.random.default_rng(1)
    humid = [_profile(_humid_day(rng)) for _ in range(30)]
    support = history_support(humid)
    # the lowest humidity is 20 (>= 1.5 x 10): below 10 a digit is missing; the highest, 100
    # (reached on a few days only: no cap), is ten times below 1000
    assert support == Support(lower=10.0, upper=1000.0)
    # a capped column (10 miles of visibility on most hours): the cap, but no decade below (fog
    # takes the visibility to a quarter mile)
    visib = [_profile([10.0] * 60 + list(np.round(rng.uniform(1.5, 9.0, 12), 1))) for _ in range(30)]
    capped = history_support(visib)
    assert capped == Support(lower=None, upper=10.0)
    # values around zero: no decade below a negative value; above, the largest (about 18) is
    # far below 100
    assert history_support([_profile(list(rng.normal(0, 5, 72))) for _ in range(30)]) == Support(None, 100.0)
    # negative values only, with no extreme reached twice: no limit on either side
    assert history_support([_profile(list(rng.uniform(-9, -1, 20))) for _ in range(30)]) is None


def test_off_support_share_counts_values_outside_and_extremes_the_sample_missed():
    support = Support(lower=10.0, upper=100.0)
    assert off_support_share(_profile([50.0, 6.17, 120.0, 99.0]), support) == pytest.approx(0.5)
    # a batch larger than the sketch keeps a weighted sample, but its exact maximum is known
    big = _profile([50.0 + (i % 40) for i in range(5000)] + [500.0])
    share = off_support_share(big, support)
    assert share is not None and share > 0
    assert off_support_share(_profile([50.0] * 10), support) == 0.0


def test_a_dropped_leading_digit_is_caught_and_ordinary_days_pass():
    rng = np.random.default_rng(7)
    days = [_humid_day(rng) for _ in range(31)]
    history = [_profile(d) for d in days[:30]]
    dropped = [_drop_leading_digit(v) if i % 10 == 0 else v for i, v in enumerate(days[29])]
    program = learn_from_profiles(history, {"deletion:10%": _profile(dropped)}, fpr=0.001)
    assert program.support is not None and program.support.lower == 10.0
    (limit,) = [c for c in program.constraints if c.metric == METRIC]
    assert limit.bound == "binomial" and limit.lower == 0.0 and limit.caught == ("deletion:10%",)
    nxt = days[30]
    assert not program.judge_profile(_profile(nxt))
    broken = [_drop_leading_digit(v) if i % 10 == 0 else v for i, v in enumerate(nxt)]
    (violation,) = [v for v in program.judge_profile(_profile(broken)) if v.constraint.metric == METRIC]
    assert violation.value == pytest.approx(off_support_share(_profile(broken), program.support))
    # one value outside is admitted at 0.001 (exact counting after 2,160 values inside)
    assert not program.judge_profile(_profile([*nxt[:-1], 5.0]))


def test_a_program_keeps_its_support_through_json():
    rng = np.random.default_rng(11)
    days = [_humid_day(rng) for _ in range(30)]
    history = [_profile(d) for d in days]
    corrupted = {"deletion:50%": _profile([_drop_leading_digit(v) for v in days[-1]])}
    program = learn_from_profiles(history, corrupted, fpr=0.001)
    back = Program.from_dict(json.loads(json.dumps(program.to_dict())))
    assert back.support == program.support and isinstance(back.support, Support)
    assert back.constraints == program.constraints
    old = program.to_dict()
    del old["support"]  # a program stored before supports existed has none
    assert Program.from_dict(old).support is None
