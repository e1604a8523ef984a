"""A microbatch that closes several windows alerts once per incident (the backlog case).

After a restart with a backlog (or when batches are slower than the window), one microbatch
closes several event-time windows. Each window is its own judgement: two failing windows with a
passing one between them are two incidents, each with its own violation alert (and id, so the
Kafka outbox, which keeps one alert per id, delivers both).
"""

from __future__ import annotations

from datetime import datetime

from streamdq.alerts import AlertPolicy
from streamdq.checks.check import Check, Level
from streamdq.engine.handler import BatchHandler
from streamdq.engine.judge import BatchJudge

SCHEMA = "ts timestamp, x double"


def _rows(minute: int, nulls: int, clean: int) -> list[tuple[datetime, float | None]]:
    t = datetime(2026, 1, 1, 12, minute, 0)
    rows: list[tuple[datetime, float | None]] = []
    for i in range(nulls + clean):
        rows.append((t.replace(second=i % 60), None if i < nulls else float(i)))
    return rows


def test_backlog_batch_closing_several_windows_alerts_each_incident(spark):
    check = Check(Level.ERROR, "amounts").has_completeness("x", ">= 0.7", scope="window")
    handler = BatchHandler(
        dataset="orders",
        query_id="q1",
        judge=BatchJudge([check]),
        window_seconds=60,
        watermark_seconds=10,
        event_time="ts",
        alert_policy=AlertPolicy(min_rows_floor=10),
    )
    # one backlog batch: 12:00 incident, 12:01 clean, 12:02 incident, 12:03 clean (open)
    rows = _rows(0, 16, 4) + _rows(1, 0, 20) + _rows(2, 16, 4) + _rows(3, 0, 20)
    report = handler.handle(spark.createDataFrame(rows, SCHEMA), 0)
    assert [w.start.minute for w in report.closed_windows] == [0, 1, 2]
    alerts = [(a["kind"], a["window"]["start"][14:16]) for a in report.alerts]
    assert alerts == [("violation", "00"), ("resolved", "01"), ("violation", "02")]
    assert len({a["alert_id"] for a in report.alerts}) == 3
    # the next batch closes 12:03 (clean): the second incident resolves
    later = handler.handle(spark.createDataFrame(_rows(4, 0, 20), SCHEMA), 1)
    assert [(a["kind"], a["window"]["start"][14:16]) for a in later.alerts] == [("resolved", "03")]
