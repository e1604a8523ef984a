"""Late data and the watermark through a real multi-trigger streaming query.

A JSON file source (one file per trigger, processing-time trigger) feeds
``streamdq.stream(spark, cfg)`` (1-minute windows, 30-second watermark, Delta state store).
Files are dropped one at a time, each only after the previous one's batch is committed, so
the watermark the handler keeps advances between batches exactly as in production:

=====  ===========================================  =====================  ==================
batch  rows (event time, amount)                    watermark after        effect
=====  ===========================================  =====================  ==================
0      00:00:10 (1), 00:00:40 (2), 00:01:20 (3)     00:00:50               all on time
1      00:00:55 (10), 00:02:10 (4)                  00:01:40               00:00:55 is behind
                                                                           the max event time
                                                                           but within the
                                                                           watermark: merges
                                                                           into the still-open
                                                                           window [00:00, 00:01),
                                                                           which then closes
2      00:00:30 (100), 00:01:50 (5), 00:03:00 (6)   00:02:30               00:00:30 is behind
                                                                           the watermark: late
=====  ===========================================  =====================  ==================

The late row is counted (LateRows), quarantined once with a ``late: ...`` reason, still
counts in the batch and total scopes, and is NOT in the closed window's metrics or states.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.integration]

SCHEMA = "order_id STRING, ts TIMESTAMP, amount DOUBLE"
FILES = [
    [("a", "00:00:10", 1.0), ("b", "00:00:40", 2.0), ("c", "00:01:20", 3.0)],
    [("d", "00:00:55", 10.0), ("e", "00:02:10", 4.0)],
    [("late", "00:00:30", 100.0), ("f", "00:01:50", 5.0), ("g", "00:03:00", 6.0)],
]
W0 = datetime(2024, 1, 1, 0, 0, tzinfo=UTC)
W1 = datetime(2024, 1, 1, 0, 1, tzinfo=UTC)


def _line(order_id: str, hms: str, amount: float) -> str:
    return json.dumps({"order_id": order_id, "ts": f"2024-01-01T{hms}Z", "amount": amount})


def _drop(inbox: Path, name: str, rows: list[tuple[str, str, float]]) -> None:
    staged = inbox.parent / name
    staged.write_text("\n".join(_line(*r) for r in rows) + "\n")
    staged.rename(inbox / name)  # atomic: the file source never sees a partial file


def _batches(store: Any) -> int:
    if store.table("metrics") is None:
        return 0
    return len(store.history("orders", "InputRows", scope="batch"))


def _by_batch(store: Any, name: str, scope: str, instance: str = "*") -> dict[int, float]:
    t = store.history("orders", name, scope=scope, instance=instance)
    return dict(zip(t.column("batch_id").to_pylist(), t.column("value").to_pylist(), strict=True))


def _window_rows(store: Any, name: str, start: datetime, instance: str = "*") -> list[dict]:
    """Every stored window-scope row of ``name`` for the window starting at ``start``."""
    dt = store.table("metrics")
    rows = dt.to_pyarrow_table().to_pylist()
    return sorted(
        (
            r
            for r in rows
            if r["scope"] == "window"
            and r["name"] == name
            and r["instance"] == instance
            and r["window_start"] == start
        ),
        key=lambda r: r["batch_id"],
    )


def test_late_rows_through_a_multi_trigger_query(tmp_path: Path, spark: Any) -> None:
    import streamdq
    from streamdq.analyzers import Size, Sum

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
                    {"has_size": {"assertion": ">= 0", "scope": "batch"}},
                    {"has_size": {"assertion": ">= 0", "scope": "total"}},
                    {"has_size": {"assertion": ">= 0", "scope": "window"}},
                    {"has_sum": {"column": "amount", "assertion": ">= 0", "scope": "total"}},
                    {"has_sum": {"column": "amount", "assertion": ">= 0", "scope": "window"}},
                ],
            }
        ],
        "sinks": [{"type": "jsonl", "path": str(tmp_path / "reports.jsonl")}],
    }
    runner = streamdq.stream(spark, cfg)
    query = runner.start()
    store = runner.store
    try:
        for i, rows in enumerate(FILES):
            _drop(inbox, f"orders-{i}.json", rows)
            deadline = time.monotonic() + 180
            while _batches(store) < i + 1:
                assert query.exception() is None, query.exception()
                assert time.monotonic() < deadline, f"batch {i} was not committed in time"
                time.sleep(0.3)
        assert query.isActive and query.exception() is None
    finally:
        runner.stop()

    assert _batches(store) == 3, "one batch per file"
    # the late row is counted once, in the batch that carried it
    assert _by_batch(store, "LateRows", "batch") == {0: 0.0, 1: 0.0, 2: 1.0}
    # ... and still counts in the batch and total scopes
    assert _by_batch(store, "Size", "batch") == {0: 3.0, 1: 2.0, 2: 3.0}
    assert _by_batch(store, "Size", "total")[2] == 8.0
    assert _by_batch(store, "Sum", "total", "amount")[2] == 131.0

    # window [00:00, 00:01): the within-watermark row of batch 1 merged in; the late row did not
    sizes = _window_rows(store, "Size", W0)
    assert [(r["batch_id"], r["value"]) for r in sizes] == [(0, 2.0), (1, 3.0)]
    assert [(r["batch_id"], r["value"]) for r in _window_rows(store, "Sum", W0, "amount")] == [
        (0, 3.0),
        (1, 13.0),
    ]
    # window [00:01, 00:02) stayed open through batch 1 and took 00:01:50 in batch 2 before closing
    assert [(r["batch_id"], r["value"]) for r in _window_rows(store, "Size", W1)] == [(0, 1.0), (2, 2.0)]
    # the stored window states agree: merging them answers without the late row
    assert store.merge_range("orders", Size(), W0, W1).matches == 3
    assert store.merge_range("orders", Sum("amount"), W0, W1).total == 13.0

    # closed windows were judged once each, on their final metrics
    results = store.table("results").to_pyarrow_table().to_pylist()
    judged = sorted(
        (r["window_start"], r["metric_value"], r["batch_id"])
        for r in results
        if r["scope"] == "window" and r["metric_name"] == "Size"
    )
    assert judged == [(W0, 3.0, 1), (W1, 2.0, 2)]

    quarantine = store.table("quarantine").to_pyarrow_table().to_pylist()
    assert len(quarantine) == 1, quarantine
    (row,) = quarantine
    assert row["reason"].startswith("late: ")
    assert row["batch_id"] == 2
    assert json.loads(row["raw"]) == json.loads(_line(*FILES[2][0]))
    assert row["event_time"] == datetime(2024, 1, 1, 0, 0, 30, tzinfo=UTC)
    assert row["file"] and row["file"].endswith("orders-2.json")
