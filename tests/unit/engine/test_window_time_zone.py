"""Windows are UTC whatever the session's time zone (docs/streaming.md, "Windows and time
zones"): a one-day window runs from 00:00 UTC to 00:00 UTC and prints as ``2013-01-01 (1 day)``."""

from __future__ import annotations

from datetime import UTC, datetime

from streamdq.connectors.sinks.console import format_report

from streamdq.checks.check import Check, Level
from streamdq.engine.handler import BatchHandler
from streamdq.engine.judge import BatchJudge


def test_one_day_windows_are_utc_days_in_a_new_york_session(spark) -> None:
    previous = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", "America/New_York")
    try:
        handler = BatchHandler(
            dataset="flights",
            query_id="q1",
            judge=BatchJudge([Check(Level.WARNING, "flights").has_size(">= 1", scope="window")]),
            window_seconds=86400,
            event_time="ts",
        )
        # 2013-01-01 23:30 UTC is 18:30 in New York; 2013-01-02 01:00 UTC is 20:00 there (Jan 1)
        rows = [
            (datetime(2013, 1, 1, 23, 30, tzinfo=UTC), 1.0),
            (datetime(2013, 1, 2, 1, 0, tzinfo=UTC), 2.0),
        ]
        first = handler.handle(spark.createDataFrame(rows, "ts timestamp, x double"), 0)
        later = [(datetime(2013, 1, 4, 12, 0, tzinfo=UTC), 3.0)]
        report = handler.handle(spark.createDataFrame(later, "ts timestamp, x double"), 1)
    finally:
        spark.conf.set("spark.sql.session.timeZone", previous)
    # the watermark (max event time) closes Jan 1 (UTC) in batch 0, Jan 2 in batch 1
    starts = [w.start for r in (first, report) for w in r.closed_windows]
    assert starts == [datetime(2013, 1, 1, tzinfo=UTC), datetime(2013, 1, 2, tzinfo=UTC)]
    text = format_report(first, []) + "\n" + format_report(report, [])
    assert "window 2013-01-01 (1 day) closed" in text and "window 2013-01-02 (1 day) closed" in text
