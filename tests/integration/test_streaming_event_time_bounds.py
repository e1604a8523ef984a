"""Hostile values through a real multi-trigger streaming query over a JSON file source.

Batch 0 carries an ordinary record, one stamped 9999-06-01, one 9999-12-31T23:59:55Z, one in
year 0001, and amounts NaN / 1e999 / -Infinity. The three implausible event times are
quarantined with the reason, counted (ImplausibleEventTimeRows) and never move the watermark,
so the later ordinary records of batches 1 and 2 are on time, windows close and are judged
as usual; nothing crashes, on any restart-free trigger. The non-finite amounts are counted
(NonFinite) and skipped by Sum (docs/non-finite.md).
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.integration]

SCHEMA = "order_id STRING, ts TIMESTAMP, amount DOUBLE"
FILES = [
    [
        '{"order_id": "a", "ts": "2024-01-01T00:00:10Z", "amount": 1.0}',
        '{"order_id": "future", "ts": "9999-06-01T00:00:00Z", "amount": 1000.0}',
        '{"order_id": "edge", "ts": "9999-12-31T23:59:55Z", "amount": 1000.0}',
        '{"order_id": "ancient", "ts": "0001-01-01T00:00:00Z", "amount": 1000.0}',
        '{"order_id": "nan", "ts": "2024-01-01T00:00:20Z", "amount": NaN}',
        '{"order_id": "huge", "ts": "2024-01-01T00:00:21Z", "amount": 1e999}',
        '{"order_id": "neg", "ts": "2024-01-01T00:00:22Z", "amount": -Infinity}',
    ],
    [
        '{"order_id": "b", "ts": "2024-01-01T00:00:40Z", "amount": 2.0}',
        '{"order_id": "c", "ts": "2024-01-01T00:01:20Z", "amount": 3.0}',
    ],
    ['{"order_id": "d", "ts": "2024-01-01T00:02:10Z", "amount": 4.0}'],
]
W0 = datetime(2024, 1, 1, 0, 0, tzinfo=UTC)


def _drop(inbox: Path, name: str, lines: list[str]) -> None:
    staged = inbox.parent / name
    staged.write_text("\n".join(lines) + "\n")
    staged.rename(inbox / name)


def _batches(store: Any) -> int:
    if store.table("metrics") is None:
        return 0
    return len(store.history("orders", "InputRows", scope="batch"))


def _by_batch(store: Any, name: str, scope: str, instance: str = "*") -> dict[int, float]:
    t = store.history("orders", name, scope=scope, instance=instance)
    return dict(zip(t.column("batch_id").to_pylist(), t.column("value").to_pylist(), strict=True))


def test_far_future_and_ancient_event_times_do_not_poison_the_stream(tmp_path: Path, spark: Any) -> None:
    import streamdq

    inbox = tmp_path / "in"
    inbox.mkdir()
    cfg = {
        "dataset": "orders",
        "source": {
            "type": "files",
            "path": str(inbox),
            "format": "json",
            "schema": SCHEMA,
            "max_files_per_trigger": 1,
        },
        "event_time": "ts",
        "window": "1 minute",
        "watermark": "30 seconds",
        "trigger": "1 second",
        "checkpoint": str(tmp_path / "chk"),
        "state": {"path": str(tmp_path / "state")},
        "checks": [
            {
                "description": "orders",
                "level": "error",
                "constraints": [
                    {"has_size": {"assertion": ">= 0", "scope": "window"}},
                    {"has_sum": {"column": "amount", "assertion": ">= 0", "scope": "total"}},
                    {"has_no_non_finite": {"column": "amount", "scope": "batch"}},
                ],
            }
        ],
        "sinks": [{"type": "jsonl", "path": str(tmp_path / "reports.jsonl")}],
    }
    runner = streamdq.stream(spark, cfg)
    query = runner.start()
    store = runner.store
    try:
        for i, lines in enumerate(FILES):
            _drop(inbox, f"orders-{i}.json", lines)
            deadline = time.monotonic() + 180
            while _batches(store) < i + 1:
                assert query.exception() is None, query.exception()
                assert time.monotonic() < deadline, f"batch {i} was not committed in time"
                time.sleep(0.3)
        assert query.isActive and query.exception() is None
    finally:
        runner.stop()

    assert _by_batch(store, "ImplausibleEventTimeRows", "batch") == {0: 3.0, 1: 0.0, 2: 0.0}
    assert _by_batch(store, "LateRows", "batch") == {0: 0.0, 1: 0.0, 2: 0.0}, "nothing is late"
    # the non-finite amounts: counted, skipped by Sum (1 + 2 + 3 + 4)
    assert _by_batch(store, "NonFinite", "batch", "amount") == {0: 3.0, 1: 0.0, 2: 0.0}
    assert _by_batch(store, "Sum", "total", "amount")[2] == 10.0

    # window [00:00, 00:01) closed with its on-time rows (a, nan, huge, neg, b) and was judged
    results = store.table("results").to_pyarrow_table().to_pylist()
    judged = sorted(
        (r["window_start"], r["metric_value"])
        for r in results
        if r["scope"] == "window" and r["metric_name"] == "Size"
    )
    assert judged[0] == (W0, 5.0), judged
    finite = [r for r in results if r["metric_name"] == "NonFinite" and r["scope"] == "batch"]
    assert sorted((r["batch_id"], r["status"]) for r in finite)[0] == (0, "Failure")

    quarantine = store.table("quarantine").to_pyarrow_table().to_pylist()
    assert len(quarantine) == 3, quarantine
    by_reason = sorted(r["reason"] for r in quarantine)
    assert all(r.startswith("implausible event time ") for r in by_reason), by_reason
    assert sum("before 1900-01-01T00:00:00Z" in r for r in by_reason) == 1
    assert sum("not before 9000-01-01T00:00:00Z" in r for r in by_reason) == 2
