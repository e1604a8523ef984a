"""Table-level quality score: PCA over the metric series, Holt-Winters per component, 0..4 bands."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from streamdq.analyzers import Completeness, Mean, Size
from streamdq.analyzers.metric import DATASET, Metric
from streamdq.autovalidate.quality import score as qs
from streamdq.autovalidate.quality.model import (
    ComponentModel,
    band,
    fit_component,
    fit_model,
    select_components,
    table_score,
)
from streamdq.autovalidate.quality.monitor import (
    METRIC_NAME,
    QualityScoreMonitor,
    quality_monitor_from_config,
    window_series,
)
from streamdq.autovalidate.quality.score import QualityScoreConfig, QualityScorer, series_names
from streamdq.engine.monitor import MonitorOutput
from streamdq.errors import ConfigError
from streamdq.report import Window

BREAK = 80


def table(n: int, seed: int = 0, brk: int | None = None) -> list[dict[str, float]]:
    """Seven metric series of one table: three driven by volume, three by the amount
    distribution, one constant; from ``brk`` on, 40% of the rows are lost and e-mail
    completeness drops by 3 points."""
    rng = np.random.default_rng(seed)
    rows = []
    for t in range(n):
        f1, f2 = rng.normal(), rng.normal()
        size = 1000 + 50 * f1
        broken = brk is not None and t >= brk
        if broken:
            size *= 0.6
        rows.append(
            {
                "Size(*)": size + rng.normal(0, 5),
                "Sum(amount)": 20 * size + rng.normal(0, 300),
                "ApproxCountDistinct(id)": 0.99 * size + rng.normal(0, 3),
                "Mean(amount)": 20 + 0.5 * f2 + rng.normal(0, 0.05),
                "Maximum(amount)": 90 + 3 * f2 + rng.normal(0, 0.5),
                "Completeness(email)": 0.98 + 0.005 * f2 + rng.normal(0, 0.001) - (0.03 if broken else 0.0),
                "Completeness(id)": 1.0,
            }
        )
    return rows


def run(scorer: QualityScorer, rows: list[dict[str, float]], start: int = 0) -> list[qs.ScoreResult]:
    return [scorer.observe(start + i, row) for i, row in enumerate(rows)]


# -- the scoring rule --------------------------------------------------------------------------


def test_band_counts_the_interval_widths_left():
    assert [band(d) for d in (0.0, 0.5, 1.0)] == [0, 0, 0]
    assert band(1.0001) == 1 and band(2.0) == 1 and band(-2.5) == 2
    assert band(3.0) == 2 and band(3.5) == 3 and band(4.0) == 3
    assert band(4.0001) == 4 and band(-1e9) == 4 and band(math.inf) == 4
    assert band(math.nan) == 0


def test_table_score_sums_the_three_largest():
    assert table_score([4, 0, 3, 2, 1]) == 9
    assert table_score([1]) == 1
    assert table_score([]) == 0
    assert table_score([4, 4, 4, 4, 4]) == 12


# -- planted break -------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 3])
def test_score_stays_low_on_clean_history_and_jumps_at_the_break(seed):
    results = run(QualityScorer(), table(BREAK + 3, seed, brk=BREAK))
    clean = [r for r in results[:BREAK] if r.ready]
    assert len(clean) == BREAK - 16  # scored from the first point after min_history
    assert not any(r.flagged for r in clean)
    assert max(r.score for r in clean) < 6
    assert np.mean([r.score for r in clean]) < 2
    at_break = results[BREAK]
    assert at_break.ready and at_break.flagged
    assert at_break.score >= 10
    assert at_break.residual_score == 4  # the completeness drop breaks the correlation
    assert max(at_break.component_scores) == 4  # the volume drop moves the first component
    assert at_break.drivers[0][0] in {"Size(*)", "Sum(amount)", "ApproxCountDistinct(id)"}
    assert at_break.drivers[0][1] < -5  # the volume drop, in standard deviations
    assert at_break.message.startswith(f"score {at_break.score} (PC1 ")


def test_clean_long_run_false_alarm_rate_is_small():
    flagged = scored = 0
    for seed in range(3):
        for r in run(QualityScorer(), table(150, 100 + seed)):
            scored += r.ready
            flagged += r.flagged
    assert scored == 3 * (150 - 16)
    assert flagged <= 2  # a handful of 1-2-3 sigma coincidences at most


# -- explained-variance component selection ----------------------------------------------------------


def test_select_components_reaches_the_variance_share_within_the_cap():
    s = np.sqrt(np.array([60.0, 25.0, 10.0, 5.0]))  # energy shares 0.6, 0.25, 0.1, 0.05
    assert select_components(s, 0.5, 5) == 1
    assert select_components(s, 0.6, 5) == 1
    assert select_components(s, 0.85, 5) == 2
    assert select_components(s, 0.9, 5) == 3
    assert select_components(s, 0.9, 2) == 2  # capped by max_components
    assert select_components(s, 1.0, 5) == 4
    assert select_components(np.array([3.0, 0.0, 0.0]), 0.99, 5) == 1  # no zero-variance component
    assert select_components(np.zeros(3), 0.9, 5) == 0


def test_two_driving_factors_give_two_components():
    m = np.array([list(r.values()) for r in table(48, 1)])
    names = list(table(1)[0])
    model = fit_model(m, names, variance=0.9, max_components=5, period=None)
    assert model is not None and model.k == 2
    assert sum(model.explained) >= 0.9
    assert model.explained[0] >= model.explained[1]
    one = fit_model(m, names, variance=0.9, max_components=1, period=None)
    assert one is not None and one.k == 1
    more = fit_model(m, names, variance=0.999, max_components=5, period=None)
    assert more is not None and more.k > 2
    # the constant series has no weight in any component
    const = model.names.index("Completeness(id)")
    assert all(v[const] == 0.0 for v in model.loadings)


def test_result_reports_explained_variance_of_the_model():
    results = run(QualityScorer(QualityScoreConfig(variance=0.3)), table(20, 2))
    ready = [r for r in results if r.ready]
    assert ready and len(ready[-1].explained_variance) == 1
    assert len(ready[-1].component_scores) == 1
    assert 0.3 <= ready[-1].explained_variance[0] <= 1.0


# -- warm-up ---------------------------------------------------------------------------------------


def test_short_history_says_waiting_and_never_raises():
    scorer = QualityScorer()
    results = run(scorer, table(16, 4))
    assert all(not r.ready and r.score == 0 and not r.flagged for r in results)
    assert "waiting for history: 0 of 16" in results[0].message
    assert "waiting for history: 15 of 16" in results[-1].message
    assert "after 1 more" in results[-1].message
    assert scorer.model is None
    nxt = scorer.observe(16, table(17, 4)[-1])
    assert nxt.ready and scorer.model is not None


def test_seasonal_period_waits_for_two_periods_and_scores_a_seasonal_table():
    cfg = QualityScoreConfig(period=6, min_history=12, history=36, refit_every=6)
    rng = np.random.default_rng(5)
    rows = []
    for t in range(60):
        season = math.sin(2 * math.pi * t / 6)
        size = 1000 + 200 * season + rng.normal(0, 10)
        rows.append(
            {"Size(*)": size, "Sum(x)": 3 * size + rng.normal(0, 20), "Mean(x)": 3 + rng.normal(0, 0.01)}
        )
    rows[50] = {**rows[50], "Size(*)": rows[50]["Size(*)"] + 600, "Sum(x)": rows[50]["Sum(x)"] - 1500}
    results = run(QualityScorer(cfg), rows)
    assert all(not r.ready for r in results[:12])
    assert "of 12 windows" in results[0].message
    assert all(r.ready for r in results[12:])
    assert not any(r.flagged for r in results[12:50])
    assert results[50].flagged


def test_holt_linear_trend_fit_on_three_points_and_seasonal_fit_follow_a_trend():
    m = fit_component([1.0, 2.0, 3.0], None)
    assert m.gamma == 0.0 and len(m.season) == 1
    assert m.forecast() == pytest.approx(4.0, abs=0.2)
    with pytest.raises(ValueError):
        fit_component([1.0, 2.0], None)
    seasonal = fit_component([float(t % 4) + 0.1 * t for t in range(16)], 4)
    assert seasonal.forecast() == pytest.approx(0.0 + 1.6, abs=0.3)


def test_component_advance_clips_a_spike_to_four_sigma():
    m = ComponentModel(0.5, 0.0, 0.0, 10.0, 0.0, (0.0,), 1.0)
    assert m.advance(1000.0).level == pytest.approx(10.0 + 0.5 * 4.0)
    assert m.advance(11.0).level == pytest.approx(10.5)


# -- constant, missing and late series ------------------------------------------------------------------


def test_constant_series_does_not_break_scoring_and_its_change_is_extreme():
    rows = table(40, 6)
    results = run(QualityScorer(), rows[:30])
    assert all(math.isfinite(r.score) for r in results)
    changed = {**rows[30], "Completeness(id)": 0.9}
    scorer = QualityScorer()
    run(scorer, rows[:30])
    r = scorer.observe(30, changed)
    assert r.residual_score == 4
    assert r.drivers[0][0] == "Completeness(id)"
    assert "Completeness(id) 1 -> 0.9 (constant until now)" in r.message
    # an all-constant table: no component, only the residual, and nothing to flag while it stays constant
    flat = QualityScorer(QualityScoreConfig(min_history=4, alert_at=4))
    out = run(flat, [{"a": 1.0, "b": 5.0}] * 10)
    assert all(r.score == 0 for r in out[4:]) and flat.model is not None and flat.model.k == 0
    moved = flat.observe(10, {"a": 1.0, "b": 6.0})
    assert moved.score == 4 and moved.flagged


def test_missing_failed_and_late_series_are_imputed_and_enter_at_a_refit():
    rows = table(60, 7)
    for i in range(0, 60, 5):
        rows[i]["Mean(amount)"] = math.nan  # a failed metric
    for i in range(0, 60, 7):
        rows[i]["Maximum(amount)"] = None  # type: ignore[assignment]
    for i in range(40, 60):
        rows[i]["Completeness(phone)"] = 0.5 + 0.01 * (i % 3)
    scorer = QualityScorer(QualityScoreConfig(history=24, refit_every=6))
    results = run(scorer, rows)
    assert all(r.ready for r in results[16:])
    assert "series missing (imputed with their mean)" in results[20].message
    assert "1 new series not yet modelled" in results[40].message
    assert "new series not yet modelled" in results[41].message  # until the refit after it has 12
    assert scorer.model is not None and "Completeness(phone)" in scorer.model.names
    assert "new series" not in results[-1].message
    assert not any(r.flagged for r in results)


def test_non_numeric_values_are_missing():
    assert math.isnan(qs.clean_value(None))
    assert math.isnan(qs.clean_value(True))
    assert math.isnan(qs.clean_value("3"))
    assert math.isnan(qs.clean_value(math.inf))
    assert qs.clean_value(3) == 3.0


def test_series_that_leave_the_history_are_forgotten():
    scorer = QualityScorer(QualityScoreConfig(history=16, min_history=8, refit_every=4))
    rows = table(60, 8)
    for i in range(10):
        rows[i]["Gone(x)"] = float(i)
    run(scorer, rows)
    assert "Gone(x)" not in scorer.names


# -- state and replay ------------------------------------------------------------------------------


def test_state_round_trip_continues_identically():
    rows = table(70, 9, brk=60)
    a = QualityScorer()
    run(a, rows[:37])
    blob = a.dump_state()
    data = json.loads(blob)
    assert data["version"] == qs.STATE_VERSION and data["model"] is not None
    b = QualityScorer()
    b.load_state(blob)
    assert b.dump_state() == blob
    ra, rb = run(a, rows[37:], 37), run(b, rows[37:], 37)
    assert ra == rb
    assert a.dump_state() == b.dump_state()


def test_state_is_bounded_by_history():
    scorer = QualityScorer(QualityScoreConfig(history=20))
    run(scorer, table(100, 10))
    assert len(json.loads(scorer.dump_state())["rows"]) == 20
    assert len(scorer.dump_state()) < 40_000


def test_load_state_rejects_unknown_versions_and_garbage():
    scorer = QualityScorer()
    with pytest.raises(ValueError, match="unsupported version"):
        scorer.load_state(json.dumps({"version": 99}).encode())
    with pytest.raises(ValueError, match="not valid JSON"):
        scorer.load_state(b"\x80\x04 not json")
    with pytest.raises(ValueError, match="malformed"):
        scorer.load_state(json.dumps({"version": qs.STATE_VERSION, "names": []}).encode())


def test_monitor_starts_afresh_on_an_unreadable_state():
    monitor = QualityScoreMonitor("orders")
    monitor.observe(_window(0), 0, _metrics(table(1)[0]), {})
    monitor.load_state(b"garbage")
    assert monitor.scorer.last_seq is None and len(monitor.scorer.buffer) == 0


def test_state_from_another_config_keeps_history_and_refits():
    a = QualityScorer()
    run(a, table(30, 11))
    b = QualityScorer(QualityScoreConfig(variance=0.3))
    b.load_state(a.dump_state())
    assert b.model is None and len(b.buffer) == 30
    r = b.observe(30, table(31, 11)[-1])
    assert r.ready and len(r.explained_variance) == 1


def test_replay_changes_nothing_and_returns_the_stored_result():
    rows = table(40, 12)
    scorer = QualityScorer(QualityScoreConfig(history=20))
    results = run(scorer, rows)
    before = scorer.dump_state()
    assert scorer.observe(39, {"Size(*)": 0.0}) == results[39]
    assert scorer.observe(30, rows[0]) == results[30]
    old = scorer.observe(5, rows[5])
    assert not old.ready and "already observed" in old.message
    assert scorer.dump_state() == before


def test_refits_are_amortised(monkeypatch):
    calls = []
    real = qs.fit_model

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(qs, "fit_model", counting)
    run(QualityScorer(QualityScoreConfig(refit_every=12, min_history=16)), table(64, 13))
    # first fit at point 16, then after every 12 scored points: 16, 28, 40, 52, 64
    assert len(calls) == 5


def test_series_names_are_readable_and_unique():
    assert series_names([("Mean(x)", "k1"), ("Size(*)", "k2")]) == ["Mean(x)", "Size(*)"]
    names = series_names([("Q(x)", "a"), ("Q(x)", "b"), ("Size(*)", "c")])
    assert names[0] != names[1] and names[0].startswith("Q(x)[") and names[2] == "Size(*)"
    assert series_names([("Q(x)", "a"), ("Q(x)", "b")]) == names[:2]


# -- config ---------------------------------------------------------------------------------------


def test_config_defaults_and_validation():
    assert quality_monitor_from_config(None, "orders") is None
    monitor = quality_monitor_from_config({}, "orders")
    assert monitor is not None and monitor.config == QualityScoreConfig()
    custom = quality_monitor_from_config(
        {"history": 96, "period": 24, "min_history": 48, "alert_at": 8, "numeric_columns": ["amount"]},
        "orders",
    )
    assert custom is not None and custom.config.period == 24 and custom.config.alert_at == 8
    assert Mean("amount") in custom.analyzers() and Size() in custom.analyzers()


@pytest.mark.parametrize(
    ("raw", "key", "fix"),
    [
        ({"max_components": 0}, "quality_score.max_components", "positive integer"),
        ({"variance": 1.5}, "quality_score.variance", "0.9"),
        ({"variance": "most"}, "quality_score.variance", "0.9"),
        ({"history": 8}, "quality_score.history", "history >= 16"),
        ({"refit_every": 2.5}, "quality_score.refit_every", "positive integer"),
        ({"period": 1}, "quality_score.period", "null for no seasonality"),
        ({"period": 24}, "quality_score.min_history", "min_history >= 48"),
        ({"alert_at": 13}, "quality_score.alert_at", "1..12"),
        ({"min_history": 2}, "quality_score.min_history", "min_history >= 4"),
        ({"alpha": 0.3}, "quality_score.alpha", "max_components"),
        ({"columns": "amount"}, "quality_score.columns", "columns: [amount]"),
        ([1, 2], "quality_score", "quality_score: {"),
    ],
)
def test_config_mistakes_name_the_key_and_the_fix(raw, key, fix):
    with pytest.raises(ConfigError) as err:
        quality_monitor_from_config(raw, "orders")
    assert err.value.key == key
    assert fix in str(err.value)


def test_run_config_builds_the_monitor_and_fails_fast_on_mistakes():
    from streamdq.engine.config import load_run_config
    from streamdq.engine.monitor import build_monitors

    base = {"dataset": "orders", "source": {"type": "generator"}, "checkpoint": "/tmp/chk"}
    (monitor,) = build_monitors(load_run_config({**base, "quality_score": {"alert_at": 7}}))
    assert isinstance(monitor, QualityScoreMonitor) and monitor.config.alert_at == 7
    assert monitor.dataset == "orders"
    assert build_monitors(load_run_config(base)) == []
    with pytest.raises(ConfigError, match=r"quality_score\.alert_at: the score is at most 12"):
        build_monitors(load_run_config({**base, "quality_score": {"alert_at": 70}}))


def test_config_dataclass_rejects_bad_values():
    with pytest.raises(ValueError, match="quality_score.history"):
        QualityScoreConfig(history=4)


# -- the window monitor ------------------------------------------------------------------------------

T0 = datetime(2026, 11, 1, tzinfo=UTC)


def _window(i: int) -> Window:
    return Window(T0 + timedelta(hours=i), T0 + timedelta(hours=i + 1))


def _metrics(row: dict[str, float]) -> dict:
    return {
        Size(): Metric(DATASET, "Size", "*", value=row["Size(*)"]),
        Mean("amount"): Metric("Column", "Mean", "amount", value=row["Mean(amount)"]),
        Completeness("email"): Metric("Column", "Completeness", "email", value=row["Completeness(email)"]),
        Completeness("id"): Metric("Column", "Completeness", "id", failure="no rows"),
    }


def test_window_series_skips_distributions_and_its_own_metric():
    m = _metrics(table(1)[0])
    m[Mean("other")] = Metric("Column", "Histogram", "x", value={"a": 1})
    m[Mean("own")] = Metric(DATASET, METRIC_NAME, "*", value=3.0)
    series = window_series(m)
    assert set(series) == {"Size(*)", "Mean(amount)", "Completeness(email)", "Completeness(id)"}
    assert series["Completeness(id)"] is None


def test_monitor_publishes_the_score_and_an_anomaly_at_the_break():
    monitor = quality_monitor_from_config({"alert_at": 6}, "orders")
    assert monitor is not None and monitor.key == "quality_score"
    rows = table(BREAK + 1, 0, brk=BREAK)
    outputs: list[MonitorOutput] = []
    for i, row in enumerate(rows):
        outputs.append(monitor.observe(_window(i), i, _metrics(row), {}))
    first = outputs[0].metrics[0]
    assert first.name == METRIC_NAME and first.entity == DATASET and first.instance == "*"
    assert not first.ok and "waiting for history" in (first.failure or "")
    assert outputs[0].anomalies == ()
    scored = outputs[20].metrics[0]
    assert scored.ok and 0 <= scored.value <= 12
    assert not any(o.anomalies for o in outputs[:BREAK])
    anomaly = outputs[BREAK].anomalies[0]
    assert anomaly.detector == "quality_score" and anomaly.scope == "window"
    assert anomaly.window == _window(BREAK)
    assert anomaly.value >= 6 and anomaly.upper == 5.0 and anomaly.constraint_id == ""
    assert "alert_at 6" in (anomaly.message or "")
    assert outputs[BREAK].metrics[0].value == anomaly.value


def test_monitor_state_survives_a_restart_and_replays_are_ignored():
    rows = table(40, 14)
    a = QualityScoreMonitor("orders")
    outs = [a.observe(_window(i), i, _metrics(r), {}) for i, r in enumerate(rows[:30])]
    b = QualityScoreMonitor("orders")
    b.load_state(a.dump_state())
    assert b.observe(_window(29), 29, _metrics(rows[0]), {}) == outs[29]
    for i in range(30, 40):
        assert a.observe(_window(i), i, _metrics(rows[i]), {}) == b.observe(
            _window(i), i, _metrics(rows[i]), {}
        )
    assert a.dump_state() == b.dump_state()
