"""The quality score monitor inside the real batch handler (Spark, Delta state store)."""

from __future__ import annotations

from datetime import datetime, timedelta

import numpy as np

from streamdq.analyzers import Mean, Size
from streamdq.autovalidate.quality.monitor import METRIC_NAME, quality_monitor_from_config
from streamdq.engine.handler import BatchHandler
from streamdq.engine.judge import BatchJudge

SCHEMA = "ts timestamp, x double"
T0 = datetime(2026, 1, 1, 12, 0, 0)
BREAK = 24
MINUTES = 29


def _rows() -> list[tuple[datetime, float | None]]:
    """One-minute windows of ~40 rows with x ~ N(10, 1); from minute BREAK on, most rows are
    lost, x shifts by +4 and a third of x is null."""
    rng = np.random.default_rng(3)
    rows: list[tuple[datetime, float | None]] = []
    for minute in range(MINUTES + 1):
        broken = minute >= BREAK
        n = int(rng.integers(8, 12) if broken else rng.integers(36, 44))
        for j in range(n):
            x = float(rng.normal(14 if broken else 10, 1))
            value = None if broken and j % 3 == 0 else x
            rows.append((T0 + timedelta(minutes=minute, seconds=j), value))
    return rows


def _handler(store):
    monitor = quality_monitor_from_config(
        {"min_history": 8, "history": 24, "refit_every": 6, "numeric_columns": ["x"]}, "orders"
    )
    assert monitor is not None
    handler = BatchHandler(
        dataset="orders",
        query_id="q-quality",
        judge=BatchJudge([]),
        window_seconds=60,
        watermark_seconds=0,
        event_time="ts",
        store=store,
        monitors=[monitor],
    )
    return handler, monitor


def test_quality_score_monitor_in_the_handler(spark, tmp_path):
    from streamdq.state.delta_store import DeltaStateStore

    handler, monitor = _handler(DeltaStateStore(str(tmp_path / "state")))
    assert Size() in handler.analyzers and Mean("x") in handler.analyzers
    report = handler.handle(spark.createDataFrame(_rows(), SCHEMA), 0)
    assert len(report.closed_windows) == MINUTES  # the last minute is still open
    scores = sorted((m for m in report.metrics if m.metric.name == METRIC_NAME), key=lambda m: m.window.start)
    assert len(scores) == MINUTES
    assert all(m.scope == "window" and m.analyzer_key == "" for m in scores)
    assert all(not m.metric.ok and "waiting for history" in m.metric.failure for m in scores[:8])
    assert all(m.metric.ok for m in scores[8:])
    assert all(m.metric.value < 6 for m in scores[8:BREAK])
    flagged = sorted(
        a.window.start.replace(tzinfo=None) for a in report.anomalies if a.detector == "quality_score"
    )
    assert flagged and flagged[0] == T0 + timedelta(minutes=BREAK)
    assert scores[BREAK].metric.value >= 6

    # restart: the monitor's state comes back from the store's detectors table
    restarted, again = _handler(DeltaStateStore(str(tmp_path / "state")))
    restarted.restore()
    assert again.scorer.last_seq == monitor.scorer.last_seq
    assert again.dump_state() == monitor.dump_state()
