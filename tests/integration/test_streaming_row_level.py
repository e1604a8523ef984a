"""End to end: a real streaming query over files with a ``row_level: quarantine`` check and the
run-config cap ``row_level_quarantine_max_rows``: failing rows (and only those) land in the Delta
quarantine table with the constraints they fail, capped; the counts are stored metrics; a
malformed line is quarantined for its decode error, not judged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.integration.conftest import run_to_end

pytestmark = [pytest.mark.integration]

SCHEMA = "order_id STRING, ts TIMESTAMP, status STRING"
ROWS = [
    {"order_id": "a", "ts": "2024-01-01T00:00:05Z", "status": "new"},
    {"order_id": None, "ts": "2024-01-01T00:00:06Z", "status": "paid"},  # is_complete
    {"order_id": "c", "ts": "2024-01-01T00:00:07Z", "status": "lost"},  # is_contained_in
    {"order_id": "d", "ts": "2024-01-01T00:00:08Z", "status": "gone"},  # is_contained_in
    {"order_id": "e", "ts": "2024-01-01T00:00:09Z", "status": "new"},
]
MALFORMED = '{"order_id": "x", "ts": '


def test_row_level_quarantine_through_a_streaming_run(tmp_path: Path, spark) -> None:
    import streamdq

    inbox = tmp_path / "in"
    inbox.mkdir()
    staged = tmp_path / "o.json"
    staged.write_text("\n".join([json.dumps(r) for r in ROWS] + [MALFORMED]) + "\n")
    staged.rename(inbox / "o.json")
    cfg = {
        "dataset": "orders",
        "source": {"type": "files", "path": str(inbox), "format": "json", "schema": SCHEMA},
        "event_time": "ts",
        "window": "1 minute",
        "trigger": "available_now",
        "checkpoint": str(tmp_path / "chk"),
        "state": {"path": str(tmp_path / "state")},
        "row_level_quarantine_max_rows": 2,
        "checks": [
            {
                "description": "orders",
                "row_level": "quarantine",
                "constraints": [
                    {"is_complete": {"column": "order_id"}},
                    {"is_contained_in": {"column": "status", "values": ["new", "paid"]}},
                    {"has_size": {"assertion": "> 100"}},
                ],
            }
        ],
        "sinks": [{"type": "jsonl", "path": str(tmp_path / "reports.jsonl")}],
    }
    run = tmp_path / "run.yaml"
    run.write_text(yaml.safe_dump(cfg))
    runner = streamdq.stream(spark, str(run))
    assert runner.make_handler("q").row_level.max_rows == 2
    run_to_end(runner, 120)

    rows = runner.store.table("quarantine").to_pyarrow_table().to_pylist()
    reasons = [r["reason"] for r in rows]
    row_level = [r for r in reasons if r.startswith("row-level: ")]
    assert len(row_level) == 2  # 3 rows fail, the cap is 2
    assert len(rows) == 3  # + the malformed line, for its decode error
    assert all("has_size" not in r for r in reasons)
    history = runner.store.history("orders", "RowLevelFailedRows", scope="batch")
    assert sum(v for v in history.column("value").to_pylist() if v is not None) == 3
    over = runner.store.history("orders", "RowLevelRowsOverCap", scope="batch")
    assert sum(v for v in over.column("value").to_pylist() if v is not None) == 1
