"""The state tables keep a bounded Delta log (``delta.logRetentionDuration``), and exactly once,
restarts and queries still work after old commits are cleaned up.

Why it matters: delta-rs lists ``_delta_log`` on every snapshot update and commit, so with
Delta's 30-day default the commit time grew with every batch ever committed (bench/state).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from deltalake import DeltaTable
from streamdq.state import DeltaStateStore, metric_records, result_records
from streamdq.state import schemas as S

from streamdq.analyzers.basic_states import NumMatches
from streamdq.report import ScopedMetric
from tests.unit.state.state_testkit import SIZE, report, size_metric, size_record

pytestmark = pytest.mark.integration


def _commit(store: DeltaStateStore, batch_id: int) -> bool:
    rep = report(
        "orders",
        "q1",
        batch_id,
        metrics=(ScopedMetric("batch", size_metric(float(batch_id)), analyzer_key=SIZE.key()),),
    )
    return store.commit(
        "q1",
        batch_id,
        dataset="orders",
        states=[size_record(batch_id)],
        metrics=metric_records(rep),
        results=result_records(rep),
        report=rep,
    )


def _commit_files(root: Path, table: str) -> list[str]:
    return sorted(p.name for p in (root / table / "_delta_log").glob("*.json"))


def test_old_log_files_are_dropped_and_exactly_once_survives(tmp_path: Path) -> None:
    # snapshot_every=1: states_latest is written by every batch too
    # derived_delay=0: the metrics table gets a commit per batch too
    store = DeltaStateStore(
        str(tmp_path),
        checkpoint_every=5,
        compact_every=1000,
        log_retention_hours=0,
        snapshot_every=1,
        derived_delay=0,
    )
    for b in range(23):
        assert _commit(store, b) is True
    for table in (S.REPORTS, S.METRICS, S.STATES, S.STATES_LATEST):
        files = _commit_files(tmp_path, table)
        # 24 versions (create + 23 batches); the log keeps only what follows the last checkpoint
        assert len(files) <= 5, (table, files)
        assert DeltaTable(str(tmp_path / table)).version() == 23
    fresh = DeltaStateStore(str(tmp_path), log_retention_hours=0)
    assert fresh.last_committed_batch("q1") == 22
    assert _commit(fresh, 3) is False, "a replay of a batch whose commit file is gone is still a no-op"
    assert _commit(fresh, 22) is False
    assert fresh.history("orders", "Size", scope="batch").column("value").to_pylist() == [
        float(b) for b in range(23)
    ]
    assert fresh.load_states("orders") == {("total", None, SIZE.state_key()): NumMatches(22)}
    assert fresh.report("q1", 1) is not None
    assert _commit(fresh, 23) is True


def test_default_retention_is_set_on_new_and_existing_tables(tmp_path: Path) -> None:
    # Delta's own default; derived_delay=0: its metrics table is created by its own commit
    legacy = DeltaStateStore(str(tmp_path), log_retention_hours=None, derived_delay=0)
    _commit(legacy, 0)
    conf = DeltaTable(str(tmp_path / S.REPORTS)).metadata().configuration
    assert "delta.logRetentionDuration" not in conf
    store = DeltaStateStore(str(tmp_path))
    assert _commit(store, 1) is True
    store.settle()  # its first metrics write (the batch's rows wait up to derived_delay)
    for table in (S.REPORTS, S.METRICS, S.STATES):
        conf = DeltaTable(str(tmp_path / table)).metadata().configuration
        assert conf["delta.logRetentionDuration"] == "interval 3600 seconds", table
    assert store.last_committed_batch("q1") == 1
    assert _commit(store, 1) is False
    other = tmp_path / "other"
    _commit(DeltaStateStore(str(other), log_retention_hours=0.5), 0)
    conf = DeltaTable(str(other / S.REPORTS)).metadata().configuration
    assert conf["delta.logRetentionDuration"] == "interval 1800 seconds"


def test_negative_log_retention_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="log_retention_hours"):
        DeltaStateStore(str(tmp_path), log_retention_hours=-1)
