"""``streamdq backtest --quality-score`` replays a real Delta state store's window metrics."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from streamdq.state.delta_store import DeltaStateStore
from streamdq.state.records import records_for_batch

from streamdq.analyzers import ApproxCountDistinct, Completeness, Histogram, Mean, Size
from streamdq.analyzers.metric import COLUMN, DATASET, Metric
from streamdq.autovalidate.quality.backtest import QualityWindow, replay_quality, windows_from_rows
from streamdq.autovalidate.quality.score import QualityScoreConfig
from streamdq.cli import main
from streamdq.report import BatchReport, ScopedMetric, Window

T0 = datetime(2026, 11, 1, tzinfo=UTC)
BREAK = 40
N = 44


def _window(i: int) -> Window:
    return Window(T0 + timedelta(hours=i), T0 + timedelta(hours=i + 1))


def _window_metrics(i: int, rng: np.random.Generator) -> tuple[ScopedMetric, ...]:
    f1, f2 = rng.normal(), rng.normal()
    size = (1000 + 50 * f1) * (0.6 if i >= BREAK else 1.0)
    email = 0.98 + 0.005 * f2 + rng.normal(0, 0.001) - (0.03 if i >= BREAK else 0.0)
    w = _window(i)
    values = [
        (Size(), Metric(DATASET, "Size", "*", value=size + rng.normal(0, 5))),
        (ApproxCountDistinct("id"), Metric(COLUMN, "ApproxCountDistinct", "id", value=0.99 * size)),
        (Mean("amount"), Metric(COLUMN, "Mean", "amount", value=20 + 0.5 * f2 + rng.normal(0, 0.05))),
        (Completeness("email"), Metric(COLUMN, "Completeness", "email", value=email)),
        (Completeness("id"), Metric(COLUMN, "Completeness", "id", value=1.0)),
        (Histogram("country"), Metric(COLUMN, "Histogram", "country", value={"DE": 3})),
    ]
    out = [ScopedMetric("window", m, w, a.key()) for a, m in values]
    # the monitor's own output is stored without an analyzer key and must not feed back
    out.append(ScopedMetric("window", Metric(DATASET, "QualityScore", "*", value=12.0), w))
    return tuple(out)


def _store(path: str, watermark: datetime | None = None) -> None:
    """Two committed batches (the windows of the first 30 hours, then the rest)."""
    rng = np.random.default_rng(0)
    store = DeltaStateStore(path)
    for batch_id, hours in enumerate([range(30), range(30, N)]):
        metrics = tuple(m for i in hours for m in _window_metrics(i, rng))
        report = BatchReport(
            dataset="orders",
            query_id="q",
            batch_id=batch_id,
            processing_time=_window(hours[-1]).end,
            metrics=metrics,
            closed_windows=tuple(_window(i) for i in hours),
            watermark=watermark if batch_id == 1 else None,
        )
        records = records_for_batch(report, total={}, open_windows={})
        store.commit(
            "q",
            batch_id,
            dataset="orders",
            states=records.states,
            metrics=records.metrics,
            results=[],
            report=report,
        )


def test_backtest_quality_score_flags_the_break_window(tmp_path, capsys):
    path = str(tmp_path / "state")
    _store(path)
    code = main(["backtest", "--quality-score", "--state", path, "--dataset", "orders", "--all"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert f"{N} closed windows, 5 series" in out
    lines = out.splitlines()
    per_window = [line for line in lines if " window=" in line]
    assert len(per_window) == N
    assert sum(line.startswith("warmup ") for line in per_window) == 16
    flagged = [line for line in per_window if line.startswith("FLAGGED")]
    assert flagged and flagged[0].startswith(f"FLAGGED window={_window(BREAK).start.isoformat()}")
    assert all(line.startswith(("warmup", "ok")) for line in per_window[:BREAK])
    assert f"flagged windows: {_window(BREAK).start.isoformat()}, " in out
    assert (
        f"quality_score: {len(flagged)} flagged (score >= 6) of {N} windows (16 while warming up" in lines[-1]
    )


def test_backtest_quality_score_reads_settings_from_json_and_leaves_open_windows_out(tmp_path, capsys):
    path = str(tmp_path / "state")
    _store(path, watermark=_window(BREAK - 1).end)  # windows from BREAK on are still open
    code = main(
        [
            "backtest",
            "--quality-score",
            "--state",
            path,
            "--dataset",
            "orders",
            "--quality-config",
            '{"alert_at": 12, "min_history": 8}',
        ]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    assert f"{BREAK} closed windows" in out
    per_window = [line for line in out.splitlines() if " window=" in line]
    assert len(per_window) == BREAK and all(" (PC1" not in line for line in per_window)
    assert "flagged windows: none" in out
    assert "quality_score: 0 flagged (score >= 12)" in out
    assert "(8 while warming up" in out


def test_backtest_quality_score_takes_settings_from_the_run_config(tmp_path, capsys):
    import yaml

    path = str(tmp_path / "state")
    _store(path)
    run = {
        "dataset": "orders",
        "source": {"type": "generator"},
        "checkpoint": str(tmp_path / "chk"),
        "state": {"path": path},
        "quality_score": {"alert_at": 10, "min_history": 20, "numeric_columns": ["amount"]},
    }
    (tmp_path / "run.yaml").write_text(yaml.safe_dump(run))
    code = main(["backtest", "--quality-score", "--config", str(tmp_path / "run.yaml")])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "alert_at=10" in out and "min_history=20" in out
    assert "flagged (score >= 10)" in out and "(20 while warming up" in out
    assert f"FLAGGED window={_window(BREAK).start.isoformat()}" in out


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--quality-config", '{"alert_at": 99}'], "quality_score.alert_at"),
        (["--quality-config", "not json"], "--quality-config"),
        (["--quality-config", "[1]"], "--quality-config"),
    ],
)
def test_backtest_quality_score_bad_settings_are_usage_errors(tmp_path, capsys, extra, message):
    code = main(["backtest", "--quality-score", "--state", str(tmp_path), "--dataset", "orders", *extra])
    assert code == 2
    assert message in capsys.readouterr().err


def test_backtest_quality_score_on_an_empty_store(tmp_path, capsys):
    code = main(["backtest", "--quality-score", "--state", str(tmp_path / "none"), "--dataset", "orders"])
    out = capsys.readouterr().out
    assert code == 0
    assert "0 closed windows" in out and "0 flagged" in out


def test_windows_from_rows_names_series_like_the_monitor_and_skips_monitor_rows():
    w = _window(0)
    base = {"window_start": w.start, "window_end": w.end, "value_json": None, "failure": None}
    rows = [
        {**base, "name": "Size", "instance": "*", "analyzer_key": "k-size", "value": 10.0},
        {**base, "name": "ApproxQuantile", "instance": "x", "analyzer_key": "k-q50", "value": 1.0},
        {**base, "name": "ApproxQuantile", "instance": "x", "analyzer_key": "k-q90", "value": 2.0},
        {
            **base,
            "name": "Mean",
            "instance": "y",
            "analyzer_key": "k-mean",
            "value": None,
            "failure": "empty",
        },
        {
            **base,
            "name": "Histogram",
            "instance": "c",
            "analyzer_key": "k-h",
            "value": None,
            "value_json": "{}",
        },
        {**base, "name": "QualityScore", "instance": "*", "analyzer_key": "", "value": 4.0},
    ]
    (window,) = windows_from_rows(rows)
    assert window.seq == int(w.start.timestamp() // 3600)
    assert window.values["Size(*)"] == 10.0 and window.values["Mean(y)"] is None
    quantiles = sorted(n for n in window.values if n.startswith("ApproxQuantile(x)["))
    assert len(quantiles) == 2
    assert "QualityScore(*)" not in window.values and not any(
        n.startswith("Histogram") for n in window.values
    )


def test_replay_quality_judges_a_repeated_window_once():
    w = _window(0)
    windows = [QualityWindow(w.start, w.end, 1, {"a": 1.0}), QualityWindow(w.start, w.end, 1, {"a": 2.0})]
    judged = replay_quality(windows, QualityScoreConfig(min_history=4))
    assert len(judged) == 1 and not judged[0][1].ready
