"""The value lattice of a numeric column (issue 22): a digit dropped, inserted or changed lands off
the grid the history's values sat on. Profile-level, no Spark: profiles carry real KLL sketches."""

from __future__ import annotations

import json

import numpy as np
import pytest

from streamdq.autovalidate import Program, learn_from_profiles
from streamdq.autovalidate.avh.lattice import (
    METRIC,
    Lattice,
    find_lattice,
    history_lattice,
    off_lattice_share,
)
from streamdq.autovalidate.avh.profile import NUMERIC, ColumnProfile
from tests.unit.autovalidate.avh_profiles import numeric_profile


def _profile(values: list[float]) -> ColumnProfile:
    return numeric_profile(values, "temp")


def _fahrenheit_day(rng: np.random.Generator, rows: int = 72) -> list[float]:
    """Hourly temperatures read in tenths of a degree Celsius, published in Fahrenheit (2 decimals)."""
    celsius = np.round(rng.normal(10, 4, rows), 1)
    return [round(32 + 1.8 * c, 2) for c in celsius]


def _drop_a_digit(value: float) -> float:
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    digits = [i for i, ch in enumerate(text) if ch.isdigit()]
    i = digits[-1]  # the last digit: 50.18 -> 50.1
    return float(text[:i] + text[i + 1 :])


def test_find_lattice_recovers_an_offset_grid_and_refuses_free_decimals():
    # every third point of 32 + 0.18 m: the coarsest grid holding them is 0.54 wide
    lat = find_lattice([32 + 0.18 * m for m in range(40, 80, 3)])
    assert lat is not None and lat.step == pytest.approx(0.54)
    assert lat.off_count([32 + 0.18 * 43, 32 + 0.18 * 44]) == 1
    # wind speeds in knots published in mph: products carry float round-off, still one grid
    speeds = [m * 1.15078 for m in (0, 3, 4, 5, 6, 7, 8, 9, 13)]
    wind = find_lattice(speeds)
    assert wind is not None and wind.step == pytest.approx(1.15078)
    assert wind.off_count(speeds) == 0 and wind.off_count([10.3572, 1.35702]) == 2
    assert find_lattice([1.3, 2.71, 5.123, 8.0001, 9.5]) is None  # no grid above round-off
    assert find_lattice([10.0, 20.0, 30.0]) is None  # too few distinct values to infer one


def test_history_lattice_needs_every_batch_on_the_others_grid_and_no_dominant_value():
    rng = np.random.default_rng(3)
    days = [_profile(_fahrenheit_day(rng)) for _ in range(30)]
    lat = history_lattice(days)
    assert lat is not None and lat.step == pytest.approx(0.18)
    # one day read in finer units refines the grid: not the column's grid (leave-one-out)
    finer = [*days[:-1], _profile([v + 0.01 for v in _fahrenheit_day(rng)])]
    assert history_lattice(finer) is None
    # a capped column (10 miles of visibility on most hours) moves between a few reported values
    capped = [_profile([10.0] * 60 + list(rng.choice([0.5, 1.0, 2.0, 3.0, 5.0, 7.0], 12))) for _ in range(30)]
    assert history_lattice(capped) is None


def test_a_dropped_digit_is_caught_by_the_lattice_and_ordinary_days_pass():
    rng = np.random.default_rng(7)
    days = [_fahrenheit_day(rng) for _ in range(31)]
    history = [_profile(d) for d in days[:30]]
    newest = days[29]
    dropped = [_drop_a_digit(v) if i % 10 == 0 else v for i, v in enumerate(newest)]
    program = learn_from_profiles(history, {"deletion:10%": _profile(dropped)}, fpr=0.001)
    assert program.lattice is not None and program.lattice.step == pytest.approx(0.18)
    (grid,) = [c for c in program.constraints if c.metric == METRIC]
    # priced by exact counting, as the cheapest level that still catches the training deletion
    assert grid.bound == "binomial" and grid.lower == 0.0 and grid.caught == ("deletion:10%",)
    nxt = days[30]
    assert not program.judge_profile(_profile(nxt))
    broken = [_drop_a_digit(v) if i % 10 == 0 else v for i, v in enumerate(nxt)]
    (violation,) = [v for v in program.judge_profile(_profile(broken)) if v.constraint.metric == METRIC]
    assert violation.value == pytest.approx(off_lattice_share(_profile(broken), program.lattice))
    # one value off the grid is admitted at 0.001 (exact counting after 2,160 values on it)
    assert not program.judge_profile(_profile([*nxt[:-1], nxt[-1] + 0.01]))


def test_a_program_keeps_its_lattice_through_json():
    rng = np.random.default_rng(11)
    days = [_fahrenheit_day(rng) for _ in range(30)]
    history = [_profile(d) for d in days]
    corrupted = {"insertion:10%": _profile([v + 0.005 if i % 10 == 0 else v for i, v in enumerate(days[-1])])}
    program = learn_from_profiles(history, corrupted, fpr=0.001)
    back = Program.from_dict(json.loads(json.dumps(program.to_dict())))
    assert back.lattice == program.lattice and isinstance(back.lattice, Lattice)
    assert back.constraints == program.constraints
    # a program stored before lattices existed has none
    old = program.to_dict()
    del old["lattice"]
    assert Program.from_dict(old).lattice is None


def test_no_lattice_without_one_in_the_history():
    rng = np.random.default_rng(5)
    history = [_profile(list(rng.normal(50, 5, 72))) for _ in range(30)]
    program = learn_from_profiles(history, {}, fpr=0.001)
    assert program.lattice is None
    assert all(c.metric != METRIC for c in program.constraints)


def test_a_batch_without_values_says_nothing_about_the_lattice():
    rng = np.random.default_rng(13)
    days = [_profile(_fahrenheit_day(rng)) for _ in range(29)]
    calm = ColumnProfile("temp", NUMERIC, 72.0, {"row_count": 72.0, "completeness": 0.0})
    lat = history_lattice([*days[:10], calm, *days[10:]])
    assert lat is not None and lat.step == pytest.approx(0.18)
    assert history_lattice([calm] * 27 + days[:3]) is None  # three batches with values: too few
