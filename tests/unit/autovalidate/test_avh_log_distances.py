"""Distances to the previous batch priced on their log scale (issue 22): EMD, KS, JS, KL and
Cohen's d of a numeric column. Profile-level, no Spark: profiles carry real KLL sketches."""

from __future__ import annotations

import json
import math

import datasketches as ds
import numpy as np
import pytest

from streamdq.autovalidate import Program, learn_from_profiles
from streamdq.autovalidate.avh import bounds
from streamdq.autovalidate.avh.features import LOG_PRICED_DISTANCES, pair_metrics
from streamdq.autovalidate.avh.learner import _log_distance_fit
from streamdq.autovalidate.avh.profile import CATEGORICAL, KLL_K, NUMERIC, ColumnProfile


def _profile(values: np.ndarray) -> ColumnProfile:
    sketch = ds.kll_doubles_sketch(KLL_K)
    for v in values:
        sketch.update(float(v))
    arr = np.asarray(values, dtype=float)
    scalars = {"mean": float(arr.mean()), "std": float(arr.std(ddof=1))}
    return ColumnProfile("delay", NUMERIC, float(len(arr)), scalars, kll=bytes(sketch.serialize()))


def _history(rng: np.random.Generator, batches: int = 30, rows: int = 900) -> list[np.ndarray]:
    """A stable feed: the same skewed law every day (departure delays), a little day-to-day drift."""
    return [rng.gamma(2.0, 10.0, rows) + rng.normal(0.0, 0.5) for _ in range(batches)]


def test_a_distance_history_is_fitted_on_its_logs_and_read_back_on_the_raw_distance():
    """The log fit's constraint is ``distance <= exp(mean + k std)`` of the logs, with the normal
    tail when the logs look normal; the raw-scale Cantelli bound it replaces sits at k = 31.6."""
    rng = np.random.default_rng(1)
    ks = list(np.exp(rng.normal(math.log(0.05), 0.3, 29)))
    fit = _log_distance_fit("dist_ks", ks, {"shift": 0.45}, 1e-6)
    assert fit is not None and fit.log_scale and fit.bound == "normal" and not fit.two_sided
    assert fit.mean == pytest.approx(np.mean(np.log(ks))) and fit.std == pytest.approx(
        np.std(np.log(ks), ddof=1)
    )
    # not a priced distance, a zero in the history (two identical batches), or too short: no log fit
    assert _log_distance_fit("dist_l1", ks, {}, 1e-6) is None
    assert _log_distance_fit("dist_js", ks, {}, 1e-6, CATEGORICAL) is None  # over value counts: as before
    assert _log_distance_fit("dist_ks", [0.0, *ks[1:]], {}, 1e-6) is None
    assert _log_distance_fit("dist_ks", ks[:2], {}, 1e-6) is None
    assert {"dist_ks", "dist_emd", "dist_js", "dist_kl", "dist_cohen_d"} == LOG_PRICED_DISTANCES
    assert bounds.k_for(0.001, "cantelli") == pytest.approx(31.6, abs=0.01)


def test_a_biased_half_sample_of_a_stable_feed_is_caught_by_a_log_priced_distance():
    """The paper's distribution change (the lower half of the sorted values, drawn with replacement)
    on a feed whose distribution is the same every day: KS to the previous batch jumps from ~0.05 to
    ~0.5. Priced on the raw distance (Cantelli, k = 31.6) the KS bound is about there; on its log
    it is a few times the typical distance, a distance catches the shift, and the real next batch
    passes."""
    rng = np.random.default_rng(7)
    days = _history(rng, batches=31)
    hist = [_profile(v) for v in days[:30]]
    series = [pair_metrics(a, b)["dist_ks"] for a, b in zip(hist, hist[1:], strict=False)]
    cantelli_upper = float(np.mean(series)) + bounds.k_for(0.001, "cantelli") * float(np.std(series, ddof=1))
    # the lower half of the newest day's sorted values, drawn with replacement (corruptions.py)
    half = np.sort(days[29])[: len(days[29]) // 2]
    bad = {"distribution_change:50%:first": _profile(np.random.default_rng(3).choice(half, len(days[29])))}
    assert pair_metrics(hist[-1], bad["distribution_change:50%:first"])["dist_ks"] > 0.3
    program = learn_from_profiles(hist, bad, fpr=0.001)
    distances = [c for c in program.constraints if c.metric in LOG_PRICED_DISTANCES]
    assert distances, program.show()
    for c in distances:
        assert c.bound in ("normal", "skewed") and c.lower == 0.0
        assert c.upper == pytest.approx(math.exp(c.history_mean + c.k * c.history_std))
        assert c.metric != "dist_ks" or c.upper < cantelli_upper / 2
    assert "distribution_change:50%:first" in set().union(*(c.caught for c in distances))
    assert program.judge_profile(bad["distribution_change:50%:first"])
    assert not program.judge_profile(_profile(days[30]))
    # the program keeps the raw bound: a saved and reloaded program judges the same
    reloaded = Program.from_dict(json.loads(json.dumps(program.to_dict())))
    assert reloaded.judge_profile(bad["distribution_change:50%:first"])
    assert "vs previous batch <=" in program.show()
    # a batch identical to the reference (every distance 0) passes: the bound is on the raw distance
    assert not [v for v in program.judge_profile(hist[-1]) if v.constraint.metric in LOG_PRICED_DISTANCES]
