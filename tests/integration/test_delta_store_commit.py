"""What one DeltaStateStore.commit writes (fewer table writes per batch) and that restores stay exact.

* a batch whose states and detector states did not change writes its report and nothing else;
* ``states_latest`` is a snapshot written every ``snapshot_every`` state-changing batches; a
  restarted store lays the committed ``states`` log rows after it over it, so its
  ``load_states`` equals the in-memory store's after any sequence of batches, restarts and
  crashes mid-commit (a randomized differential test against ``InMemoryStateStore``).
"""

from __future__ import annotations

import contextlib
import logging
import random
from datetime import timedelta, timezone
from pathlib import Path

import pytest
from deltalake import DeltaTable
from streamdq.state import DeltaStateStore, DetectorStateRecord, InMemoryStateStore, result_records
from streamdq.state import schemas as S

from streamdq.analyzers.basic_states import NumMatches
from streamdq.report import Window
from tests.integration.test_delta_store import CrashAt, commit_batch, crashing_store
from tests.unit.state.state_testkit import SIZE, mean_record, report, size_record, window

pytestmark = pytest.mark.integration


def versions(root: Path) -> dict[str, int]:
    out = {}
    for name in S.SCHEMAS:
        if (root / name / "_delta_log").exists():
            out[name] = DeltaTable(str(root / name)).version()
    return out


def test_an_unchanged_batch_writes_only_its_report(tmp_path: Path) -> None:
    store = DeltaStateStore(str(tmp_path))
    states = [size_record(5), size_record(5, "window", window(0)), mean_record(3.0, 2, "total")]
    det = [DetectorStateRecord.from_json("c-size", "OnlineNormal", {"mean": 1.0}, 0)]
    rep = report("orders", "q1", 0)
    store.commit(
        "q1",
        0,
        dataset="orders",
        states=states,
        metrics=[],
        results=result_records(rep),
        report=rep,
        detector_states=det,
    )
    store.settle()  # batch 0's results rows are written after its report, in the background
    before = versions(tmp_path)
    for b in (1, 2):  # the handler sends every running state again, unchanged
        det_b = [DetectorStateRecord.from_json("c-size", "OnlineNormal", {"mean": 1.0}, b)]
        rep = report("orders", "q1", b)
        assert store.commit(
            "q1",
            b,
            dataset="orders",
            states=states,
            metrics=[],
            results=[],
            report=rep,
            detector_states=det_b,
        )
    after = versions(tmp_path)
    assert {k: after[k] - before[k] for k in after} == {k: (2 if k == S.REPORTS else 0) for k in after}
    assert DeltaStateStore(str(tmp_path)).load_states("orders") == InMemoryStateStore_states(states)


def test_a_window_named_in_another_time_zone_is_the_same_window(tmp_path: Path) -> None:
    """The store compares a batch's states with its view (read back from the tables after a
    restart) by key: a window bound given in another time zone is the same instant."""
    store = DeltaStateStore(str(tmp_path))
    w = window(0)
    plus2 = timezone(timedelta(hours=2))
    moved = Window(w.start.astimezone(plus2), w.end.astimezone(plus2))
    assert commit_batch(store, 0, states=[size_record(5, "window", w)])
    restarted = DeltaStateStore(str(tmp_path))
    before = versions(tmp_path)
    assert commit_batch(restarted, 1, states=[size_record(5, "window", moved)])
    after = versions(tmp_path)
    assert after[S.STATES] == before[S.STATES]  # unchanged: not written again
    assert restarted.load_states("orders") == {("window", w.start, SIZE.state_key()): NumMatches(5)}


def InMemoryStateStore_states(states):  # type: ignore[no-untyped-def]  # noqa: N802
    mem = InMemoryStateStore()
    mem.commit(
        "q", 0, dataset="orders", states=states, metrics=[], results=[], report=report("orders", "q", 0)
    )
    return mem.load_states("orders")


