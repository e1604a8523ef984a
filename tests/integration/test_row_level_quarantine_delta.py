"""``row_level: quarantine`` against a real Delta state store: the failing rows land in the
quarantine Delta table with their constraints, once, also when the batch is replayed."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from streamdq.state import DeltaStateStore
from streamdq.state import schemas as S

from streamdq.checks.check import Check, Level
from streamdq.engine.handler import BatchHandler
from streamdq.engine.judge import BatchJudge

SCHEMA = "ts timestamp, id int, status string"
T = datetime(2026, 1, 1, 12, 0, 5)
ROWS = [(T, 1, "new"), (T, 2, "lost"), (T, None, "paid"), (T, 4, None), (T, 4, "new")]


def _handler(store: DeltaStateStore) -> BatchHandler:
    check = (
        Check(Level.ERROR, "orders", row_level="quarantine")
        .is_complete("id")
        .is_contained_in("status", ["new", "paid"])
        .is_unique("id")
        .has_size("> 10")
    )
    return BatchHandler(
        dataset="orders",
        query_id="q1",
        judge=BatchJudge([check]),
        window_seconds=60,
        event_time="ts",
        store=store,
        row_level_max_rows=3,
    )


def _quarantine(store: DeltaStateStore) -> list[dict]:
    table = store.table(S.QUARANTINE)
    return [] if table is None else table.to_pyarrow_table().to_pylist()


def test_failing_rows_reach_the_delta_quarantine_once(spark, tmp_path: Path) -> None:
    store = DeltaStateStore(str(tmp_path / "state"))
    df = spark.createDataFrame(ROWS, SCHEMA)
    report = _handler(store).handle(df, 0)
    # failing: id 2 (status), id NULL (complete), both id-4 rows (unique): 4 rows, capped at 3
    assert report.counters["row_level_failed_rows"] == 4
    assert report.counters["row_level_quarantined_rows"] == 3
    assert report.counters["row_level_over_cap_rows"] == 1
    rows = _quarantine(store)
    assert len(rows) == 3
    assert all(r["reason"].startswith("row-level: ") for r in rows)
    assert all("has_size" not in r["reason"] for r in rows)
    assert {r["dataset"] for r in rows} == {"orders"} and {r["batch_id"] for r in rows} == {0}
    assert all('"id"' in r["raw"] or "id" in r["raw"] for r in rows)
    # a restart replays batch 0: the stored report is re-emitted, nothing is appended again
    again = _handler(DeltaStateStore(str(tmp_path / "state"))).handle(df, 0)
    assert again.counters["row_level_quarantined_rows"] == 3
    assert len(_quarantine(store)) == 3
