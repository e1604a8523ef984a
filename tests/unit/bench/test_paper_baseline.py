"""bench/autovalidate/paper.py: the paper's Auto-Validate-by-History (``avh_paper``) on profiles."""

from __future__ import annotations

import numpy as np
import pytest

from streamdq.autovalidate.avh.profile import NUMERIC, ColumnProfile
from tests.unit.bench.bench_modules import load_bench_module

P = load_bench_module("autovalidate/paper.py", "bench_avh_paper")


def _numeric(rows: float, mean: float, spread: float = 10.0, completeness: float = 1.0) -> ColumnProfile:
    scalars = {
        "row_count": rows,
        "completeness": completeness,
        "mean": mean,
        "median": mean,
        "min": mean - spread,
        "max": mean + spread,
        "range": 2 * spread,
        "sum": mean * rows * completeness,
        "unique_ratio": 0.5,
    }
    return ColumnProfile("x", NUMERIC, rows, scalars)


def _history(n: int = 30, seed: int = 7) -> list[ColumnProfile]:
    rng = np.random.default_rng(seed)
    return [_numeric(float(100 + rng.integers(-3, 4)), 50.0 + float(rng.normal(0, 0.5))) for _ in range(n)]


def _corrupted(newest: ColumnProfile) -> dict[str, ColumnProfile]:
    s = newest.scalars
    rows, mean = s["row_count"], s["mean"]
    return {
        "unit_change:x100": _numeric(rows, mean * 100, 1000.0),
        "increased_nulls:50%": _numeric(rows, mean / 2, 30.0),  # the paper's form: zeros
        "volume_change:x0.5": _numeric(rows / 2, mean),
        "volume_change:x10": _numeric(rows * 10, mean),
        "increased_nulls:50%:null": _numeric(rows, mean, completeness=0.5),  # streamdq's variant
    }


def test_it_learns_flags_an_obvious_issue_and_passes_a_clean_batch():
    history = _history()
    program = P.learn_paper(history, _corrupted(history[-1]), fpr=0.001)
    assert program.constraints, program.show()
    assert program.training == 4  # the real-NULL variant is not one of the paper's forms
    assert program.covered == 4
    assert sum(c.fpr for c in program.constraints) <= 0.001
    assert program.judge(_numeric(101.0, 50.2)) == []
    assert program.judge(_numeric(101.0, 5020.0, 1000.0))  # a unit change
    assert program.judge(_numeric(50.0, 50.1))  # half the rows
    empty = ColumnProfile("x", NUMERIC, 100.0, {"row_count": 100.0, "completeness": 0.0})
    assert program.judge(empty)  # a metric the constraints read is missing: violated


def test_a_constant_metric_gets_an_exact_constraint_priced_at_zero():
    history = [_numeric(100.0, 50.0 + 0.1 * (i % 3)) for i in range(30)]  # completeness always 1
    corrupted = {"increased_nulls:1%": _numeric(100.0, 50.0, completeness=0.99)}
    program = P.learn_paper(history, corrupted, fpr=0.001)
    [c] = program.constraints
    assert c.metric == "complete_ratio" and c.fpr == 0.0
    assert program.judge(_numeric(100.0, 50.1)) == []
    assert program.judge(_numeric(100.0, 50.1, completeness=0.99))


def test_the_greedy_keeps_the_summed_bound_within_the_target():
    history = _history(seed=3)
    for fpr in (0.001, 0.01, 0.05):
        program = P.learn_paper(history, _corrupted(history[-1]), fpr=fpr)
        assert 0 < sum(c.fpr for c in program.constraints) <= fpr
        for c in program.constraints:
            assert c.fpr == pytest.approx(P.fpr_bound(c.bound, c.k)) or c.k == 0.0


def test_fpr_bounds_are_the_papers():
    assert P.fpr_bound("chebyshev", 10.0) == pytest.approx(0.01)
    assert P.fpr_bound("cantelli", 3.0) == pytest.approx(0.1)
    assert P.fpr_bound("clt", 1.959963984540054) == pytest.approx(0.05)


def test_a_trend_is_differenced_and_a_stationary_series_is_kept():
    rng = np.random.default_rng(1)
    noise = rng.normal(0, 1, 30)
    assert P.make_stationary(list(noise)) == P.Transform()
    trend = list(np.cumsum(rng.normal(1.0, 1.0, 30)) + 100)  # a random walk with drift
    t = P.make_stationary(trend)
    assert t is not None and t.lag >= 1
    assert t.value(trend, trend[-1] + 1.0) == pytest.approx(trend[-1] + 1.0 - trend[-t.lag])


def test_only_the_papers_forms_of_the_issues_train_it():
    assert P.is_paper_corruption("whitespace_padding:10%")
    assert P.is_paper_corruption("casing_change:1%:lower")
    assert P.is_paper_corruption("distribution_change:50%:last")
    assert not P.is_paper_corruption("increased_nulls:1%:null")
    assert not P.is_paper_corruption("whitespace_padding:100%:leading")