def test_states_latest_is_a_periodic_snapshot_and_restores_are_exact(tmp_path: Path) -> None:
    store = DeltaStateStore(str(tmp_path), snapshot_every=5)
    mem = InMemoryStateStore()
    for b in range(12):
        w = window(b // 4)
        states = [size_record(b + 1), size_record(b % 4 + 1, "window", w)]
        closed = (window(b // 4 - 1),) if b % 4 == 0 and b else ()
        for s in (store, mem):
            s.commit(
                "q1",
                b,
                dataset="orders",
                states=states,
                metrics=[],
                results=[],
                report=report("orders", "q1", b, closed=closed),
            )
    # snapshots at batch 0 (first of this store instance), 5 and 10, not on every batch
    assert DeltaTable(str(tmp_path / S.STATES_LATEST)).version() == 3
    assert DeltaTable(str(tmp_path / S.STATES)).version() == 12
    assert DeltaStateStore(str(tmp_path)).load_states("orders") == mem.load_states("orders")


def detector_states(store) -> dict:  # type: ignore[no-untyped-def]
    return {k: r.state for k, r in store.load_detector_states("orders").items()}


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_restores_equal_the_in_memory_store_through_restarts_and_crashes(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    mem = InMemoryStateStore()
    store = DeltaStateStore(str(tmp_path), snapshot_every=rng.choice([1, 2, 3, 7]))
    windows: dict[int, int] = {}
    total, b = 0, 0
    while b < 25:
        n = rng.choice([0, 0, 1, 3])  # rows in this batch; 0: an empty batch
        ws = rng.choice([0, 1]) + b // 5
        total += n
        if n:
            windows[ws] = windows.get(ws, 0) + n
        closed = tuple(window(i) for i in sorted(windows) if i < b // 5 - 1)
        finals = [size_record(windows.pop(w.start.minute), "window", w, final=True) for w in closed[:1]]
        late_close = closed[1:]  # closed through the report only
        for w in late_close:
            windows.pop(w.start.minute)
        states = (
            [size_record(total)] + [size_record(v, "window", window(i)) for i, v in windows.items()] + finals
        )
        det = [DetectorStateRecord.from_json("c", "OnlineNormal", {"total": total}, b)]
        rep = report("orders", "q1", b, closed=late_close)
        kw = dict(dataset="orders", states=states, metrics=[], results=[], report=rep, detector_states=det)
        roll = rng.random()
        done = False
        if roll < 0.15:  # the driver dies mid-commit, before one of the tables (if this batch writes it)
            table = rng.choice([S.STATES, S.STATES_LATEST, S.DETECTORS, S.REPORTS])
            with contextlib.suppress(CrashAt):
                done = crashing_store(tmp_path, table).commit("q1", b, **kw)
            store = DeltaStateStore(str(tmp_path), snapshot_every=store.snapshot_every)
        elif roll < 0.3:  # a restart between batches
            store = DeltaStateStore(str(tmp_path), snapshot_every=store.snapshot_every)
        if not done:
            assert store.load_states("orders") == mem.load_states("orders"), b
            assert detector_states(store) == detector_states(mem), b
            assert store.commit("q1", b, **kw) is True
        assert mem.commit("q1", b, **kw) is True
        assert store.commit("q1", b, **kw) is False
        assert store.load_states("orders") == mem.load_states("orders"), b
        b += 1
    assert DeltaStateStore(str(tmp_path)).load_states("orders") == mem.load_states("orders")


# -- the committing store trusts the table snapshots it wrote itself ----------------------------


def batch_kw(b: int, total: int) -> dict:  # type: ignore[type-arg]
    rep = report("orders", "q1", b)
    return dict(
        dataset="orders",
        states=[size_record(total)],
        metrics=[],
        results=result_records(rep),
        report=rep,
        detector_states=[DetectorStateRecord.from_json("c", "OnlineNormal", {"total": total}, b)],
    )


def committed_rows(root: Path, name: str) -> list[int]:
    return sorted(DeltaTable(str(root / name)).to_pyarrow_table(columns=["batch_id"])["batch_id"].to_pylist())


def test_the_last_committer_refreshes_no_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its snapshots are the newest of its query: a commit lists no ``_delta_log`` to refresh them
    and looks up no application-transaction version (it knows the ones it wrote)."""
    store = DeltaStateStore(str(tmp_path))
    assert store.commit("q1", 0, **batch_kw(0, 1))
    store.settle()  # batch 0's first results write (background) looks its table up once
    refreshes: list[str] = []
    lookups: list[str] = []
    real = DeltaTable.update_incremental
    real_version = DeltaTable.transaction_version

    def counting(self: DeltaTable) -> None:
        refreshes.append(self.table_uri)
        real(self)

    def counting_version(self: DeltaTable, app_id: str) -> int | None:
        lookups.append(self.table_uri)
        return real_version(self, app_id)

    monkeypatch.setattr(DeltaTable, "update_incremental", counting)
    monkeypatch.setattr(DeltaTable, "transaction_version", counting_version)
    for b in (1, 2, 3):
        assert store.commit("q1", b, **batch_kw(b, b + 1))
    assert refreshes == []
    assert lookups == []
    assert store.commit("q1", 3, **batch_kw(3, 4)) is False
    # a new store instance (a restarted handler) reads every table fresh, then trusts them too
    other = DeltaStateStore(str(tmp_path))
    assert other.load_states("orders") == InMemoryStateStore_states([size_record(4)])


def no_conflict_retries(caplog: pytest.LogCaptureFixture) -> bool:
    """True when no table write met a stale snapshot (delta-rs refuses a second commit of one
    application transaction on a stale snapshot; the store then retries from a fresh one)."""
    return not [r for r in caplog.records if "concurrent commit" in r.getMessage()]


def test_a_commit_by_another_store_instance_is_seen(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A store whose query another instance committed meanwhile refreshes before it writes."""
    caplog.set_level(logging.INFO, logger="streamdq.state.delta_store")
    first, second = DeltaStateStore(str(tmp_path)), DeltaStateStore(str(tmp_path))
    assert first.commit("q1", 0, **batch_kw(0, 1))
    assert second.commit("q1", 1, **batch_kw(1, 2))
    assert first.commit("q1", 1, **batch_kw(1, 2)) is False  # its cached snapshot says 0
    assert first.commit("q1", 2, **batch_kw(2, 3))
    first.settle()  # the buffered derived rows of both instances
    for name in (S.STATES, S.RESULTS, S.DETECTORS, S.REPORTS):
        assert committed_rows(tmp_path, name) == ([2] if name == S.DETECTORS else [0, 1, 2]), name
    assert no_conflict_retries(caplog)


def test_a_failed_commit_refreshes_before_its_replay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A write that committed but failed afterwards (its snapshot never saw the commit) is not
    written twice when the same store instance replays the batch."""
    from streamdq.state import delta_store

    caplog.set_level(logging.INFO, logger=delta_store.__name__)

    store = DeltaStateStore(str(tmp_path), parallel_writes=False)
    assert store.commit("q1", 0, **batch_kw(0, 1))
    real = delta_store.write_deltalake

    def commits_then_fails(dt: DeltaTable, data, **kw):  # type: ignore[no-untyped-def]
        real(DeltaTable(dt.table_uri), data, **kw)  # committed through another snapshot
        if dt.table_uri.rstrip("/").endswith("/" + S.DETECTORS):
            raise OSError("connection reset after the commit")

    monkeypatch.setattr(delta_store, "write_deltalake", commits_then_fails)
    with pytest.raises(OSError):
        store.commit("q1", 1, **batch_kw(1, 2))
    monkeypatch.setattr(delta_store, "write_deltalake", real)
    assert committed_rows(tmp_path, S.STATES) == [0, 1]  # written before the failure
    assert store.commit("q1", 1, **batch_kw(1, 2))
    for name in (S.STATES, S.REPORTS):
        assert committed_rows(tmp_path, name) == [0, 1], name
    assert committed_rows(tmp_path, S.DETECTORS) == [1]
    assert no_conflict_retries(caplog)


def test_the_default_store_checkpoints_every_20_versions(tmp_path: Path) -> None:
    """A table kept open pays, on every write, for each commit since its last checkpoint, so
    the default cadence is 20 versions (docs/state.md, Maintenance): the reports table of a
    default store has a checkpoint at version 20 and none before it."""
    store = DeltaStateStore(str(tmp_path))
    log = tmp_path / S.REPORTS / "_delta_log"
    for b in range(19):
        assert store.commit("q1", b, **batch_kw(b, b + 1))
    assert not list(log.glob("*.checkpoint.parquet"))
    assert store.commit("q1", 19, **batch_kw(19, 20))  # the reports table's version 20
    assert [p.name for p in log.glob("*.checkpoint.parquet")] == ["00000000000000000020.checkpoint.parquet"]
    assert DeltaStateStore(str(tmp_path)).load_states("orders") == InMemoryStateStore_states(
        [size_record(20)]
    )


def test_a_checkpoint_reopens_the_cached_table_from_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ``DeltaTable`` kept open replays every commit it has seen on each write (delta-rs 1.6),
    so the store opens a table again after checkpointing it: the write cost stays bounded by
    ``checkpoint_every`` commits instead of growing with the process's lifetime. The reopened
    snapshot is current (no refresh at the next commit) and restores stay exact."""
    store = DeltaStateStore(str(tmp_path), checkpoint_every=3, compact_every=1000)
    opened: list[DeltaTable] = []
    for b in range(7):
        assert store.commit("q1", b, **batch_kw(b, b + 1))
        dt = store._tables[S.REPORTS]
        assert dt.version() == b + 1  # created at 0, one append per batch
        opened.append(dt)
    # versions 3 and 6 were checkpointed: a new object from each, the same one in between
    assert [opened[i] is opened[i - 1] for i in range(1, 7)] == [True, False, True, True, False, True]
    assert (tmp_path / S.REPORTS / "_delta_log" / "00000000000000000006.checkpoint.parquet").exists()
    refreshes: list[str] = []
    real = DeltaTable.update_incremental

    def counting(self: DeltaTable) -> None:
        refreshes.append(self.table_uri)
        real(self)

    monkeypatch.setattr(DeltaTable, "update_incremental", counting)
    assert store.commit("q1", 7, **batch_kw(7, 8))
    assert refreshes == []
    assert DeltaStateStore(str(tmp_path)).load_states("orders") == InMemoryStateStore_states([size_record(8)])


def test_tables_keep_statistics_for_the_columns_readers_prune_on_only(tmp_path: Path) -> None:
    """Payload columns (state bytes, report JSON, metric JSON) get no file statistics: they never
    prune a read, and computing them costs every append CPU. A table created without the
    property (an older store) gets it on the store's first write to it; files written before
    keep their statistics."""
    old = tmp_path / "old"
    DeltaTable.create(str(old / S.METRICS), schema=S.SCHEMAS[S.METRICS], partition_by=S.PARTITIONS[S.METRICS])
    for root in (tmp_path / "new", old):
        store = DeltaStateStore(str(root))
        assert commit_batch(store, 0)
        store.settle()
        for name in (S.STATES, S.METRICS, S.REPORTS):
            dt = DeltaTable(store.path(name))
            assert dt.metadata().configuration["delta.dataSkippingStatsColumns"] == ",".join(
                S.STATS_COLUMNS[name]
            )
            stats = {
                c[len("min.") :]
                for c in dt.get_add_actions(flatten=True).schema.names
                if c.startswith("min.")
            }
            assert stats == set(S.STATS_COLUMNS[name]), name
    assert {"state", "report", "value_json"}.isdisjoint(c for cols in S.STATS_COLUMNS.values() for c in cols)
    # the history still prunes by name and reads back what was written
    assert DeltaStateStore(str(tmp_path / "new")).history("orders", "Size").num_rows == 1
