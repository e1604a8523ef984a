"""End to end through a real streaming query: files dropped into a directory (JSON Lines with
malformed lines and a type mismatch) -> `stream(spark, "run.yaml")` -> Delta state store.

Checks that batch and total metrics are committed, bad lines are counted as BadRecords and each
bad line lands in the quarantine table exactly once with its raw text and reason, and that
``streamdq.stream(spark, path).start()`` returns Spark's StreamingQuery (the Python API mirrors
``streamdq run``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.integration.conftest import run_to_end

pytestmark = [pytest.mark.integration]

SCHEMA = "order_id STRING, ts TIMESTAMP, amount DOUBLE"

GOOD = [
    {"order_id": "a", "ts": "2024-01-01T00:00:05Z", "amount": 10.0},
    {"order_id": "b", "ts": "2024-01-01T00:00:15Z", "amount": 20.0},
    {"order_id": "c", "ts": "2024-01-01T00:00:25Z", "amount": None},
]
MALFORMED = '{"order_id": "x", "ts": '
TYPE_MISMATCH = '{"order_id": "y", "ts": "2024-01-01T00:00:30Z", "amount": "12.5"}'


def _write_run(tmp: Path, source: dict) -> Path:
    cfg = {
        "dataset": "orders",
        "source": source,
        "event_time": "ts" if "ts" in source.get("schema", "") else None,
        "window": "1 minute",
        "trigger": "available_now",
        "checkpoint": str(tmp / "chk"),
        "state": {"path": str(tmp / "state")},
        "checks": [
            {
                "description": "orders",
                "level": "error",
                "constraints": [
                    {"has_size": {"assertion": ">= 0", "scope": "batch"}},
                    {"has_size": {"assertion": ">= 0", "scope": "total"}},
                    {"has_completeness": {"column": "amount", "assertion": ">= 0", "scope": "total"}},
                ],
            }
        ],
        "sinks": [{"type": "jsonl", "path": str(tmp / "reports.jsonl")}],
    }
    path = tmp / "run.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def _metric_values(store, name: str, scope: str, instance: str | None = None) -> list[float]:
    table = store.history("orders", name, scope=scope, instance=instance)
    return [v for v in table.column("value").to_pylist() if v is not None]


def _quarantine(store) -> list[dict]:
    dt = store.table("quarantine")
    assert dt is not None, "no quarantine table was written"
    return dt.to_pyarrow_table().to_pylist()


def test_json_files_end_to_end_counts_and_quarantines_bad_lines(tmp_path, spark):
    from pyspark.sql.streaming import StreamingQuery

    import streamdq

    inbox = tmp_path / "in"
    inbox.mkdir()
    lines = [json.dumps(r) for r in GOOD] + [MALFORMED, TYPE_MISMATCH]
    staged = tmp_path / "orders-1.json"
    staged.write_text("\n".join(lines) + "\n")
    staged.rename(inbox / "orders-1.json")
    run = _write_run(
        tmp_path,
        {"type": "files", "path": str(inbox), "format": "json", "schema": SCHEMA, "required": ["order_id"]},
    )

    runner = streamdq.stream(spark, str(run))
    query = runner.start()
    try:
        assert isinstance(query, StreamingQuery)
        query.awaitTermination(90)
        assert query.exception() is None
    finally:
        runner.stop()

    store = runner.store
    assert sum(_metric_values(store, "BadRecords", "batch")) == 2
    assert sum(_metric_values(store, "Size", "batch")) == 3
    assert _metric_values(store, "Size", "total")[-1] == 3
    assert _metric_values(store, "Completeness", "total", "amount")[-1] == pytest.approx(2 / 3)

    rows = _quarantine(store)
    raws = sorted(r["raw"] for r in rows)
    assert raws == sorted([MALFORMED, TYPE_MISMATCH]), rows
    by_raw = {r["raw"]: r["reason"] for r in rows}
    assert "amount" in by_raw[TYPE_MISMATCH]
    assert by_raw[MALFORMED]


def test_csv_files_end_to_end_counts_and_quarantines_bad_lines(tmp_path, spark):
    from streamdq.engine.streaming import stream

    inbox = tmp_path / "in"
    inbox.mkdir()
    bad_amount = "y,2024-01-01T00:00:30Z,twelve"
    lines = ["a,2024-01-01T00:00:05Z,10.0", "b,2024-01-01T00:00:15Z,", bad_amount]
    (tmp_path / "o.csv").write_text("\n".join(lines) + "\n")
    (tmp_path / "o.csv").rename(inbox / "o.csv")
    run = _write_run(tmp_path, {"type": "files", "path": str(inbox), "format": "csv", "schema": SCHEMA})
    runner = stream(spark, str(run))
    run_to_end(runner, 90)
    store = runner.store
    assert _metric_values(store, "Size", "total")[-1] == 2
    assert _metric_values(store, "Completeness", "total", "amount")[-1] == pytest.approx(1 / 2)
    rows = _quarantine(store)
    assert [r["raw"] for r in rows] == [bad_amount]
    assert "amount" in rows[0]["reason"]


def test_parquet_files_end_to_end(tmp_path, spark):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from streamdq.engine.streaming import stream

    inbox = tmp_path / "in"
    inbox.mkdir()
    table = pa.table({"order_id": ["a", "b", "c", "d"], "amount": [1.0, None, 3.0, 4.0]})
    pq.write_table(table, tmp_path / "o.parquet")
    (tmp_path / "o.parquet").rename(inbox / "o.parquet")
    source = {
        "type": "files",
        "path": str(inbox),
        "format": "parquet",
        "schema": "order_id STRING, amount DOUBLE",
    }
    run = _write_run(tmp_path, source)
    runner = stream(spark, str(run))
    run_to_end(runner, 90)
    assert _metric_values(runner.store, "Size", "total")[-1] == 4
    assert _metric_values(runner.store, "Completeness", "total", "amount")[-1] == pytest.approx(3 / 4)


def test_a_restart_without_new_batches_writes_the_rows_a_crash_cut_short(tmp_path, spark, monkeypatch):
    """The state store writes a batch's results rows after its report, in the background. When
    that write fails for good (here: every results write raises), the batch stays committed;
    restarting the query writes them from the stored report at start, even though the restart
    brings no batch (``availableNow`` with no new file)."""
    from streamdq.state import DeltaStateStore

    import streamdq

    inbox = tmp_path / "in"
    inbox.mkdir()
    (inbox / "orders-1.json").write_text("\n".join(json.dumps(r) for r in GOOD) + "\n")
    run = _write_run(tmp_path, {"type": "files", "path": str(inbox), "format": "json", "schema": SCHEMA})
    real = DeltaStateStore._write_once

    def failing(self, name, *args, **kwargs):  # type: ignore[no-untyped-def]
        if name == "results":
            raise OSError("disk full")
        return real(self, name, *args, **kwargs)

    monkeypatch.setattr(DeltaStateStore, "_write_once", failing)
    run_to_end(streamdq.stream(spark, str(run)), 90)
    monkeypatch.setattr(DeltaStateStore, "_write_once", real)
    store = DeltaStateStore(str(tmp_path / "state"))
    assert store.table("reports") is not None  # the batch is committed
    assert store.table("results") is None  # committed, its results rows cut short

    restarted = streamdq.stream(spark, str(run))
    query = run_to_end(restarted, 90)
    assert query.lastProgress is None or query.lastProgress["numInputRows"] == 0
    results = DeltaStateStore(str(tmp_path / "state")).table("results")
    assert results is not None
    got = results.to_pyarrow_table()
    assert set(got.column("batch_id").to_pylist()) == {0}
    assert got.num_rows == 3  # the suite's three constraints, once each
