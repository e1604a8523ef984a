"""Auto-validation by history: profiles from engine states, the metric space, learning and judging."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from streamdq.autovalidate import Program, judge, learn, learn_from_profiles, profile_frames
from streamdq.autovalidate.avh import bounds
from streamdq.autovalidate.avh.features import pair_metrics, single_metrics
from streamdq.autovalidate.avh.learner import bound_for, looks_normal, mostly_tied, on_lattice, std_floor
from streamdq.autovalidate.avh.profile import CATEGORICAL, NUMERIC, ColumnProfile, pattern_of
from streamdq.autovalidate.avh.stationarity import MAX_LAG
from streamdq.checks.spec import loads_suite


def _batch(rng: np.random.Generator, n: int = 400) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "amount": rng.normal(50, 10, n).round(2),
            "country": rng.choice(["us", "de", "fr", "gb"], n, p=[0.4, 0.3, 0.2, 0.1]),
            "other": rng.normal(5, 1, n),
        }
    )


@pytest.fixture(scope="module")
def history():
    rng = np.random.default_rng(7)
    return [_batch(rng, int(rng.integers(380, 420))) for _ in range(20)], rng


def test_pattern_generation_follows_the_paper():
    assert pattern_of("2022-03-01 (Monday)") == "\\d-\\d-\\d -\\l-"
    assert pattern_of("98052-1202") == "\\d-\\d"
    assert pattern_of("$19.99") == "-\\d-\\d"


def test_profiles_come_from_one_segmented_engine_run(spark):
    frames = [
        pd.DataFrame({"c": ["a", "a", None, "B1"]}),
        pd.DataFrame({"c": []}),
        pd.DataFrame({"c": [" x", "yy"]}),
    ]
    p0, p1, p2 = profile_frames(frames, "c", CATEGORICAL, spark=spark)
    assert p0.rows == 4 and p0.scalars["completeness"] == 0.75
    assert p0.values == {"a": 2.0, "NullValue": 1.0, "B1": 1.0}
    assert p0.scalars["distinct_count"] == 3.0  # Histogram bins, NullValue included
    assert p0.scalars["digit_len"] == pytest.approx(1 / 3)
    assert p0.scalars["upper_ratio"] == pytest.approx(1 / 3)
    assert p0.patterns == {"\\l": 2.0, "\\l\\d": 1.0}
    assert p1.rows == 0 and not p1.values
    assert p2.scalars["padded_ratio"] == 0.5
    (n,) = profile_frames([pd.DataFrame({"x": [0.0, 2.0, None, 4.0]})], "x", NUMERIC, spark=spark)
    assert n.scalars["mean"] == 2.0 and n.scalars["sum"] == 6.0 and n.scalars["range"] == 4.0
    assert n.scalars["zero_ratio"] == pytest.approx(1 / 3) and n.scalars["median"] == 2.0
    assert n.kll_sketch().n == 3
    # profiles round-trip through JSON (the state store keeps them so)
    assert ColumnProfile.from_json(json.loads(json.dumps(n.to_json()))) == n


def test_pair_metrics_see_distribution_changes(spark):
    rng = np.random.default_rng(3)
    a, b, shifted = profile_frames(
        [
            pd.DataFrame({"x": rng.normal(0, 1, 2000)}),
            pd.DataFrame({"x": rng.normal(0, 1, 2000)}),
            pd.DataFrame({"x": rng.normal(3, 1, 2000)}),
        ],
        "x",
        NUMERIC,
        spark=spark,
    )
    same, moved = pair_metrics(a, b), pair_metrics(a, shifted)
    for name in ("dist_ks", "dist_emd", "dist_js", "dist_kl", "dist_cohen_d"):
        assert moved[name] > 5 * same[name], name
    assert moved["dist_ks"] == pytest.approx(0.87, abs=0.06)  # Phi(1.5) - Phi(-1.5)
    assert moved["dist_emd"] == pytest.approx(3.0, abs=0.3)
    cat_a = ColumnProfile("c", CATEGORICAL, 4, values={"us": 3, "de": 1}, patterns={"\\l": 4})
    cat_b = ColumnProfile("c", CATEGORICAL, 4, values={"US": 3, "de": 1}, patterns={"\\l": 4})
    d = pair_metrics(cat_a, cat_b)
    assert d["dist_l1"] == pytest.approx(1.5) and d["dist_linf"] == pytest.approx(0.75)
    assert d["dist_pat_l1"] == 0.0  # casing keeps the pattern


def test_std_floors_keep_constant_histories_from_becoming_equalities():
    assert std_floor("unique_ratio", [0.01] * 30, 400, 1e-6) == pytest.approx((0.01 * 0.99 / 400) ** 0.5)
    assert std_floor("zero_ratio", [0.0] * 30, 400, 1e-6) == pytest.approx((1 / 400 * 399 / 400 / 400) ** 0.5)
    # Poisson for a count that moves; a count that never moved (a fixed schedule) gets the
    # binomial spread of its slots: about one row, not sqrt(400) = 20
    assert std_floor("row_count", [380.0, 420.0] * 15, 400, 1e-6) == 20.0
    assert std_floor("row_count", [400.0] * 30, 400, 1e-6) == pytest.approx((399 / 400) ** 0.5)
    # half a distinct value: a key column (every value distinct) with one duplicate among 400 is
    # two floors away, not an equality broken
    key = std_floor("distinct_exponent", [1.0] * 30, 400, 1e-6)
    one_duplicate = 1.0 - np.log(399) / np.log(400)
    assert key == pytest.approx(0.5 / (400 * np.log(400)))
    assert 1.5 < one_duplicate / key < 2.5
    few = np.log(16) / np.log(400)  # 16 distinct values
    assert std_floor("distinct_exponent", [few] * 30, 400, 1e-6) == pytest.approx(0.5 / (16 * np.log(400)))
    assert std_floor("mean", [5.0] * 30, 400, 1e-6) == pytest.approx(5e-6)


def test_learn_catches_gross_issues_and_passes_a_clean_batch(spark, history):
    batches, rng = history
    program = learn(batches, "amount", fpr=0.001, seed=1, spark=spark)
    assert program.constraints and program.fpr_bound <= 0.001 + 1e-12
    assert program.history == 20 and program.corruptions > 10
    clean = _batch(rng)
    assert judge(program, clean) == []
    unit = clean.assign(amount=clean["amount"] * 100)
    violations = judge(program, unit)
    assert violations and all("breaks the learned" in v.message for v in violations)
    nulls = clean.assign(amount=[None] * len(clean))
    assert judge(program, nulls)
    # the program round-trips and judges the same
    again = Program.from_dict(json.loads(json.dumps(program.to_dict())))
    assert again == program
    assert [v.constraint for v in judge(again, unit)] == [v.constraint for v in violations]


def test_learn_on_a_categorical_column_sees_casing(spark, history):
    batches, rng = history
    program = learn(batches, "country", fpr=0.001, seed=1, spark=spark)
    clean = _batch(rng)
    assert judge(program, clean) == []
    upper = clean.assign(country=clean["country"].str.upper())
    assert judge(program, upper)
    text = program.to_yaml("orders")
    for c in program.constraints:  # every learned constraint is listed for review
        assert c.describe() in text
    suite = loads_suite(text, file="learned.yaml")  # the ordinary part loads as checks
    ordinary = [c for c in program.constraints if c.ordinary_spec() is not None]
    assert sum(len(check.constraints) for check in suite.checks) == len(ordinary)


def test_learn_from_profiles_spends_at_most_the_budget_and_prefers_recall():
    rng = np.random.default_rng(0)
    hist = [
        ColumnProfile("x", NUMERIC, 100, {"row_count": 100, "mean": float(m)}) for m in rng.normal(10, 1, 30)
    ]
    bad = {
        "unit_change:x10": ColumnProfile("x", NUMERIC, 100, {"row_count": 100, "mean": 100.0}),
        "volume_change:x0.1": ColumnProfile("x", NUMERIC, 10, {"row_count": 10, "mean": 10.0}),
    }
    program = learn_from_profiles(hist, bad, fpr=0.001)
    assert {c.metric for c in program.constraints} == {"mean", "row_count"}
    assert program.fpr_bound <= 0.001
    assert set().union(*(c.caught for c in program.constraints)) == set(bad)
    short = learn_from_profiles(hist[:2], bad)
    assert short.constraints == () and "nothing is checked" in short.show()
    with pytest.raises(ValueError):
        learn_from_profiles([], bad)


def test_learning_at_several_targets_gives_each_targets_program(history):
    """learn_at_targets computes the metrics once and selects per target: the same programs as one
    learn_from_profiles call per target (a budget of 0.05 buys at least what 0.001 buys)."""
    from streamdq.autovalidate.avh.learner import learn_at_targets

    frames, _ = history
    profiles = profile_frames(frames, "amount", NUMERIC)
    bad = {"unit_change:x10": ColumnProfile("amount", NUMERIC, 400, {"row_count": 400, "mean": 500.0})}
    together = learn_at_targets(profiles, bad, (0.001, 0.05))
    for fpr, program in together.items():
        assert program.to_dict() == learn_from_profiles(profiles, bad, fpr=fpr).to_dict()
    assert together[0.05].fpr_bound <= 0.05 and together[0.001].fpr_bound <= 0.001
    assert len(together[0.05].constraints) >= len(together[0.001].constraints) >= 1
    with pytest.raises(ValueError, match="fpr must be in"):
        learn_at_targets(profiles, bad, (0.001, 1.5))


def test_single_metrics_drop_non_finite_values():
    p = ColumnProfile("x", NUMERIC, 1, {"mean": float("nan"), "row_count": 1.0})
    assert single_metrics(p) == {"row_count": 1.0}


def test_the_distinct_exponent_tracks_the_value_distribution_not_the_batch_size():
    """Samples of one distribution: the unique ratio of 300 values is far above that of 900, the
    exponent log(distinct)/log(n) moves far less; 10% of unrelated values raise it as well."""
    from streamdq.autovalidate.avh.features import distinct_exponent

    rng = np.random.default_rng(3)

    def metrics(values: np.ndarray) -> tuple[float, float]:
        n, distinct = len(values), len(np.unique(values))
        exponent = distinct_exponent(float(n), 1.0, distinct / n)
        assert exponent is not None and exponent == pytest.approx(np.log(distinct) / np.log(n))
        return distinct / n, exponent

    delays = lambda n: np.round(rng.exponential(20.0, n) - 10.0)  # noqa: E731
    small, large = metrics(delays(300)), metrics(delays(900))
    assert small[0] / large[0] > 1.8  # the unique ratio nearly doubles with a third of the rows
    # the exponent moves, relative to its value, by under a fifth as much
    assert small[1] / large[1] - 1.0 < 0.2 * (small[0] / large[0] - 1.0)
    perturbed = metrics(np.concatenate([delays(810), rng.uniform(0, 10_000, 90).round(2)]))
    assert perturbed[1] - large[1] > 0.05  # 10% of foreign values in a batch of the usual size
    profile = ColumnProfile(
        "x", NUMERIC, 100.0, {"row_count": 100.0, "completeness": 0.5, "unique_ratio": 0.2}
    )
    assert single_metrics(profile)["distinct_exponent"] == pytest.approx(np.log(10) / np.log(50))
    assert distinct_exponent(1.0, 1.0, 1.0) is None  # one value: no exponent
    assert distinct_exponent(100.0, None, 0.5) is None
    assert bound_for("distinct_exponent") == "normal"


def test_order_statistics_of_a_mostly_tied_history_are_not_bounded():
    """median(visib) is 10 miles on most days: no +-k*std interval around it is priced right."""
    rng = np.random.default_rng(3)
    medians = [10.0] * 30
    hist = [
        ColumnProfile("v", NUMERIC, 72, {"median": m, "max": float(x)})
        for m, x in zip(medians, rng.normal(30, 2, 30), strict=True)
    ]
    bad = {
        "median_shift": ColumnProfile("v", NUMERIC, 72, {"median": 9.0, "max": 30.0}),
        "max_shift": ColumnProfile("v", NUMERIC, 72, {"median": 10.0, "max": 200.0}),
    }
    program = learn_from_profiles(hist, bad, fpr=0.001)
    assert [c.metric for c in program.constraints] == ["max"]  # the spread-out order statistic stays
    assert mostly_tied(medians) and not mostly_tied([1.0, 2.0, 2.0, 3.0, 4.0])
    assert not mostly_tied([])


def test_quantiles_of_a_discrete_column_on_a_few_atoms_are_not_bounded():
    """p05(distance) moves between a few route distances (199, 200, 198, 195 miles): its spread
    says nothing about the next atom (187), so it gets no constraint; a continuous p95 keeps one."""
    rng = np.random.default_rng(5)
    atoms = [float(a) for a in rng.choice([195.0, 198.0, 199.0, 200.0], size=30, p=[0.1, 0.2, 0.4, 0.3])]
    hist = [
        ColumnProfile("d", NUMERIC, 900, {"p05": float(a), "p95": float(x)})
        for a, x in zip(atoms, rng.normal(2500, 40, 30), strict=True)
    ]
    assert mostly_tied(atoms) is False and on_lattice(atoms)
    bad = {"far": ColumnProfile("d", NUMERIC, 900, {"p05": 20.0, "p95": 9000.0})}
    program = learn_from_profiles(hist, bad, fpr=0.001)
    assert [c.metric for c in program.constraints] == ["p95"]
    # six distinct values in 30 batches is the most a lattice has; continuous values never tie
    assert on_lattice([float(i % 6) for i in range(30)]) and not on_lattice([float(i % 7) for i in range(30)])
    assert not on_lattice(list(rng.normal(0, 1, 30))) and not on_lattice([])
    assert on_lattice([1.0, 2.0, 1.0, 2.0]) and not on_lattice([1.0, 2.0, 3.0, 4.0])


def test_numeric_single_metrics_include_the_sketch_tail_quantiles(spark):
    (p,) = profile_frames([pd.DataFrame({"x": [float(v) for v in range(1, 101)]})], "x", NUMERIC, spark=spark)
    metrics = single_metrics(p)
    # 100 values fit in the sketch uncompacted: its quantiles are exact order statistics
    assert metrics["p05"] == pytest.approx(5.0, abs=1.0) and metrics["p95"] == pytest.approx(95.0, abs=1.0)
    assert "p05" not in single_metrics(ColumnProfile("x", NUMERIC, 0, {"row_count": 0.0}))
    (c,) = profile_frames([pd.DataFrame({"c": ["a", "b"]})], "c", CATEGORICAL, spark=spark)
    assert "p05" not in single_metrics(c)


def test_a_learned_tail_quantile_exports_as_an_approx_quantile_check():
    hist = [
        ColumnProfile("x", NUMERIC, 100, {"row_count": 100.0, "p95": float(v)})
        for v in np.random.default_rng(2).normal(50, 1, 30)
    ]
    bad = {"neighbour_values": ColumnProfile("x", NUMERIC, 100, {"row_count": 100.0, "p95": 900.0})}
    program = learn_from_profiles(hist, bad)
    assert [c.metric for c in program.constraints] == ["p95"]
    (check,) = loads_suite(program.to_yaml(), file="program.yaml").checks
    (constraint,) = check.constraints
    assert constraint.kind == "has_approx_quantile" and constraint.params["quantile"] == 0.95


def test_a_batch_minimum_is_bounded_by_the_extreme_value_tail_not_chebyshev():
    """min(dep_delay) sits near -20 every day; 1% of values from a neighbouring column reach -60.
    Chebyshev at the budget's levels needs k = 32..316 (a useless interval); the extreme value
    tail needs k = 6.6..11.2 and catches it. The median, a quantile, uses the normal tail."""
    rng = np.random.default_rng(5)
    hist = [
        ColumnProfile("d", NUMERIC, 900, {"row_count": 900.0, "min": float(m), "median": float(q)})
        for m, q in zip(rng.normal(-20, 3, 30), rng.normal(-2, 0.5, 30), strict=True)
    ]
    bad = {
        "schema_change:1%": ColumnProfile(
            "d", NUMERIC, 900, {"row_count": 900.0, "min": -60.0, "median": -2.0}
        )
    }
    program = learn_from_profiles(hist, bad, fpr=0.001)
    (c,) = program.constraints
    assert (c.metric, c.bound) == ("min", "extreme")
    assert -60.0 < c.lower < -35.0 and c.k < 11.3
    assert bound_for("min") == bound_for("max") == "extreme"
    assert bound_for("median") == bound_for("p05") == "normal"
    assert bound_for("range") == "chebyshev"
    assert bound_for("std") == "skewed"  # on its log scale (test_avh_log_scales.py)


def test_a_metric_whose_history_is_visibly_not_normal_is_priced_with_the_skewed_tail():
    """median(dep_delay) sits near 0 but storms push it to 15-25 on three days in 30: Shapiro-Wilk
    rejects normality, so the constraint is priced with the skewed tail (k up to 11.2 instead of
    5.5), lets the next storm (18) pass and still catches a unit change (x 60). A calm history
    keeps the normal tail, which flags 18."""
    rng = np.random.default_rng(11)
    calm = rng.normal(0.0, 1.5, 30)
    stormy = calm.copy()
    stormy[[6, 15, 24]] = [15.0, 22.0, 25.0]
    assert looks_normal(list(calm)) and not looks_normal(list(stormy))
    assert looks_normal([1.0, 5.0, 2.0]) and looks_normal([3.0] * 30)  # too short / no spread: no test

    def passes(series: np.ndarray, median: float) -> tuple[str, bool]:
        hist = [ColumnProfile("d", NUMERIC, 900, {"median": float(v)}) for v in series]
        bad = {"unit_change": ColumnProfile("d", NUMERIC, 900, {"median": 60.0 * 20.0})}
        (c,) = learn_from_profiles(hist, bad, fpr=0.001).constraints
        raw = [float(v) for v in series]
        n = len(c.transform.series(raw))  # the k of the constraint's own bound and history
        assert c.caught == ("unit_change",) and c.k == pytest.approx(bounds.k_for(c.fpr, c.bound, n))
        value = c.transform.value_of(median, raw)  # raw or differenced
        assert value is not None
        return c.bound, c.lower <= value <= c.upper

    assert passes(stormy, 18.0) == ("skewed", True)
    assert passes(calm, 18.0) == ("normal", False)


def test_a_weekly_row_count_is_learned_against_the_same_weekday_and_judged_across_advances():
    """Flights per day dip every Saturday: against the weekday a week back, half the volume on a
    weekday is far out, while the learned program keeps a week of row counts to judge with,
    through advance() and a JSON round trip; a program stored in format 1 still reads."""
    rng = np.random.default_rng(8)
    pattern = np.array([930.0, 925.0, 920.0, 935.0, 940.0, 690.0, 820.0])
    counts = np.resize(pattern, 31) + rng.normal(0.0, 8.0, 31)
    hist = [ColumnProfile("x", NUMERIC, float(n), {"row_count": float(n)}) for n in counts[:30]]
    halved = float(round(counts[29] / 2))
    bad = {"volume_change:x0.5": ColumnProfile("x", NUMERIC, halved, {"row_count": halved})}
    program = learn_from_profiles(hist, bad, fpr=0.001)
    (c,) = program.constraints
    assert c.metric == "row_count" and c.transform.diff and c.transform.lag == 7
    # less than half as wide as the same k on the raw series (Saturdays to weekdays)
    assert c.upper - c.lower < c.k * float(np.std(counts[:30], ddof=1))
    assert program.recent_values["row_count"] == tuple(counts[30 - MAX_LAG : 30])  # room for any lag
    following = ColumnProfile("x", NUMERIC, float(counts[30]), {"row_count": float(counts[30])})
    assert program.judge_profile(following) == []
    half = ColumnProfile("x", NUMERIC, float(counts[30] / 2), {"row_count": float(counts[30] / 2)})
    assert program.judge_profile(half)
    # one batch later the program judges against the next weekday back
    moved = Program.from_dict(json.loads(json.dumps(program.advance(following).to_dict())))
    assert moved.recent_values["row_count"] == tuple(counts[31 - MAX_LAG : 31])
    assert moved.constraints == program.constraints
    old = {**program.to_dict(), "format_version": 1, "last_values": {"row_count": float(counts[29])}}
    del old["recent_values"]
    assert Program.from_dict(old).recent_values == {"row_count": (float(counts[29]),)}
    with pytest.raises(ValueError, match="format version 3"):
        Program.from_dict({**program.to_dict(), "format_version": 3})


def test_only_the_volume_is_differenced_one_period_back():
    """A column statistic with the same weekly pattern as the row count keeps its day-over-day
    or raw form: the weekly difference is for the volume alone (SEASONAL_METRICS)."""
    rng = np.random.default_rng(9)
    weekly = np.resize(np.array([930.0, 925.0, 920.0, 935.0, 940.0, 690.0, 820.0]), 30) + rng.normal(0, 8, 30)
    hist = [
        ColumnProfile("x", NUMERIC, float(n), {"row_count": float(n), "mean": float(n) / 10.0})
        for n in weekly
    ]
    bad = {
        "volume_change:x0.5": ColumnProfile("x", NUMERIC, 465.0, {"row_count": 465.0, "mean": 93.0}),
        "unit_change:x10": ColumnProfile("x", NUMERIC, 930.0, {"row_count": 930.0, "mean": 930.0}),
    }
    program = learn_from_profiles(hist, bad, fpr=0.001)
    transforms = {c.metric: c.transform for c in program.constraints}
    assert transforms["row_count"].lag == 7
    assert "mean" in transforms and transforms["mean"].lag == 1


def test_recent_values_start_over_after_a_batch_without_the_metric():
    """A difference never spans a batch that lacked its metric: learning and advance() agree."""
    from streamdq.autovalidate.avh.learner import recent_values
    from streamdq.autovalidate.avh.program import append_recent

    singles = [{"mean": 1.0, "max": 5.0}, {"max": 6.0}, {"mean": 3.0, "max": 7.0}]
    assert recent_values(singles) == {"mean": (3.0,), "max": (5.0, 6.0, 7.0)}
    stepped: dict[str, tuple[float, ...]] = {}
    for s in singles:
        stepped = append_recent(stepped, s)
    assert stepped == recent_values(singles)
    long = [{"max": float(i)} for i in range(MAX_LAG + 5)]
    assert recent_values(long)["max"] == tuple(float(i) for i in range(5, MAX_LAG + 5))
    assert append_recent({"max": recent_values(long)["max"]}, {}) == {}


def _weekly_volume(holiday_at: int, days: int = 31) -> tuple[np.ndarray, list[ColumnProfile]]:
    """Daily row counts with a weekly dip (Saturdays), noise above the Poisson floor (``std_floor``)
    and a day off at ``holiday_at`` with 40%
    fewer rows; each profile also carries a mean that does not follow the calendar."""
    rng = np.random.default_rng(12)
    counts = np.resize(np.array([930.0, 925.0, 920.0, 935.0, 940.0, 690.0, 820.0]), days) + rng.normal(
        0, 30, days
    )
    counts[holiday_at] *= 0.6
    profiles = [
        ColumnProfile(
            "x", NUMERIC, float(n), {"row_count": float(n), "mean": 50.0 + float(rng.normal(0, 0.5))}
        )
        for n in counts
    ]
    return counts, profiles


def test_volume_is_learned_without_holidays_and_not_judged_on_or_against_one():
    """A day off in the history no longer rules the volume bound out (left out, the holiday falls
    outside any bound the other days give, so leave-one-out drops them all); on a day off (or a
    batch whose weekly difference reads one) the volume is not judged, everything else is."""
    counts, profiles = _weekly_volume(holiday_at=16)
    hist, nxt = profiles[:30], profiles[30]
    flags = [i == 16 for i in range(30)]
    bad = {
        "volume_change:x0.5": replace(
            hist[-1], rows=counts[29] / 2, scalars={"row_count": counts[29] / 2, "mean": 50.0}
        ),
        "unit_change:x10": replace(hist[-1], scalars={"row_count": counts[29], "mean": 500.0}),
    }
    blind = learn_from_profiles(hist, bad, fpr=0.001)
    aware = learn_from_profiles(hist, bad, fpr=0.001, holidays=flags)
    assert [c.metric for c in blind.constraints] == ["mean"]
    (v_aware,) = [c for c in aware.constraints if c.metric == "row_count"]
    assert v_aware.transform.lag == 7 and v_aware.caught == ("volume_change:x0.5",)
    # learned from the 21 weekly differences that read no holiday (23 less the holiday and its echo)
    kept = [d for i, d in enumerate(counts[7:30] - counts[:23]) if 16 not in (i, i + 7)]
    assert len(kept) == 21 and v_aware.history_std == pytest.approx(float(np.std(kept, ddof=1)))
    assert aware.recent_holidays == tuple(flags[-MAX_LAG:])
    # a day off with 40% fewer rows: flagged unless the caller says it is a holiday
    day_off = replace(nxt, rows=nxt.rows * 0.6, scalars={"row_count": nxt.rows * 0.6, "mean": 50.0})
    assert [v.constraint.metric for v in aware.judge_profile(day_off)] == ["row_count"]
    assert aware.judge_profile(day_off, holiday=True) == []
    odd = replace(day_off, scalars={**day_off.scalars, "mean": 500.0})
    assert [v.constraint.metric for v in aware.judge_profile(odd, holiday=True)] == ["mean"]
    assert aware.muted(holiday=True) == (v_aware,) and aware.muted() == ()
    # the batch a week after a holiday would be differenced against it: it is judged against the
    # same weekday two weeks back instead (an ordinary day), not muted
    program = aware.advance(day_off, holiday=True)
    for _ in range(5):
        assert program.muted() == ()
        program = program.advance(nxt)
    program = Program.from_dict(json.loads(json.dumps(program.advance(nxt).to_dict())))
    assert program.recent_holidays[-7] and not program.recent_holidays[-14]
    assert program.muted() == () and program.judging_transform(v_aware) == replace(v_aware.transform, lag=14)
    assert program.judge_profile(nxt) == []
    halved = replace(nxt, rows=nxt.rows / 2, scalars={"row_count": nxt.rows / 2, "mean": 50.0})
    assert [v.constraint.metric for v in program.judge_profile(halved)] == ["row_count"]
    assert program.advance(nxt).judging_transform(v_aware) == v_aware.transform
    # two weeks back a day off too: nothing ordinary to read, the volume is muted
    both = replace(
        program, recent_holidays=(*program.recent_holidays[:-14], True, *program.recent_holidays[-13:])
    )
    assert (
        both.recent_holidays[-14] and both.muted() == (v_aware,) and both.judging_transform(v_aware) is None
    )
    with pytest.raises(ValueError, match="holidays has 29 flags for 30"):
        learn_from_profiles(hist, bad, holidays=flags[1:])


def test_a_day_off_is_judged_by_the_selection_without_volume_metrics():
    """An issue the row count covers (fewer rows of a wider spread) is covered by the std only as
    a second cover on an ordinary day (``avh.COVER_DEPTH``), but on a day off the row count is
    muted: the off-day selection, made without volume metrics under the same budget, covers it
    with the std first."""
    counts, profiles = _weekly_volume(holiday_at=16)
    rng = np.random.default_rng(3)
    hist = [replace(p, scalars={**p.scalars, "std": 10.0 + float(rng.normal(0, 0.2))}) for p in profiles[:30]]
    newest = hist[-1]
    bad = {
        "volume_change:x0.5": replace(newest, scalars={**newest.scalars, "row_count": counts[29] / 2}),
        "wider_and_fewer": replace(
            newest, scalars={**newest.scalars, "row_count": counts[29] / 2, "std": 30.0}
        ),
        "unit_change:x10": replace(newest, scalars={**newest.scalars, "mean": 500.0}),
    }
    flags = [i == 16 for i in range(30)]
    program = learn_from_profiles(hist, bad, fpr=0.001, holidays=flags)
    assert [c.metric for c in program.constraints] == ["mean", "row_count", "std"]
    assert program.off_day_constraints is not None
    assert [c.metric for c in program.off_day_constraints] == ["mean", "std"]
    assert program.judged() == program.constraints
    assert program.judged(holiday=True) == program.off_day_constraints
    wide = replace(newest, scalars={**newest.scalars, "std": 30.0})
    assert [v.constraint.metric for v in program.judge_profile(wide, holiday=True)] == ["std"]
    assert "on a day off (volume judged by its ordinary level above only): 2 constraint(s)" in program.show()
    again = Program.from_dict(json.loads(json.dumps(program.to_dict())))
    assert again.off_day_constraints == program.off_day_constraints
    # learned without a calendar: no off-day selection, a muted constraint is just skipped
    plain = learn_from_profiles(hist, bad, fpr=0.001)
    assert (
        plain.off_day_constraints is None and Program.from_dict(plain.to_dict()).off_day_constraints is None
    )


def test_the_day_after_a_day_off_keeps_the_weekly_row_count_when_it_covers_more():
    """The day after a holiday: its day-over-day distinct count reads the holiday and is muted,
    its weekly row count reads an ordinary day. Of the off-day selection and the constraints less
    the muted one, the better cover judges it; a day off itself keeps the off-day selection."""
    from streamdq.autovalidate.avh.program import LearnedConstraint
    from streamdq.autovalidate.avh.stationarity import Transform

    def constraint(
        metric: str, lag: int, caught: tuple[str, ...], lower: float, upper: float
    ) -> LearnedConstraint:
        return LearnedConstraint(
            "x", metric, lower, upper, "normal", 5.0, 1e-4, Transform(diff=lag > 0, lag=max(lag, 1)), caught
        )

    mean = constraint("mean", 0, ("unit_change:x10",), 40.0, 60.0)
    weekly = constraint("row_count", 7, ("volume_change:x0.5", "volume_change:x0.1"), -200.0, 200.0)
    daily_distinct = constraint("distinct_count", 1, ("schema_change:10%",), -50.0, 50.0)
    level = constraint("row_count", 0, ("volume_change:x10",), 0.0, 2000.0)
    history = tuple([900.0] * 14)
    program = Program(
        "x",
        NUMERIC,
        0.001,
        (mean, weekly, daily_distinct),
        recent_values={
            "row_count": history,
            "distinct_count": tuple([300.0] * 14),
            "mean": tuple([50.0] * 14),
        },
        history=30,
        recent_holidays=tuple([False] * 13 + [True]),  # yesterday was a day off
        off_day_constraints=(mean, level),
    )
    assert program.muted() == (daily_distinct,)
    assert program.judged() == (mean, weekly)  # 3 issues covered against the off-day selection's 2
    assert program.judged(holiday=True) == (mean, level)
    halved = ColumnProfile("x", NUMERIC, 450.0, {"row_count": 450.0, "distinct_count": 200.0, "mean": 50.0})
    assert [v.constraint.metric for v in program.judge_profile(halved)] == ["row_count"]
    assert program.judge_profile(halved, holiday=True) == []
    # an off-day selection that covers as much or more keeps judging such a day
    wider = replace(program, off_day_constraints=(mean, level, constraint("std", 0, ("a", "b"), 0.0, 9.0)))
    assert wider.judged() == wider.off_day_constraints
    # learned without a calendar: the muted constraint is just skipped
    assert replace(program, off_day_constraints=None).judged() == (mean, weekly)


def test_a_day_off_keeps_the_row_count_level_of_the_ordinary_days_above():
    """On a day off the ordinary volume constraints (the weekly difference) are muted; without any
    volume constraint a tenfold day passed on every day off and on each day whose weekly
    difference reads one. The off-day selection keeps the upper side of the row count's level on
    the ordinary days (untransformed, the holiday left out): a tenfold day is flagged, a day off
    with 40% or 90% fewer rows passes (a day off may be as quiet as it likes)."""
    counts, profiles = _weekly_volume(holiday_at=16)
    hist, nxt = profiles[:30], profiles[30]
    flags = [i == 16 for i in range(30)]

    def sized(rows: float) -> ColumnProfile:
        return replace(nxt, rows=rows, scalars={"row_count": rows, "mean": 50.0})

    bad = {
        "volume_change:x10": sized(counts[29] * 10),
        "volume_change:x0.1": sized(counts[29] / 10),
        "unit_change:x10": replace(hist[-1], scalars={"row_count": counts[29], "mean": 500.0}),
    }
    program = learn_from_profiles(hist, bad, fpr=0.001, holidays=flags)
    assert program.off_day_constraints is not None
    (level,) = [c for c in program.off_day_constraints if c.metric == "row_count"]
    assert not level.transform.diff and not level.transform.log and level.lower == 0.0
    assert level.caught == ("volume_change:x10",)
    kept = [c for i, c in enumerate(counts[:30]) if i != 16]
    assert level.history_mean == pytest.approx(float(np.mean(kept)))
    assert program.judge_profile(sized(nxt.rows * 0.6), holiday=True) == []
    assert program.judge_profile(sized(nxt.rows / 10), holiday=True) == []
    assert [v.constraint.metric for v in program.judge_profile(sized(nxt.rows * 10), holiday=True)] == [
        "row_count"
    ]
    assert (
        Program.from_dict(json.loads(json.dumps(program.to_dict()))).off_day_constraints
        == program.off_day_constraints
    )
