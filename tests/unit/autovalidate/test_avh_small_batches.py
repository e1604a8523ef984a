"""Auto-validation on small, constant-size batches and rare events (issue 22): the row count of a
fixed schedule, exact counting for shares that never left 0 or 1, and covering each synthetic issue
with a second metric. Profile-level (no Spark) except the one test of ``profile_steps``."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from streamdq.autovalidate import Program, judge, learn, learn_from_profiles
from streamdq.autovalidate.avh import bounds, stationarity
from streamdq.autovalidate.avh.learner import all_null_chance, count_ceiling, row_count_floor, schedule_cap
from streamdq.autovalidate.avh.profile import CATEGORICAL, NUMERIC, ColumnProfile
from streamdq.learning import profile_steps


def _hourly(rng: np.random.Generator, rows: int = 72) -> ColumnProfile:
    """A day of hourly readings: always ``rows`` rows, complete, a mean that wanders."""
    return ColumnProfile(
        "temp",
        NUMERIC,
        rows,
        {"row_count": float(rows), "completeness": 1.0, "mean": float(rng.normal(50, 5))},
    )


def test_a_row_count_that_never_moved_catches_a_halved_batch():
    rng = np.random.default_rng(1)
    history = [_hourly(rng) for _ in range(30)]
    halved = {
        "volume_change:x0.5": ColumnProfile(
            "temp", NUMERIC, 36, {"row_count": 36.0, "completeness": 1.0, "mean": 50.0}
        )
    }
    program = learn_from_profiles(history, halved, fpr=0.001)
    (count,) = [c for c in program.constraints if c.metric == "row_count"]
    # the Poisson floor (sqrt 72 = 8.5 rows) let 36 rows pass; a fixed schedule's count gets a
    # spread of about one row, and a few missing readings (70 or 71 rows) still pass
    assert count.lower > 60 and count.upper < 84
    assert program.judge_profile(
        ColumnProfile("temp", NUMERIC, 36, {"row_count": 36.0, "completeness": 1.0, "mean": 50.0})
    )
    assert not program.judge_profile(
        ColumnProfile("temp", NUMERIC, 70, {"row_count": 70.0, "completeness": 1.0, "mean": 50.0})
    )


def test_row_count_floor_is_poisson_unless_the_count_never_moved():
    assert row_count_floor([72.0] * 30) == pytest.approx((71 / 72) ** 0.5)
    # a count that moved, even a little (one day with 70 readings), keeps the Poisson floor
    assert row_count_floor([72.0] * 29 + [70.0]) == pytest.approx(float(np.mean([72.0] * 29 + [70.0])) ** 0.5)
    rng = np.random.default_rng(0)
    arrivals = rng.poisson(900, 30).astype(float)
    assert row_count_floor(list(arrivals)) == pytest.approx(float(np.mean(arrivals)) ** 0.5)


def test_binomial_count_is_exact_counting_after_zero_events():
    # 30 complete batches of 72 rows: one NULL passes at 1e-3, three at 1e-5 (the normal floor
    # admitted 5; the 95% rate bound admitted 2 at 1e-3); any NULL breaks it at a 0.05 target
    assert bounds.binomial_count(1e-3, 72, 2160) == 1
    assert bounds.binomial_count(1e-5, 72, 2160) == 3
    assert bounds.binomial_count(0.05, 72, 2160) == 0
    # "any event where the history had none" costs about 1 / (2 x history batches)
    assert bounds.binomial_fpr(0, 72, 2160) == pytest.approx(1 / 61, rel=0.02)
    # the admitted count's tail is at most the level, one fewer is over it
    for level in (1e-3, 1e-4, 1e-5):
        c = bounds.binomial_count(level, 900, 27000)
        assert bounds.binomial_fpr(c, 900, 27000) <= level < bounds.binomial_fpr(c - 1, 900, 27000)
    # simulated from the law it assumes (a Jeffreys rate, then binomial counts), the constraint's
    # FPR is the level it was priced at
    rng = np.random.default_rng(3)
    counts = rng.binomial(72, rng.beta(0.5, 2160.5, 400_000))
    assert (counts > 0).mean() == pytest.approx(bounds.binomial_fpr(0, 72, 2160), rel=0.05)
    assert (counts > bounds.binomial_count(1e-3, 72, 2160)).mean() <= 1e-3
    with pytest.raises(ValueError):
        bounds.binomial_count(0.0, 72, 2160)


def test_any_null_where_history_had_none_is_priced_from_the_history():
    rng = np.random.default_rng(4)
    history = [_hourly(rng) for _ in range(30)]

    def nulls(k: int) -> ColumnProfile:
        return ColumnProfile(
            "temp", NUMERIC, 72, {"row_count": 72.0, "completeness": (72 - k) / 72, "mean": 50.0}
        )

    one = {"increased_nulls:1%:null": nulls(1)}
    # affordable under a 0.05 target: the one NULL of 1% real NULLs in 72 rows is caught
    loose = learn_from_profiles(history, one, fpr=0.05)
    (complete,) = [c for c in loose.constraints if c.metric == "completeness"]
    assert complete.fpr == pytest.approx(bounds.binomial_fpr(0, 72, 2160))
    assert loose.judge_profile(nulls(1)) and not loose.judge_profile(nulls(0))
    # not under 0.001: 30 batches cannot price a first NULL that low, and one NULL passes
    strict = learn_from_profiles(history, one, fpr=0.001)
    assert not strict.judge_profile(nulls(1))


def test_completeness_that_never_left_one_is_priced_by_counting():
    rng = np.random.default_rng(2)
    history = [_hourly(rng) for _ in range(30)]

    def nulls(k: int) -> ColumnProfile:
        return ColumnProfile(
            "temp", NUMERIC, 72, {"row_count": 72.0, "completeness": (72 - k) / 72, "mean": 50.0}
        )

    program = learn_from_profiles(
        history, {"increased_nulls:50%:null": nulls(36), "increased_nulls:10%:null": nulls(7)}
    )
    (complete,) = [c for c in program.constraints if c.metric == "completeness"]
    assert complete.bound == "binomial" and complete.upper == 1.0
    # at most 3 NULLs in 72 rows pass at the ladder's lowest level (the normal floor admitted 5)
    assert program.judge_profile(nulls(4)) and not program.judge_profile(nulls(2))
    assert complete.fpr <= 0.001
    # the stored form is unchanged (format version 2): a binomial constraint is bounds and a name
    stored = json.loads(json.dumps(program.to_dict()))
    assert stored["format_version"] == 2 and Program.from_dict(stored) == program


def test_upper_case_where_history_had_none_is_a_rare_event():
    def batch(upper: float) -> ColumnProfile:
        scalars = {"row_count": 900.0, "completeness": 1.0, "char_len": 2.0, "upper_ratio": upper}
        return ColumnProfile("code", CATEGORICAL, 900, scalars)

    history = [batch(0.0) for _ in range(30)]
    program = learn_from_profiles(history, {"casing_change:10%:upper": batch(0.1)}, fpr=0.001)
    (upper,) = [c for c in program.constraints if c.metric == "upper_ratio"]
    assert upper.bound == "binomial"
    assert program.judge_profile(batch(9 / 1800))  # 1% of 900 codes upper-cased
    assert not program.judge_profile(batch(0.0))


def test_each_issue_gets_a_second_metric_while_the_budget_lasts():
    from streamdq.autovalidate.avh.select import greedy_select

    costs = {"mean@1": 1e-4, "mean@0.1": 1e-5, "p05@1": 1e-4, "max@1": 5e-4}
    coverage = {"mean@1": {"a", "b"}, "mean@0.1": {"a", "b"}, "p05@1": {"a"}, "max@1": {"b"}}
    groups = {n: n.split("@")[0] for n in costs}
    assert greedy_select(costs, coverage, budget=0.001) == ["mean@0.1"]
    deep = greedy_select(costs, coverage, budget=0.001, depth=2, groups=groups)
    assert deep[0] == "mean@0.1" and set(deep[1:]) == {"p05@1", "max@1"}  # not mean again
    assert sum(costs[n] for n in deep) <= 0.001
    assert greedy_select(costs, coverage, budget=2e-4, depth=2, groups=groups) == ["mean@0.1", "p05@1"]
    with pytest.raises(ValueError):
        greedy_select(costs, coverage, budget=0.001, depth=0)


def test_profile_steps_gives_learns_programs_in_one_engine_run(spark):
    rng = np.random.default_rng(5)
    batches = [
        pd.DataFrame({"v": rng.normal(10, 1, 40).round(2), "w": rng.normal(3, 1, 40)}) for _ in range(9)
    ]
    from streamdq.autovalidate import profile_frames

    history = profile_frames(batches[:8], "v", NUMERIC, spark=spark)
    (step,) = profile_steps([(batches[7], 11, [batches[8]])], "v", NUMERIC, spark=spark)
    assert len(step.judged) == 1 and "unit_change:x10" in step.corrupted
    fast = learn_from_profiles(history, step.corrupted, fpr=0.01)
    slow = learn(batches[:8], "v", fpr=0.01, seed=11, spark=spark)
    assert fast.to_dict() == slow.to_dict()
    assert fast.judge_profile(step.judged[0]) == judge(slow, batches[8])
    assert profile_steps([], "v", NUMERIC) == []


def test_a_column_all_null_on_some_batches_keeps_its_value_constraints():
    """A gust column is all NULL on calm days: its mean is missing there. The mean is learned from
    the days that have it, and a calm day passes it (issue 22, second round; on by default since
    the third)."""
    rng = np.random.default_rng(5)

    def day(mean: float | None, completeness: float) -> ColumnProfile:
        scalars = {"row_count": 24.0, "completeness": completeness}
        if mean is not None:
            scalars["mean"] = mean
        return ColumnProfile("gust", NUMERIC, 24, scalars)

    history = [
        day(None, 0.0) if i % 3 == 0 else day(float(rng.normal(25, 2)), float(rng.uniform(0.1, 0.5)))
        for i in range(30)
    ]
    program = learn_from_profiles(history, {"unit_change:x10": day(250.0, 0.3)}, fpr=0.001)
    (mean,) = [c for c in program.constraints if c.metric == "mean"]
    assert mean.missing_ok and "or missing" in mean.describe() and mean.ordinary_spec() is None
    assert program.judge_profile(day(250.0, 0.3))  # ten times the gusts
    assert not program.judge_profile(day(None, 0.0))  # a calm day
    assert not program.judge_profile(day(26.0, 0.3))
    again = Program.from_dict(json.loads(json.dumps(program.to_dict())))
    assert again == program and not again.judge_profile(day(None, 0.0))
    # present on fewer than half of the batches: no constraint on it
    sparse = [day(None, 0.0) if i % 3 else day(float(rng.normal(25, 2)), 0.2) for i in range(30)]
    thin = learn_from_profiles(sparse, {"unit_change:x10": day(250.0, 0.3)}, fpr=0.001)
    assert all(c.metric != "mean" for c in thin.constraints)


def test_any_upper_case_where_history_had_none_is_bought_when_the_target_affords_it():
    """24 lower-case codes a batch (48 letters), never an upper-case letter in 30 batches: one
    upper-cased letter costs about 1/61 as a constraint, bought under 0.05, not under 0.001."""

    def batch(upper_letters: int) -> ColumnProfile:
        scalars = {"row_count": 24.0, "completeness": 1.0, "char_len": 2.0, "upper_ratio": upper_letters / 48}
        return ColumnProfile("code", CATEGORICAL, 24, scalars)

    history = [batch(0) for _ in range(30)]
    one = {"casing_change:1%:upper": batch(1)}
    loose = learn_from_profiles(history, one, fpr=0.05)
    (upper,) = [c for c in loose.constraints if c.metric == "upper_ratio"]
    assert upper.fpr == pytest.approx(bounds.binomial_fpr(0, 48, 1440))
    assert loose.judge_profile(batch(1)) and not loose.judge_profile(batch(0))
    assert not learn_from_profiles(history, one, fpr=0.001).judge_profile(batch(1))


def test_all_null_chance_reads_each_batch_null_rate():
    def day(completeness: float, rows: int = 24) -> dict[str, float]:
        return {"row_count": float(rows), "completeness": completeness}

    assert all_null_chance([day(1.0)] * 30, [24.0] * 30) == 0.0
    # one calm day (1 gust in 24 hours) among 29 complete ones: that day's (23/24)^24
    singles = [day(1.0)] * 29 + [day(1 / 24)]
    assert all_null_chance(singles, [24.0] * 30) == pytest.approx((23 / 24) ** 24 / 30)
    # a day that was all NULL says so outright
    assert all_null_chance([day(0.0), day(1.0)], [24.0, 24.0]) == pytest.approx(0.5)
    assert all_null_chance([], []) == 0.0


def test_a_column_that_may_be_all_null_is_not_flagged_for_an_undefined_metric():
    """Wind gusts are NULL on every calm hour: 30 days each with a few gusts, then a day with none
    (2013-04-15 at Newark), whose mean, min and quantiles are undefined. That is priced from the
    history's NULL rates (about 0.1 here), far above any level of a 0.001 target, so the value
    constraints admit it; a column that was complete still flags an undefined mean."""
    rng = np.random.default_rng(6)

    def day(mean: float | None, completeness: float, column: str = "gust") -> ColumnProfile:
        scalars = {"row_count": 24.0, "completeness": completeness}
        if mean is not None:
            scalars["mean"] = mean
        return ColumnProfile(column, NUMERIC, 24, scalars)

    history = [day(float(rng.normal(25, 2)), float(rng.uniform(0.05, 0.3))) for _ in range(30)]
    program = learn_from_profiles(history, {"unit_change:x10": day(250.0, 0.2)}, fpr=0.001)
    (mean,) = [c for c in program.constraints if c.metric == "mean"]
    assert mean.missing_ok
    assert not program.judge_profile(day(None, 0.0))  # the calm day passes
    assert program.judge_profile(day(250.0, 0.2))  # ten times the gusts does not
    complete = [day(float(rng.normal(25, 2)), 1.0, "temp") for _ in range(30)]
    strict = learn_from_profiles(complete, {"unit_change:x10": day(250.0, 1.0, "temp")}, fpr=0.001)
    (mean,) = [c for c in strict.constraints if c.metric == "mean"]
    assert not mean.missing_ok
    assert any(v.constraint.metric == "mean" for v in strict.judge_profile(day(None, 1.0, "temp")))


def test_a_fixed_schedule_with_dips_caps_the_count_above_its_slots():
    """24 hourly readings a day, 23 on two of 30 days: the dips keep the Poisson floor below (an
    outage takes hours at once), but nothing in the history went above 24, so above it the count
    gets the slot spread (about one row) and a doubled day is flagged; with the Poisson floor (4.9
    rows, and the skewed tail's k = 11.2 that this history got before the floor set the tail) up
    to 78 rows passed."""
    rng = np.random.default_rng(7)
    counts = [24] * 28 + [23, 23]
    history = [_hourly(rng, rows) for rows in counts]
    doubled = {
        "volume_change:x2": ColumnProfile(
            "temp", NUMERIC, 48, {"row_count": 48.0, "completeness": 1.0, "mean": 50.0}
        )
    }
    program = learn_from_profiles(history, doubled, fpr=0.001)
    (count,) = [c for c in program.constraints if c.metric == "row_count"]
    assert 24 < count.upper < 40 and count.lower < 12  # 24 + k slot spreads above, Poisson below

    def day(rows: int) -> ColumnProfile:
        return ColumnProfile(
            "temp", NUMERIC, rows, {"row_count": float(rows), "completeness": 1.0, "mean": 50.0}
        )

    assert program.judge_profile(day(48))
    assert not program.judge_profile(day(24)) and not program.judge_profile(day(20))
    assert schedule_cap(counts) == (24.0, pytest.approx((23 / 24) ** 0.5))
    # a count that sits on its maximum on fewer than half of the batches has no schedule
    assert schedule_cap([24] * 10 + [23] * 20) is None


def test_a_scheduled_count_spread_by_its_floor_keeps_the_normal_tail():
    """72 hourly readings, 71 and 67 on two of 30 days: Shapiro-Wilk rejects a count sitting on
    its cap with dips, and the skewed tail (k = 6.6 at 1e-3) on the Poisson floor (8.5 rows)
    admitted 10 rows, so a halved day passed. The floor, not the history, sets the spread, and
    the floor's law is near normal at 72: the halved day is flagged, the year's fewest readings
    (57) pass."""
    rng = np.random.default_rng(5)
    counts = [72] * 28 + [71, 67]
    history = [_hourly(rng, rows) for rows in counts]

    def day(rows: int) -> ColumnProfile:
        return ColumnProfile(
            "temp", NUMERIC, rows, {"row_count": float(rows), "completeness": 1.0, "mean": 50.0}
        )

    program = learn_from_profiles(history, {"volume_change:x0.5": day(36)}, fpr=0.001)
    (count,) = [c for c in program.constraints if c.metric == "row_count"]
    assert count.bound == "normal" and 36 < count.lower < 57
    assert program.judge_profile(day(36)) and not program.judge_profile(day(57))
    # a count that moves freely (arrivals) is spread by its history: the skewed tail stays
    arrivals = [72, 80, 64, 90, 70, 71, 150, 75, 66, 69] * 3
    freely = learn_from_profiles([_hourly(rng, rows) for rows in arrivals], {"volume_change:x10": day(720)})
    (free,) = [c for c in freely.constraints if c.metric == "row_count"]
    assert free.bound == "skewed"


def _reading_day(
    rng: np.random.Generator, rows: int, mean: float | None = None, p95: float | None = None
) -> ColumnProfile:
    """A day of hourly temperatures: ``rows`` rows, complete, a wandering mean and 95% quantile."""
    centre = float(rng.normal(50, 5)) if mean is None else mean
    return ColumnProfile(
        "temp",
        NUMERIC,
        rows,
        {
            "row_count": float(rows),
            "completeness": 1.0,
            "mean": centre,
            "p95": centre + 10.0 if p95 is None else p95,
        },
    )


def test_a_scheduled_count_with_dips_flags_a_halved_day_whatever_the_selection():
    """72 readings a day with a few dips (as the weather feed): the Poisson floor (8.5 rows) sets
    the spread. The greedy selection buys the cheapest row-count candidate that catches the 10x,
    2x and 0.1x volumes, and the training halving is also caught by the mean and the 95% quantile
    (as a halved sample's moments move by chance); the normal tail of the floor at that level
    (1e-5, Student-t on 30 points) admitted 26 rows, so a halved day with ordinary values passed.
    The count's own Poisson law admits 38 at that level: every candidate flags the halved day,
    and a day with 60 readings (the fewest in the weather feed's 2013) still passes."""
    rng = np.random.default_rng(11)
    counts = [72] * 27 + [71, 67, 69]
    history = [_reading_day(rng, rows) for rows in counts]
    corrupted = {
        "volume_change:x0.1": _reading_day(rng, 7, 50.0),
        "volume_change:x0.5": _reading_day(rng, 36, 500.0, 600.0),  # the training draw's moments moved
        "volume_change:x2": _reading_day(rng, 144, 50.0),
        "volume_change:x10": _reading_day(rng, 720, 50.0),
    }
    program = learn_from_profiles(history, corrupted, fpr=0.001)
    (count,) = [c for c in program.constraints if c.metric == "row_count"]
    assert 36 < count.lower <= 60 and count.upper < 144
    assert program.judge_profile(_reading_day(rng, 36, 50.0))
    assert program.judge_profile(_reading_day(rng, 35, 50.0))
    assert not program.judge_profile(_reading_day(rng, 60, 50.0))
    assert not program.judge_profile(_reading_day(rng, 72, 50.0))
    assert bounds.poisson_lower(1e-5, 72.0, 30) == 38


def test_a_scheduled_count_is_never_differenced():
    """A count on a fixed schedule returns to its cap after each dip, so ADF's unit root is no
    trend; a differenced 72-row count with a few dips got ``-70 <= row_count - previous <= 70``,
    which let halved and doubled days pass. The count is bounded as it is."""
    rng = np.random.default_rng(3)
    counts = [72] * 9 + [70] + [72] * 12 + [70, 72, 72, 70, 72, 72, 69, 72]  # the weather's summer 2013
    assert stationarity.fit([float(c) for c in counts]).diff  # ADF keeps its unit root
    history = [_reading_day(rng, rows) for rows in counts]
    corrupted = {
        "volume_change:x0.5": _reading_day(rng, 36, 50.0),
        "volume_change:x2": _reading_day(rng, 144, 50.0),
    }
    program = learn_from_profiles(history, corrupted, fpr=0.001)
    (count,) = [c for c in program.constraints if c.metric == "row_count"]
    assert not count.transform.diff and not count.transform.log
    assert program.judge_profile(_reading_day(rng, 36, 50.0)) and program.judge_profile(
        _reading_day(rng, 144, 50.0)
    )


def test_two_distances_are_one_cover_and_the_row_count_makes_the_second():
    """A tenfold volume of a column whose value shares never move (three stations, 24 readings
    each) is caught in training by the chi-squared and the cosine distance alike, both bounded
    just above 0 and crossed by sampling noise alone. They read the same two distributions: as a
    second cover they count once (``cover_group``), so the row count, which catches any tenfold
    day, is bought as the second cover instead of the second distance."""
    from streamdq.autovalidate.avh.learner import _select, cover_group
    from streamdq.autovalidate.avh.program import LearnedConstraint

    def candidate(metric: str, fpr: float, caught: tuple[str, ...]) -> LearnedConstraint:
        return LearnedConstraint("origin", metric, 0.0, 1.0, "cantelli", 1.0, fpr, caught=caught)

    candidates = {
        "dist_chi2@0.01": candidate("dist_chi2", 1e-5, ("padding", "typo", "volume_change:x10")),
        "dist_cosine@0.01": candidate("dist_cosine", 1e-5, ("padding", "typo", "volume_change:x10")),
        "row_count@0.5": candidate("row_count", 5e-4, ("volume_change:x10",)),
    }
    chosen = [c.metric for c in _select(candidates, 0.001)]
    assert "row_count" in chosen and "dist_chi2" in chosen
    assert {cover_group(m) for m in ("dist_chi2", "dist_cosine", "dist_ks")} == {"dist"}
    assert cover_group("dist_pat_l1") == "dist_pat" and cover_group("mean") == "mean"


def test_an_under_dispersed_count_off_any_schedule_is_capped_by_its_own_spread():
    """Weekly readings cut by quarter: 13 a quarter, 12 or 14 on a few (the calendar), never on
    one cap on half of the batches, so no schedule. The Poisson floor (sqrt 13 = 3.6 rows) set the
    spread and Shapiro-Wilk gave it the skewed tail (k = 11.2 at 1e-5): ``0 <= row_count <= 53``,
    and a doubled or a tenth-size quarter passed. The floor sets the spread, so the normal tail and
    the Poisson law below (a quarter of one reading is flagged); above, the count gets its own
    spread (at least a slot's, about one row), so a doubled quarter is flagged and one of 15 passes."""
    rng = np.random.default_rng(13)
    counts = [13] * 12 + [14] + [13] * 8 + [12, 13, 14] + [13] * 5 + [14]
    assert schedule_cap([float(c) for c in counts]) is None
    history = [_hourly(rng, rows) for rows in counts]

    def day(rows: int) -> ColumnProfile:
        return ColumnProfile(
            "temp", NUMERIC, rows, {"row_count": float(rows), "completeness": 1.0, "mean": 50.0}
        )

    program = learn_from_profiles(
        history, {"volume_change:x2": day(26), "volume_change:x0.1": day(1)}, fpr=0.001
    )
    (count,) = [c for c in program.constraints if c.metric == "row_count"]
    assert count.bound == "normal" and 15 < count.upper < 26 and 1 < count.lower < 12
    assert program.judge_profile(day(26)) and program.judge_profile(day(1))
    assert not program.judge_profile(day(15)) and not program.judge_profile(day(12))
    assert count_ceiling([13.0] * 26 + [14.0, 12.0, 14.0, 12.0]) == (13.0, pytest.approx((13 / 14) ** 0.5))
    # on a fixed schedule, the cap and its slot spread as before
    assert count_ceiling([24.0] * 28 + [23.0, 23.0]) == schedule_cap([24.0] * 28 + [23.0, 23.0])
