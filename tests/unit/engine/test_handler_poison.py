"""A poison batch (the supervisor's word that a batch id keeps failing): its rows go whole to
quarantine with the reason, nothing is computed from them, and the batch commits once."""

from __future__ import annotations

from datetime import datetime

from streamdq.state import InMemoryStateStore

from streamdq.checks.check import Check, Level
from streamdq.engine.handler import BatchHandler
from streamdq.engine.judge import BatchJudge

SCHEMA = "ts timestamp, name string, x double, _streamdq_error string"


def _handler(store):
    return BatchHandler(
        dataset="orders",
        query_id="q1",
        judge=BatchJudge([Check(Level.ERROR, "c").has_size(">= 0", scope="total")]),
        window_seconds=60,
        event_time="ts",
        store=store,
    )


def _size(report):
    return next(m.metric.value for m in report.metrics if m.scope == "total" and m.metric.name == "Size")


def test_poison_batch_is_quarantined_whole_and_committed_once(spark):
    store = InMemoryStateStore()
    handler = _handler(store)
    good = [
        (datetime(2026, 1, 1, 12, 0, 5), "a", 1.0, None),
        (datetime(2026, 1, 1, 12, 0, 6), "b", 2.0, None),
    ]
    poison = [
        (datetime(2026, 1, 1, 12, 0, 7), "c", 3.0, None),
        (datetime(2026, 1, 1, 12, 0, 8), "d", 4.0, None),
        (datetime(2026, 1, 1, 12, 0, 9), "e", None, "bad json"),
    ]
    handler.handle(spark.createDataFrame(good, SCHEMA), 0)
    report = handler.handle(spark.createDataFrame(poison, SCHEMA), 1, poison="OverflowError: boom")
    assert _size(report) == 2.0  # the poison rows moved no metric
    assert report.counters["poison_rows"] == 3
    assert report.counters["quarantined_rows"] == 3
    assert store.last_committed_batch("q1") == 1
    rows = store.table("quarantine").to_pylist()
    assert len(rows) == 3
    assert {r["reason"] for r in rows} == {"poison batch: OverflowError: boom"}
    assert {r["batch_id"] for r in rows} == {1}
    assert all(r["raw"] for r in rows)
    # the replay after a restart re-emits the stored report and quarantines nothing again
    again = _handler(store).handle(spark.createDataFrame(poison, SCHEMA), 1, poison="OverflowError: boom")
    assert again.counters["poison_rows"] == 3
    assert store.table("quarantine").num_rows == 3
    # the stream moves on: the next batch counts on top of the good rows only
    nxt = handler.handle(spark.createDataFrame(good[:1], SCHEMA), 2)
    assert _size(nxt) == 3.0
