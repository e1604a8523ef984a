"""Simpson's index of a numeric batch (issue 22): a biased sample redrawn with replacement (the
harness's distribution change) repeats its values far more than a real day does, while its mean,
spread and quantiles can stay within the day-to-day drift. Profile-level, no Spark: real KLL
sketches."""

from __future__ import annotations

import datasketches as ds
import numpy as np
import pytest

from streamdq.autovalidate import learn_from_profiles
from streamdq.autovalidate.avh.features import (
    LOG_PRICED_SCALES,
    MIN_COLLISION_VALUES,
    collision,
    single_metrics,
)
from streamdq.autovalidate.avh.learner import bound_for
from tests.unit.autovalidate.avh_profiles import numeric_profile


def _day(rng: np.random.Generator, rows: int = 72) -> list[float]:
    """A day of readings at 0.1 resolution whose level and spread move from day to day."""
    return [float(v) for v in np.round(rng.normal(rng.uniform(40, 60), rng.uniform(4, 8), rows), 1)]


def _biased(values: list[float], share: float, rng: np.random.Generator) -> list[float]:
    """The lowest ``share`` of the values redrawn with replacement to the batch's length."""
    low = sorted(values)[: max(1, round(share * len(values)))]
    return [float(v) for v in rng.choice(low, size=len(values), replace=True)]


def test_collision_counts_equal_pairs_and_reads_weights_past_the_exact_sketch():
    sketch = ds.kll_doubles_sketch(200)
    for v in (1.0, 1.0, 1.0, 2.0):
        sketch.update(v)
    # three equal pairs among twelve ordered pairs
    assert collision(sketch, min_values=2) == pytest.approx(6 / 12)
    assert collision(sketch) is None  # too few values: two equal gusts would read 1
    assert collision(ds.kll_doubles_sketch(200), min_values=0) is None
    big = ds.kll_doubles_sketch(200)
    for i in range(10_000):
        big.update(float(i % 10))  # ten values, each a tenth of the batch: about 0.1
    assert collision(big) == pytest.approx(0.1, abs=0.02)
    values = [1.0, 1.0] + [float(i) for i in range(2, MIN_COLLISION_VALUES)]
    n = len(values)
    assert single_metrics(numeric_profile(values, "x"))["collision"] == pytest.approx(2 / (n * (n - 1)))
    assert "collision" not in single_metrics(numeric_profile(values[:-1], "x"))


def test_collision_is_priced_on_its_log_scale_with_the_normal_tail():
    # the log transform forced on a positive history; the skewed tail when Shapiro-Wilk rejects
    assert "collision" in LOG_PRICED_SCALES and bound_for("collision") == "normal"


def _learned(n_days: int):  # type: ignore[no-untyped-def]
    """A program learned on 30 synthetic days with a tenth of the last redrawn as its corruption;
    the generator, all ``n_days`` days, the program and its one ``collision`` constraint."""
    rng = np.random.default_rng(2)
    days = [_day(rng) for _ in range(n_days)]
    history = [numeric_profile(d, "temp") for d in days[:30]]
    corrupted = {"distribution_change:10%:first": numeric_profile(_biased(days[29], 0.1, rng), "temp")}
    program = learn_from_profiles(history, corrupted, fpr=0.001)
    (repeats,) = [c for c in program.constraints if c.metric == "collision"]
    return rng, days, program, repeats


def test_a_tenth_redrawn_with_replacement_is_caught_by_its_repeats_and_ordinary_days_pass():
    rng, days, program, repeats = _learned(32)
    assert repeats.transform.log and repeats.caught == ("distribution_change:10%:first",)
    for nxt in days[30:]:
        assert not program.judge_profile(numeric_profile(nxt, "temp"))
    broken = numeric_profile(_biased(days[30], 0.1, rng), "temp")
    assert [v for v in program.judge_profile(broken) if v.constraint.metric == "collision"]


def test_a_batch_with_too_few_values_for_the_index_passes_its_constraint():
    rng, days, program, repeats = _learned(31)
    assert repeats.missing_ok
    few = numeric_profile(days[30][: MIN_COLLISION_VALUES - 1], "temp")
    assert "collision" not in program.values_of(few)
    assert not [v for v in program.judge_profile(few) if v.constraint.metric == "collision"]


def test_the_index_is_bounded_above_only():
    rng, days, program, repeats = _learned(31)
    assert repeats.lower == -np.inf and repeats.transform.log and not repeats.transform.diff
    # a day read at a finer resolution repeats its values far less than any day of the history
    finer = [float(v) for v in np.round(rng.normal(50, 6, 72), 3)]
    assert not [
        v for v in program.judge_profile(numeric_profile(finer, "temp")) if v.constraint.metric == "collision"
    ]
    back = type(program).from_dict(program.to_dict())
    assert [c for c in back.constraints if c.metric == "collision"] == [repeats]
