"""bench/autovalidate/scores.py: the z-score baselines and the threshold matched to AVH's alarms."""

from __future__ import annotations

import math

import pytest

from streamdq.autovalidate.avh.profile import CATEGORICAL, ColumnProfile
from tests.unit.bench.bench_modules import load_bench_module

S = load_bench_module("autovalidate/scores.py", "bench_avh_scores")


def test_z_is_the_distance_in_history_standard_deviations():
    history = [1.0, 2.0, 3.0]  # mean 2, sample std 1
    assert S.z_of(history, 5.0) == pytest.approx(3.0)
    assert S.z_of(history, -1.0) == pytest.approx(3.0)
    assert S.z_of(history, -1.0, one_sided=True) == 0.0
    assert S.z_of(history, 4.0, floor=4.0) == pytest.approx(0.5)


def test_z_of_a_missing_value_or_a_change_of_a_constant_history_is_infinite():
    assert S.z_of([1.0, 2.0, 3.0], None) == math.inf
    assert S.z_of([1.0, 1.0, 1.0], 1.0) == 0.0
    assert S.z_of([1.0, 1.0, 1.0], 1.001) == math.inf
    assert S.z_of([1.0], 100.0) == 0.0  # nothing to compare with


def test_max_z_takes_the_worst_metric():
    history = {"a": [1.0, 2.0, 3.0], "b": [10.0, 20.0, 30.0]}
    assert S.max_z(history, {"a": 2.0, "b": 60.0}) == pytest.approx(4.0)
    assert S.max_z(history, {"a": 2.0}) == math.inf  # b went missing
    assert S.max_z({}, {"a": 1.0}) == 0.0


def test_matched_threshold_flags_at_most_the_given_number_of_clean_batches():
    clean = [0.5, 7.0, 3.0, 9.0, 3.0, 1.0]
    for alarms in range(len(clean) + 2):
        t = S.matched_threshold(clean, alarms)
        flagged = sum(c > t for c in clean)
        assert flagged <= alarms
        # and it is the smallest such threshold: any lower one among the scores flags more
        lower = [c for c in clean if c < t]
        if lower:
            assert sum(c > max(lower) for c in clean) > alarms
    assert S.matched_threshold(clean, 2) == 3.0  # 9 and 7 flagged; the tie at 3 is not
    with pytest.raises(ValueError):
        S.matched_threshold(clean, -1)


def test_infinite_clean_scores_stay_flagged_at_any_threshold():
    t = S.matched_threshold([math.inf, math.inf, 1.0], 1)
    assert t == math.inf
    assert sum(c > t for c in [math.inf, math.inf, 1.0]) == 0  # inf > inf is false: none flagged


def test_score_record_counts_alarms_and_recall_per_issue():
    r = S.ScoreRecord()
    r.clean += [(1.0, False), (5.0, True), (2.0, False)]
    r.tests["deletion:10%"] += [0.5, 6.0]
    r.tests["insertion:10%"] += [4.0]
    assert r.false_alarms(1.5) == 2
    assert r.false_alarms_excluding_incidents(1.5) == 1
    assert r.recall(3.0) == pytest.approx(2 / 3)
    assert r.recall(3.0, "deletion:10%") == pytest.approx(0.5)
    assert r.issue_recall(3.0, "insertion") == 1.0
    pooled = S.ScoreRecord()
    pooled.extend(r, prefix="numeric/")
    assert set(pooled.tests) == {"numeric/deletion:10%", "numeric/insertion:10%"}


def _profile(rows: float, completeness: float) -> ColumnProfile:
    return ColumnProfile("c", CATEGORICAL, rows, {"row_count": rows, "completeness": completeness})


def test_profile_scorer_scores_avhs_metrics_with_avhs_floor():
    history = [_profile(100.0 + i % 3, 0.9 + 0.01 * (i % 2)) for i in range(10)]
    score = S.profile_scorer(history)
    assert score(_profile(101.0, 0.905)) < 2.0
    # the row count doubled; its spread is floored at the Poisson error sqrt(mean) as AVH floors it
    mean = sum(p.rows for p in history) / len(history)
    assert score(_profile(200.0, 0.905)) == pytest.approx((200.0 - mean) / math.sqrt(mean))
    # a constant completeness of 1 is floored at its binomial error, not scored infinite
    complete = [_profile(100.0, 1.0) for _ in range(10)]
    assert math.isfinite(S.profile_scorer(complete)(_profile(100.0, 0.99)))
