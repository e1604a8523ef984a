"""A batch's spread (``std``) priced on its log scale (issue 22, numeric distribution shifts):
the skewed tail of ``log(std)`` (at most exponential, k = 6.6 at 1e-3) instead of Chebyshev on the
raw value, which needs k = 316 at 1e-5 and never bounded a spread below. Profile-level, no Spark."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import numpy as np
import pytest

from streamdq.autovalidate import Program, learn_from_profiles
from streamdq.autovalidate.avh import bounds
from streamdq.autovalidate.avh.features import LOG_PRICED_SCALES, single_metrics
from streamdq.autovalidate.avh.learner import _add_candidates, _fit_metric, bound_for, std_floor
from streamdq.autovalidate.avh.profile import NUMERIC
from streamdq.autovalidate.avh.program import LearnedConstraint
from streamdq.autovalidate.avh.stationarity import Transform
from streamdq.checks.spec import loads_suite
from tests.unit.autovalidate.avh_profiles import numeric_profile

LOW = "distribution_change:10%:first"


def _days(rng: np.random.Generator, batches: int, rows: int = 900) -> list[np.ndarray]:
    """Departure delays: a right-skewed law whose scale moves by factors from day to day (a calm
    day, a stormy one), so the day's standard deviation is lognormal-like across days."""
    return [rng.gamma(1.5, math.exp(rng.normal(math.log(20.0), 0.25)), rows) - 10.0 for _ in range(batches)]


def _lowest_tenth(day: np.ndarray, seed: int) -> np.ndarray:
    """The paper's distribution change: the lowest tenth of the sorted values, drawn with replacement."""
    low = np.sort(day)[: len(day) // 10]
    return np.random.default_rng(seed).choice(low, len(day))


def test_a_spread_is_fitted_on_its_log_scale_with_the_skewed_tail():
    """The skewed tail, not the normal one: on the weather's 720 steps the log spread of the next
    day fell more than 4 history standard deviations below its mean twice (a foggy day pins the
    humidity at saturation), where the normal prediction law expects 0.2 such days."""
    rng = np.random.default_rng(5)
    stds = [float(v) for v in np.exp(rng.normal(math.log(30.0), 0.3, 30))]
    assert bound_for("std") == "skewed" and "std" in LOG_PRICED_SCALES
    fit = _fit_metric(
        "std", stds, {"collapsed": 8.0}, bound_for("std"), std_floor("std", stds, 900, 1e-6), two_sided=True
    )
    assert fit is not None and fit.transform.log and fit.bound == "skewed"
    if not fit.transform.diff:
        assert fit.mean == pytest.approx(np.mean(np.log(stds)))
    assert fit.corrupted["collapsed"] == pytest.approx(
        math.log(8.0) - (0.0 if not fit.transform.diff else math.log(stds[-2]))
    )
    # a history with a zero spread (a constant batch) has no log: the raw scale, as any metric
    flat = _fit_metric("std", [0.0, *stds[1:]], {}, "normal", 1e-6, two_sided=True)
    assert flat is not None and not flat.transform.log
    # the other metrics keep their scale (a mean may be negative)
    assert not _fit_metric("mean", stds, {}, "normal", 1e-6, two_sided=True).transform.log  # type: ignore[union-attr]


def test_a_collapsed_spread_is_caught_by_the_log_priced_std_and_the_real_next_day_passes():
    """A biased sample (the lowest tenth) of a skewed feed cuts its spread by a factor ~30:
    Chebyshev on the raw std (k = 31.6 at 1e-3) admits a std of 0; the log scale's bound is a
    fraction of the smallest day's spread, and catches it at every level of the ladder."""
    rng = np.random.default_rng(11)
    days = _days(rng, 31)
    hist = [numeric_profile(v.tolist(), "delay") for v in days[:30]]
    bad = {LOW: numeric_profile(_lowest_tenth(days[29], 3).tolist(), "delay")}
    stds = [single_metrics(p)["std"] for p in hist]
    bad_std = single_metrics(bad[LOW])["std"]
    assert bad_std < min(stds) / 10
    # the raw-scale Chebyshev interval the std had before: its lower side is below 0
    assert float(np.mean(stds)) - bounds.k_for(0.001, "chebyshev") * float(np.std(stds, ddof=1)) < 0.0
    fit = _fit_metric(
        "std", stds, {LOW: bad_std}, bound_for("std"), std_floor("std", stds, 900, 1e-6), two_sided=True
    )
    assert fit is not None
    candidates: dict = {}
    _add_candidates(candidates, "delay", fit, 0.001)
    assert candidates and all(LOW in c.caught for c in candidates.values())
    program = learn_from_profiles(hist, bad, fpr=0.001)
    assert program.judge_profile(bad[LOW])
    assert not program.judge_profile(numeric_profile(days[30].tolist(), "delay"))
    spread = [c for c in program.constraints if c.metric == "std"]
    if spread:  # when selected, it is a log-scale constraint that survives a save and reload
        assert spread[0].transform.log
        reloaded = Program.from_dict(json.loads(json.dumps(program.to_dict())))
        assert reloaded.judge_profile(bad[LOW])


def test_a_log_scale_bound_exports_as_an_ordinary_check_on_the_raw_metric():
    """``log(std)`` between a and b is ``std`` between exp(a) and exp(b): the review document's
    checks keep the spread (a difference has no ordinary form and stays out)."""
    c = LearnedConstraint(
        "delay", "std", math.log(10.0), math.log(40.0), "normal", 5.0, 1e-5, transform=Transform(log=True)
    )
    spec = c.ordinary_spec()
    assert spec is not None
    lo, hi = spec["has_standard_deviation"]["assertion"]["between"]
    assert lo == pytest.approx(10.0) and hi == pytest.approx(40.0)
    assert replace(c, transform=Transform(log=True, diff=True)).ordinary_spec() is None
    program = Program(column="delay", kind=NUMERIC, fpr=0.001, constraints=(c,))
    (check,) = loads_suite(program.to_yaml(), file="program.yaml").checks
    (loaded,) = check.constraints
    assert loaded.kind == "has_standard_deviation"
