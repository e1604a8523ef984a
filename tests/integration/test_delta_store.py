"""DeltaStateStore against real Delta tables in tmp dirs (delta-rs, no Spark)."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from concurrent.futures import wait
from dataclasses import replace
from datetime import UTC, timedelta
from functools import reduce
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import DeltaTable
from streamdq.state import DeltaStateStore, DetectorStateRecord, metric_records, result_records
from streamdq.state import schemas as S
from streamdq.state.delta_store import app_id, derived_app_id, unwritten_app_id, with_app_id

from streamdq.analyzers import Completeness, Mean, Size
from streamdq.analyzers.basic_states import NumMatches, NumMatchesAndCount, SumState
from streamdq.report import ScopedMetric
from tests.unit.state.state_testkit import (
    COMPLETE,
    MEAN,
    SIZE,
    T0,
    complete_record,
    mean_record,
    report,
    size_metric,
    size_record,
    window,
)

pytestmark = pytest.mark.integration


def rows(store: DeltaStateStore, name: str) -> list[dict]:
    dt = DeltaTable(store.path(name))
    return dt.to_pyarrow_table().to_pylist()


def commit_batch(
    store: DeltaStateStore, batch_id: int, *, query_id: str = "q1", dataset: str = "orders", **kw
):
    rep = kw.pop("rep", None) or report(
        dataset,
        query_id,
        batch_id,
        metrics=(ScopedMetric("batch", size_metric(float(batch_id)), analyzer_key=SIZE.key()),),
        closed=kw.pop("closed", ()),
    )
    return store.commit(
        query_id,
        batch_id,
        dataset=dataset,
        states=kw.pop("states", [size_record(batch_id)]),
        metrics=metric_records(rep),
        results=result_records(rep),
        report=rep,
        **kw,
    )


def quarantine(n: int, start: int = 0) -> pa.Table:
    return pa.table(
        {
            "reason": ["undecodable json"] * n,
            "raw": [f"{{bad {i}".encode() for i in range(start, start + n)],
            "topic": ["orders"] * n,
            "partition": pa.array([0] * n, pa.int32()),
            "offset": pa.array(range(start, start + n), pa.int64()),
        }
    )


def test_replayed_batch_leaves_one_copy_in_every_table(tmp_path: Path) -> None:
    store = DeltaStateStore(str(tmp_path))
    det = [DetectorStateRecord.from_json("c-size", "OnlineNormal", {"mean": 1.0}, 0)]
    kw = dict(quarantine=quarantine(2), detector_states=det)
    assert store.last_committed_batch("q1") is None
    assert commit_batch(store, 0, **kw) is True
    assert commit_batch(store, 0, **kw) is False
    # a fresh store instance (a restarted driver) also sees it committed
    assert commit_batch(DeltaStateStore(str(tmp_path)), 0, **kw) is False
    for name in (S.STATES, S.STATES_LATEST, S.METRICS, S.RESULTS, S.REPORTS, S.QUARANTINE):
        got = rows(store, name)
        assert {r["batch_id"] for r in got} == {0}, name
    assert len(rows(store, S.STATES)) == 1
    assert len(rows(store, S.METRICS)) == 1
    assert len(rows(store, S.RESULTS)) == 1
    assert len(rows(store, S.REPORTS)) == 1
    assert len(rows(store, S.QUARANTINE)) == 2
    assert len(rows(store, S.DETECTORS)) == 1
    assert store.last_committed_batch("q1") == 0
    assert store.last_committed_batch("other") is None


def test_report_round_trips_verbatim(tmp_path: Path) -> None:
    store = DeltaStateStore(str(tmp_path))
    rep = report("orders", "q1", 3, failed=True)
    store.commit("q1", 3, dataset="orders", states=[], metrics=[], results=result_records(rep), report=rep)
    assert store.report("q1", 3) == rep
    assert store.report("q1", 4) is None
    assert store.report("q2", 3) is None


def test_commit_rejects_a_report_of_another_batch(tmp_path: Path) -> None:
    store = DeltaStateStore(str(tmp_path))
    with pytest.raises(ValueError, match="batch=1"):
        store.commit(
            "q1", 2, dataset="orders", states=[], metrics=[], results=[], report=report("orders", "q1", 1)
        )


class CrashAt(Exception):
    pass


def crashing_store(root: Path, table: str, batch: int | None = None) -> DeltaStateStore:
    """A store whose process 'dies' right before writing ``table`` (for batch ``batch``, or any)."""

    class Crashing(DeltaStateStore):
        def _write_once(self, name, query_id, batch_id, dataset, write, also=()):  # type: ignore[no-untyped-def]
            if name == table and batch in (None, batch_id):
                raise CrashAt(name)
            return super()._write_once(name, query_id, batch_id, dataset, write, also)

    return Crashing(str(root))


def die_after_background_writes(store: DeltaStateStore) -> None:
    """The process 'dies' once its buffered derived rows were written as far as they got (a
    failed write is not retried)."""
    store._flush_due()
    for flush in store._deferred:
        wait(flush.futures)
    store._deferred = []


@pytest.mark.parametrize("crash_before", [S.STATES_LATEST, S.QUARANTINE, S.REPORTS])
def test_partial_commit_is_repaired_on_replay(tmp_path: Path, crash_before: str) -> None:
    store = DeltaStateStore(str(tmp_path))
    w0 = window(0)
    assert commit_batch(store, 0, states=[size_record(10), size_record(4, "window", w0)])
    crashing = crashing_store(tmp_path, crash_before)
    batch1 = [size_record(25), size_record(9, "window", w0), size_record(6, "window", window(1))]
    with pytest.raises(CrashAt):
        commit_batch(crashing, 1, states=batch1, quarantine=quarantine(1))
    # the restarted driver sees batch 0 as the last committed one and batch-0 states
    restarted = DeltaStateStore(str(tmp_path))
    assert restarted.last_committed_batch("q1") == 0
    assert restarted.load_states("orders") == {
        ("total", None, SIZE.state_key()): NumMatches(10),
        ("window", w0.start, SIZE.state_key()): NumMatches(4),
    }
    assert [r["batch_id"] for r in restarted.history("orders", "Size").to_pylist()] == [0]
    assert restarted.report("q1", 1) is None
    # replay completes the commit; every table holds batch 1 once
    assert commit_batch(restarted, 1, states=batch1, quarantine=quarantine(1)) is True
    assert commit_batch(restarted, 1, states=batch1, quarantine=quarantine(1)) is False
    restarted.settle()  # the derived rows of batch 1 are buffered (derived_delay)
    for name in (S.STATES, S.METRICS, S.RESULTS, S.REPORTS, S.QUARANTINE):
        got = [r["batch_id"] for r in rows(restarted, name)]
        assert got.count(1) == (3 if name == S.STATES else 1), name
    assert restarted.load_states("orders") == {
        ("total", None, SIZE.state_key()): NumMatches(25),
        ("window", w0.start, SIZE.state_key()): NumMatches(9),
        ("window", window(1).start, SIZE.state_key()): NumMatches(6),
    }


def test_the_report_goes_beside_the_data_tables_and_counts_once_they_hold_the_batch(tmp_path: Path) -> None:
    """The report is written at the same time as the data tables (one delta-rs commit less on
    the batch's path); its commit names them. A crash that stored the report but not the
    states leaves the batch uncommitted for every reader; its replay completes it."""
    store = DeltaStateStore(str(tmp_path))
    assert commit_batch(store, 0, states=[size_record(10)])
    reports = store.table(S.REPORTS)
    assert reports is not None
    assert reports.transaction_version(with_app_id("q1", S.STATES)) == 0
    assert reports.transaction_version(with_app_id("q1", S.QUARANTINE)) is None  # not written
    crashing = crashing_store(tmp_path, S.STATES, batch=1)
    with pytest.raises(CrashAt):
        commit_batch(crashing, 1, states=[size_record(25)], quarantine=quarantine(1))
    restarted = DeltaStateStore(str(tmp_path))
    stored = restarted.table(S.REPORTS)
    assert stored is not None and stored.transaction_version(app_id("q1")) == 1  # the report is in
    assert [r["batch_id"] for r in rows(restarted, S.QUARANTINE)] == [1]  # so is the quarantine
    # ... but the batch is not committed: every read stops at batch 0
    assert restarted.last_committed_batch("q1") == 0
    assert restarted.report("q1", 1) is None
    assert restarted.load_states("orders") == {("total", None, SIZE.state_key()): NumMatches(10)}
    assert [r["batch_id"] for r in restarted.history("orders", "Size").to_pylist()] == [0]
    restarted.recover("q1")  # nothing it can complete: the states need the replay
    assert restarted.last_committed_batch("q1") == 0
    # the replay writes the states; the report and the quarantine are skipped
    assert commit_batch(restarted, 1, states=[size_record(25)], quarantine=quarantine(1)) is True
    assert commit_batch(restarted, 1, states=[size_record(25)], quarantine=quarantine(1)) is False
    again = DeltaStateStore(str(tmp_path))
    assert again.last_committed_batch("q1") == 1
    assert again.load_states("orders") == {("total", None, SIZE.state_key()): NumMatches(25)}
    assert [r["value"] for r in again.history("orders", "Size").to_pylist()] == [0.0, 1.0]
    for name in (S.STATES, S.REPORTS, S.QUARANTINE, S.METRICS, S.RESULTS):
        assert [r["batch_id"] for r in rows(again, name)].count(1) == 1, name
    assert commit_batch(again, 2) is True


def test_a_batch_of_the_very_first_report_cut_short_has_nothing_committed(tmp_path: Path) -> None:
    crashing = crashing_store(tmp_path, S.STATES, batch=0)
    with pytest.raises(CrashAt):
        commit_batch(crashing, 0)
    restarted = DeltaStateStore(str(tmp_path))
    assert restarted.last_committed_batch("q1") is None
    assert restarted.report("q1", 0) is None
    assert restarted.load_states("orders") == {}
    assert commit_batch(restarted, 0) is True
    assert restarted.last_committed_batch("q1") == 0


def test_serial_writes_put_the_report_after_the_data_tables(tmp_path: Path) -> None:
    store = DeltaStateStore(str(tmp_path), parallel_writes=False)
    crashing = crashing_store(tmp_path, S.STATES, batch=0)
    crashing.parallel_writes = False
    with pytest.raises(CrashAt):
        commit_batch(crashing, 0)
    assert store.table(S.REPORTS) is None  # never reached
    assert commit_batch(store, 0)
    reports = store.table(S.REPORTS)
    assert reports is not None and reports.transaction_version(with_app_id("q1", S.STATES)) is None


@pytest.mark.parametrize("crash_before", [S.METRICS, S.RESULTS])
def test_derived_rows_cut_short_by_a_crash_are_written_by_the_next_commit(
    tmp_path: Path, crash_before: str
) -> None:
    """The metrics and results rows of a batch are its report's own: written after the report,
    in the background. A crash between the report and them leaves the batch committed; the
    query's next commit (a restarted driver's first) writes them from the stored report before
    its own rows, once."""
    store = DeltaStateStore(str(tmp_path))
    assert commit_batch(store, 0)
    crashing = crashing_store(tmp_path, crash_before, batch=1)
    assert commit_batch(crashing, 1) is True  # the report is in: the batch is committed
    die_after_background_writes(crashing)
    restarted = DeltaStateStore(str(tmp_path))
    assert restarted.last_committed_batch("q1") == 1
    assert [r["batch_id"] for r in rows(restarted, crash_before)] == [0]  # cut short
    assert commit_batch(restarted, 2) is True
    restarted.settle()  # batch 2's own derived rows (background)
    for name in (S.METRICS, S.RESULTS):
        assert sorted(r["batch_id"] for r in rows(restarted, name)) == [0, 1, 2], name
    assert [r["value"] for r in restarted.history("orders", "Size").to_pylist()] == [0.0, 1.0, 2.0]
    # recover() (a runner's start) finds nothing to write now
    restarted.recover("q1")
    assert sorted(r["batch_id"] for r in rows(restarted, S.METRICS)) == [0, 1, 2]
    # a later restart finds nothing to repair and writes nothing twice
    again = DeltaStateStore(str(tmp_path))
    assert commit_batch(again, 3) is True
    again.settle()
    assert sorted(r["batch_id"] for r in rows(restarted, S.METRICS)) == [0, 1, 2, 3]


def test_another_store_on_the_root_waits_for_the_writers_background_rows(tmp_path: Path) -> None:
    """A reader opened beside the stream's writer in the same process (the CLI, the service)
    sees a committed batch's metric rows even while the writer is still writing them."""
    writer = DeltaStateStore(str(tmp_path))
    real = writer._append

    def slow(name, *args, **kwargs):  # type: ignore[no-untyped-def]
        if name == S.METRICS:
            time.sleep(0.5)
        return real(name, *args, **kwargs)

    writer._append = slow  # type: ignore[method-assign]
    assert commit_batch(writer, 0)
    reader = DeltaStateStore(str(tmp_path))
    assert [r["batch_id"] for r in reader.history("orders", "Size").to_pylist()] == [0]


def test_recover_writes_the_cut_short_rows_without_a_new_batch(tmp_path: Path) -> None:
    """A restart that brings no batch (``availableNow`` with nothing new): the runner's
    ``recover`` at start writes the last batch's missing rows from its report."""
    crashing = crashing_store(tmp_path, S.RESULTS, batch=0)
    assert commit_batch(crashing, 0) is True
    die_after_background_writes(crashing)
    restarted = DeltaStateStore(str(tmp_path))
    assert restarted.table(S.RESULTS) is None  # its first rows were the ones cut short
    restarted.recover("q1")
    assert [r["batch_id"] for r in rows(restarted, S.RESULTS)] == [0]
    restarted.recover("q1")  # idempotent
    restarted.recover("never-ran")  # no report: nothing to do
    assert [r["batch_id"] for r in rows(restarted, S.RESULTS)] == [0]


def metric_writes(store: DeltaStateStore) -> int:
    """How many commits appended rows to the metrics table."""
    return sum(1 for h in DeltaTable(store.path(S.METRICS)).history() if h["operation"] == "WRITE")


def test_buffered_batches_are_written_together_and_every_read_sees_them(tmp_path: Path) -> None:
    """Within ``derived_delay`` the derived rows of many batches wait in the store and go in ONE
    append per table; the store's own reads (and any store on the root) write them first."""
    store = DeltaStateStore(str(tmp_path), derived_delay=60)
    for b in range(5):
        assert commit_batch(store, b)
    assert store.table(S.METRICS) is not None  # a read: the five batches are written now
    assert metric_writes(store) == 1
    assert sorted(r["batch_id"] for r in rows(store, S.METRICS)) == [0, 1, 2, 3, 4]
    for b in range(5, 8):
        assert commit_batch(store, b)
    reader = DeltaStateStore(str(tmp_path))
    assert [r["value"] for r in reader.history("orders", "Size").to_pylist()] == [float(b) for b in range(8)]
    assert metric_writes(store) == 2


def test_a_read_of_one_dataset_writes_only_the_kept_rows_of_queries_on_it(tmp_path: Path) -> None:
    """A check reading another dataset's history (``previous_values`` with a dataset) reads the
    metrics table every batch: only the queries keeping rows of the dataset read write theirs;
    the stream's own stay kept and go in one append. Reads of tables ``commit`` writes in full
    (states, reports) write no kept rows."""
    store = DeltaStateStore(str(tmp_path), derived_delay=60)
    assert commit_batch(store, 0, query_id="other", dataset="customers")
    for b in range(3):
        assert commit_batch(store, b, query_id="mine", dataset="orders")
        assert [r["value"] for r in store.history("customers", "Size").to_pylist()] == [0.0]
        assert store.load_states("orders")  # the states log: nothing kept to write
        assert store.last_committed_batch("mine") == b
    assert metric_writes(store) == 1  # the customers batch, written by the first history read
    assert [r["value"] for r in store.history("orders", "Size").to_pylist()] == [0.0, 1.0, 2.0]
    assert metric_writes(store) == 2  # the three orders batches, in one append


def test_an_idle_stream_s_buffered_rows_are_written_after_the_delay(tmp_path: Path) -> None:
    store = DeltaStateStore(str(tmp_path), derived_delay=0.2)
    assert commit_batch(store, 0)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:  # no store call: the buffer's timer writes them
        try:
            if rows(store, S.METRICS):
                break
        except Exception:  # the table does not exist yet, or is being created
            pass
        time.sleep(0.05)
    assert [r["batch_id"] for r in rows(store, S.METRICS)] == [0]


def test_a_process_that_exits_without_settling_writes_its_buffered_rows(tmp_path: Path) -> None:
    """A script around the store (or a BatchHandler) that never calls settle: the exit hook
    writes the kept rows."""
    script = f"""
from streamdq.state import DeltaStateStore, metric_records, result_records
from streamdq.report import ScopedMetric
from tests.unit.state.state_testkit import SIZE, report, size_metric, size_record
store = DeltaStateStore({str(tmp_path)!r}, derived_delay=600)
for b in range(3):
    rep = report("orders", "q1", b, metrics=(ScopedMetric("batch", size_metric(float(b)), analyzer_key=SIZE.key()),))
    store.commit("q1", b, dataset="orders", states=[size_record(b)], metrics=metric_records(rep),
                 results=result_records(rep), report=rep)
assert store._buffer.pending() == 3
"""
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=Path(__file__).parents[2],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    for name in (S.METRICS, S.RESULTS):
        assert sorted(r["batch_id"] for r in rows(DeltaStateStore(str(tmp_path)), name)) == [0, 1, 2], name


def test_a_crash_loses_no_buffered_batch_and_writes_none_twice(tmp_path: Path) -> None:
    """Batches 0-2 were written, 3-5 still buffered when the process died: the restart writes
    3-5 from their reports (the reports' commits say where the unwritten ones start) and
    leaves 0-2 alone."""
    store = DeltaStateStore(str(tmp_path), derived_delay=60)
    for b in range(3):
        assert commit_batch(store, b)
    store.settle()
    for b in range(3, 6):
        assert commit_batch(store, b)
    store._buffer.take()  # the process dies with them buffered
    reports = DeltaTable(store.path(S.REPORTS))
    assert reports.transaction_version(unwritten_app_id("q1")) == 3
    assert sorted(r["batch_id"] for r in rows(store, S.METRICS)) == [0, 1, 2]
    restarted = DeltaStateStore(str(tmp_path), derived_delay=60)
    restarted.recover("q1")
    for name in (S.METRICS, S.RESULTS):
        assert sorted(r["batch_id"] for r in rows(restarted, name)) == list(range(6)), name
    assert commit_batch(restarted, 6)
    restarted.settle()
    assert sorted(r["batch_id"] for r in rows(restarted, S.METRICS)) == list(range(7))


def test_a_failed_background_write_is_retried_before_the_newer_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A newer batch's rows never reach a table before an older batch's that failed (they would
    then be skipped as already written): the newer write waits, and settle retries in order."""
    store = DeltaStateStore(str(tmp_path), derived_delay=60)
    real = DeltaStateStore._write_group
    failures = [1]
    written: list[int] = []  # batch ids whose metrics rows were written, in order
    early: list[int] = []  # batch ids whose metrics write started before batch 1's was written

    def flaky(query_id, name, batches):  # type: ignore[no-untyped-def]
        if name == S.METRICS and batches[0].batch_id == 2 and 1 not in written:
            early.append(2)
        if name == S.METRICS and batches[0].batch_id == 1 and failures[0]:
            failures[0] -= 1
            time.sleep(0.2)  # batch 2's write is queued behind it meanwhile
            raise OSError("disk full")
        done = real(store, query_id, name, batches)
        if name == S.METRICS and done:
            written.extend(b.batch_id for b in batches)
        return done

    monkeypatch.setattr(store, "_write_group", flaky)  # this instance's (other tests' timers may fire)
    for b in range(3):
        assert commit_batch(store, b)
    buffered = store._buffer.take()["q1"]
    for batch in buffered[:1], buffered[1:2], buffered[2:]:  # three flushes in flight at once
        store._write_derived({"q1": batch}, background=True)
    store.settle()
    assert early == [] and written == [0, 1, 2]
    assert sorted(r["batch_id"] for r in rows(store, S.METRICS)) == [0, 1, 2]


def test_derived_rows_are_written_after_the_report_and_read_back_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows equal to the report's own go after the report (its commit carries the derived
    transaction); any read of the same store waits for them. Other callers' rows (not the
    report's) are written before the report, with no derived transaction."""
    order: list[str] = []
    real = DeltaStateStore._write_once

    def recording(self, name, query_id, batch_id, dataset, write, also=()):  # type: ignore[no-untyped-def]
        done = real(self, name, query_id, batch_id, dataset, write, also)
        order.append(name)
        return done

    monkeypatch.setattr(DeltaStateStore, "_write_once", recording)
    store = DeltaStateStore(str(tmp_path))
    assert commit_batch(store, 0)
    assert [r["batch_id"] for r in store.history("orders", "Size").to_pylist()] == [0]  # waits
    assert order.index(S.REPORTS) < order.index(S.METRICS)
    assert order.index(S.REPORTS) < order.index(S.RESULTS)
    reports = store.table(S.REPORTS)
    assert reports is not None and reports.transaction_version(derived_app_id("q1")) == 0
    order.clear()
    rep = report(
        "orders", "q1", 1, metrics=(ScopedMetric("batch", size_metric(1.0), analyzer_key=SIZE.key()),)
    )
    other = [replace(m, name="Other") for m in metric_records(rep)]
    assert store.commit("q1", 1, dataset="orders", states=[], metrics=other, results=[], report=rep)
    assert order == [S.METRICS, S.REPORTS]
    assert store.table(S.REPORTS).transaction_version(derived_app_id("q1")) == 0  # type: ignore[union-attr]


def test_load_states_returns_latest_per_key_and_drops_final_windows(tmp_path: Path) -> None:
    store = DeltaStateStore(str(tmp_path))
    w0, w1, w2 = window(0), window(1), window(2)
    commit_batch(
        store, 0, states=[size_record(3), size_record(3, "window", w0), mean_record(6.0, 3, "total")]
    )
    commit_batch(
        store, 1, states=[size_record(5), size_record(4, "window", w0), size_record(1, "window", w1)]
    )
    commit_batch(
        store,
        2,
        states=[size_record(9), size_record(5, "window", w0, final=True), size_record(4, "window", w2)],
    )
    commit_batch(store, 3, states=[size_record(11), size_record(2, "window", w2)], closed=(w1,))
    # another dataset in the same root does not leak in
    commit_batch(store, 0, query_id="q2", dataset="clicks", states=[size_record(100)])
    got = DeltaStateStore(str(tmp_path)).load_states("orders")
    assert got == {
        ("total", None, SIZE.state_key()): NumMatches(11),
        ("total", None, MEAN.state_key()): SumState(6.0, 3),
        ("window", w2.start, SIZE.state_key()): NumMatches(2),
    }
    assert store.load_states("clicks") == {("total", None, SIZE.state_key()): NumMatches(100)}
    assert store.load_states("nothing") == {}


def test_load_states_on_an_empty_root(tmp_path: Path) -> None:
    store = DeltaStateStore(str(tmp_path / "none"))
    assert store.load_states("orders") == {}
    assert store.load_detector_states("orders") == {}
    assert store.history("orders", "Size").num_rows == 0
    assert not store.exists()


def test_history_is_ordered_and_filtered(tmp_path: Path) -> None:
    store = DeltaStateStore(str(tmp_path))
    for b in range(6):
        w = window(b // 2)  # each window is updated by two batches
        metrics = (
            ScopedMetric("batch", size_metric(float(b)), analyzer_key=SIZE.key()),
            ScopedMetric("total", size_metric(float(10 * b)), analyzer_key=SIZE.key()),
            ScopedMetric("window", size_metric(float(100 + b)), window=w, analyzer_key=SIZE.key()),
        )
        commit_batch(store, b, rep=report("orders", "q1", b, metrics=metrics))
    # a batch written but never committed (crash before the report) stays invisible
    crashing = crashing_store(tmp_path, S.REPORTS)
    with pytest.raises(CrashAt):
        commit_batch(crashing, 6)
    batch = store.history("orders", "Size", scope="batch")
    assert batch.column("value").to_pylist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    times = batch.column("time").to_pylist()
    assert times == sorted(times)
    # windows: the latest value per window, ordered by window start
    win = store.history("orders", "Size", scope="window")
    assert win.column("value").to_pylist() == [101.0, 103.0, 105.0]
    assert win.column("window_start").to_pylist() == [window(i).start for i in range(3)]
    # time range [start, end) on the point time
    ranged = store.history(
        "orders", "Size", scope="batch", start=T0 + timedelta(seconds=5), end=T0 + timedelta(seconds=20)
    )
    assert ranged.column("batch_id").to_pylist() == [1, 2, 3]
    assert store.history("orders", "Size", instance="other").num_rows == 0
    assert store.history("orders", "Completeness").num_rows == 0
    everything = store.history("orders", "Size")
    assert everything.num_rows == 6 + 6 + 3
    with pytest.raises(ValueError, match="scope"):
        store.history("orders", "Size", scope="weekly")
    with pytest.raises(ValueError, match="timezone"):
        store.history("orders", "Size", start=T0.replace(tzinfo=None))


def test_distribution_metric_values_round_trip_as_json(tmp_path: Path) -> None:
    from streamdq.analyzers.metric import Metric

    store = DeltaStateStore(str(tmp_path))
    hist = {
        "number_of_bins": 2,
        "values": {"a": {"absolute": 3, "ratio": 0.75}, "b": {"absolute": 1, "ratio": 0.25}},
    }
    m = ScopedMetric("batch", Metric("Column", "Histogram", "country", value=hist))
    commit_batch(store, 0, rep=report("orders", "q1", 0, metrics=(m,)))
    got = store.history("orders", "Histogram").to_pylist()
    assert got[0]["value"] is None
    import json

    assert json.loads(got[0]["value_json"]) == hist


def test_merge_range_equals_the_state_of_the_union(tmp_path: Path) -> None:
    store = DeltaStateStore(str(tmp_path))
    # per-window raw values (amount; None = missing email) -> states
    data: dict[int, list[float | None]] = {0: [1.0, 2.0, None], 1: [4.0], 2: [None, 5.0, 6.0, 7.0], 3: [10.0]}

    def states(vals: list) -> tuple[NumMatches, NumMatchesAndCount, SumState]:
        present = [v for v in vals if v is not None]
        return (
            NumMatches(len(vals)),
            NumMatchesAndCount(len(present), len(vals), len(vals)),
            SumState(sum(present), len(present)),
        )

    for i, vals in data.items():
        sz, cp, mn = states(vals)
        w = window(i)
        records = [size_record(sz.matches, "window", w), complete_record(cp.matches, cp.count, w)]
        records.append(mean_record(mn.total, mn.n, "window", w))
        commit_batch(store, i, states=records)
    # window 0 is updated again by a later batch: the latest version counts, not both
    data[0] = data[0] + [3.0]
    sz, cp, mn = states(data[0])
    commit_batch(
        store,
        4,
        states=[
            size_record(sz.matches, "window", window(0)),
            mean_record(mn.total, mn.n, "window", window(0)),
        ],
    )
    commit_batch(store, 5, states=[complete_record(cp.matches, cp.count, window(0))])

    start, end = window(0).start, window(2).end  # windows 0, 1, 2
    union = data[0] + data[1] + data[2]
    expected = states(union)
    assert store.merge_range("orders", SIZE, start, end) == expected[0]
    assert store.merge_range("orders", COMPLETE, start, end) == expected[1]
    assert store.merge_range("orders", MEAN, start, end) == expected[2]
    mean = Mean("amount").metric(store.merge_range("orders", MEAN, start, end))
    present = [v for v in union if v is not None]
    assert mean.value == pytest.approx(sum(present) / len(present))
    # by state key and by spec JSON: the analyzer is rebuilt from the stored spec
    assert store.merge_range("orders", Completeness("email").state_key(), start, end) == expected[1]
    assert store.merge_range("orders", Size().key(), start, end) == expected[0]
    # windows only partly inside the range are left out; an empty range gives the empty state
    assert store.merge_range("orders", SIZE, start + timedelta(seconds=1), end) == NumMatches(1 + 4)
    assert store.merge_range("orders", SIZE, window(9).start, window(9).end) == NumMatches(0)
    with pytest.raises(LookupError):
        store.merge_range("orders", "no-such-key", start, end)
    with pytest.raises(ValueError, match="empty range"):
        store.merge_range("orders", SIZE, end, start)
    # the merge is the fold of the per-window states
    per_window = [store.merge_range("orders", SIZE, window(i).start, window(i).end) for i in range(3)]
    assert reduce(lambda a, b: a.merge(b), per_window) == expected[0]


def test_quarantine_appends_across_batches(tmp_path: Path) -> None:
    store = DeltaStateStore(str(tmp_path))
    commit_batch(store, 0, quarantine=quarantine(2))
    commit_batch(store, 1, quarantine=quarantine(3, start=2))
    commit_batch(store, 2)  # no bad records: nothing appended
    got = sorted(rows(store, S.QUARANTINE), key=lambda r: r["offset"])
    assert [r["offset"] for r in got] == [0, 1, 2, 3, 4]
    assert [r["batch_id"] for r in got] == [0, 0, 1, 1, 1]
    assert got[0]["raw"] == "{bad 0" and got[0]["reason"] == "undecodable json"
    assert got[0]["dataset"] == "orders" and got[0]["ingested_at"] is not None
    assert got[0]["file"] is None


def test_quarantine_with_unknown_columns_is_rejected_by_name(tmp_path: Path) -> None:
    store = DeltaStateStore(str(tmp_path))
    bad = quarantine(1).append_column("colour", pa.array(["red"]))
    with pytest.raises(ValueError, match="colour"):
        commit_batch(store, 0, quarantine=bad)


def test_detector_states_latest_per_key_and_rewound_when_uncommitted(tmp_path: Path) -> None:
    store = DeltaStateStore(str(tmp_path))
    d = lambda v, seq: DetectorStateRecord.from_json("c-size", "OnlineNormal", {"mean": v}, seq)  # noqa: E731
    commit_batch(
        store, 0, detector_states=[d(1.0, 0), DetectorStateRecord.from_json("k2", "Threshold", {}, 0)]
    )
    commit_batch(store, 1, detector_states=[d(2.0, 1)])
    got = store.load_detector_states("orders")
    assert set(got) == {"c-size", "k2"}
    assert (
        got["c-size"].json() == {"mean": 2.0} and got["c-size"].last_seq == 1 and got["c-size"].batch_id == 1
    )
    with pytest.raises(CrashAt):
        commit_batch(crashing_store(tmp_path, S.REPORTS), 2, detector_states=[d(3.0, 2)])
    assert store.load_detector_states("orders")["c-size"].json() == {"mean": 2.0}
    commit_batch(store, 2, detector_states=[d(3.0, 2)])
    assert store.load_detector_states("orders")["c-size"].json() == {"mean": 3.0}


def test_stale_snapshot_conflict_is_retried_and_skipped(tmp_path: Path) -> None:
    """Writer A checked the tables before writer B committed the same batch: A's write
    conflicts (same application transaction), A retries on a fresh snapshot and skips."""

    class Stale(DeltaStateStore):
        def _table(self, name, *, create=False, refresh=True):  # type: ignore[no-untyped-def]
            return super()._table(name, create=create, refresh=False)

    a = Stale(str(tmp_path))
    b = DeltaStateStore(str(tmp_path))
    commit_batch(b, 0)
    for name in S.COMMIT_ORDER:
        a.table(name, create=True)  # A caches snapshots now
    conflicts: list[str] = []
    real_fresh = a._fresh

    def fresh(name: str):  # type: ignore[no-untyped-def]
        conflicts.append(name)
        return real_fresh(name)

    a._fresh = fresh  # type: ignore[method-assign]
    assert commit_batch(b, 1) is True
    assert commit_batch(a, 1) is False
    assert S.STATES in conflicts
    b.settle()  # the kept metric and result rows, read out of band below
    for name in (S.STATES, S.METRICS, S.RESULTS, S.REPORTS):
        assert [r["batch_id"] for r in rows(b, name)].count(1) == 1, name


def test_concurrent_commits_from_threads(tmp_path: Path) -> None:
    stores = [DeltaStateStore(str(tmp_path)) for _ in range(3)]
    commit_batch(stores[0], 0)  # create the tables first
    barrier = threading.Barrier(3)
    outcomes: list[bool] = []
    errors: list[BaseException] = []

    def run(store: DeltaStateStore, dataset: str, query_id: str) -> None:
        barrier.wait()
        try:
            outcomes.append(commit_batch(store, 1, dataset=dataset, query_id=query_id))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [
        threading.Thread(target=run, args=(stores[0], "orders", "q1")),
        threading.Thread(target=run, args=(stores[1], "orders", "q1")),  # same batch twice
        threading.Thread(target=run, args=(stores[2], "clicks", "q9")),  # another query
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert sorted(outcomes) == [False, True, True]
    reports = [(r["query_id"], r["batch_id"]) for r in rows(stores[0], S.REPORTS)]
    assert sorted(reports) == [("q1", 0), ("q1", 1), ("q9", 1)]
    stores[0].settle()  # has every store instance on the root write its buffered rows
    metrics = [(r["query_id"], r["batch_id"]) for r in rows(stores[0], S.METRICS)]
    assert sorted(metrics) == [("q1", 0), ("q1", 1), ("q9", 1)]
    assert stores[0].load_states("orders") == {("total", None, SIZE.state_key()): NumMatches(1)}


class _PausingStore(DeltaStateStore):
    """Pauses (up to 2 s) after writing its states table, mid-commit."""

    def __init__(self, root: str, paused: threading.Event, resume: threading.Event) -> None:
        super().__init__(root, parallel_writes=False)
        self.paused, self.resume = paused, resume

    def _append(self, name: str, *args: object, **kw: object) -> bool:
        wrote = super()._append(name, *args, **kw)
        if name == S.STATES:
            self.paused.set()
            self.resume.wait(timeout=2.0)
        return wrote


def test_a_second_writer_of_a_batch_waits_for_the_first_to_finish(tmp_path: Path) -> None:
    """Without the per-query commit lock the second writer wins the tables the first has not
    reached yet, and both report True."""
    commit_batch(DeltaStateStore(str(tmp_path)), 0)
    paused, resume = threading.Event(), threading.Event()
    outcomes: dict[str, bool] = {}
    first = threading.Thread(
        target=lambda: outcomes.__setitem__(
            "first", commit_batch(_PausingStore(str(tmp_path), paused, resume), 1)
        )
    )
    second = threading.Thread(
        target=lambda: outcomes.__setitem__("second", commit_batch(DeltaStateStore(str(tmp_path)), 1))
    )
    first.start()
    assert paused.wait(timeout=30)
    second.start()
    second.join(timeout=1.0)
    resume.set()
    first.join()
    second.join()
    assert outcomes == {"first": True, "second": False}
    store = DeltaStateStore(str(tmp_path))
    for name in (S.STATES, S.METRICS, S.REPORTS):
        assert sorted(r["batch_id"] for r in rows(store, name)) == [0, 1], name


def test_maintenance_keeps_data_readable(tmp_path: Path) -> None:
    store = DeltaStateStore(
        str(tmp_path), checkpoint_every=4, compact_every=5, retention_hours=0, snapshot_every=4
    )
    for b in range(12):
        commit_batch(
            store,
            b,
            states=[size_record(b), size_record(b, "window", window(b // 3))],
            quarantine=quarantine(1, b),
        )
    log_files = {p.name for p in (tmp_path / S.STATES / "_delta_log").iterdir()}
    assert any(n.endswith(".checkpoint.parquet") for n in log_files)
    store.compact()
    store.checkpoint()
    removed = store.vacuum(0)
    assert removed[S.STATES_LATEST], "superseded states_latest files are vacuumed"
    fresh = DeltaStateStore(str(tmp_path))
    assert fresh.last_committed_batch("q1") == 11
    assert fresh.load_states("orders") == {
        ("total", None, SIZE.state_key()): NumMatches(11),
        ("window", window(3).start, SIZE.state_key()): NumMatches(11),
        ("window", window(2).start, SIZE.state_key()): NumMatches(8),
        ("window", window(1).start, SIZE.state_key()): NumMatches(5),
        ("window", window(0).start, SIZE.state_key()): NumMatches(2),
    }
    assert fresh.history("orders", "Size", scope="batch").column("batch_id").to_pylist() == list(range(12))
    assert len(rows(fresh, S.QUARANTINE)) == 12
    assert fresh.report("q1", 7) is not None
    assert fresh.merge_range("orders", Size(), window(0).start, window(4).end) == NumMatches(2 + 5 + 8 + 11)
    # and replays are still recognised after compaction
    assert commit_batch(fresh, 11) is False


def test_quoted_dataset_names_and_closed_windows_via_the_report(tmp_path: Path) -> None:
    store = DeltaStateStore(str(tmp_path))
    name = "o'rders"
    w0, w1 = window(0), window(1)
    commit_batch(store, 0, dataset=name, states=[size_record(1, "window", w0), size_record(1, "window", w1)])
    commit_batch(store, 0, dataset="other", query_id="q2", states=[size_record(7, "window", w0)])
    # batch 1 closes w0 without sending its state again: the report lists it
    commit_batch(store, 1, dataset=name, states=[size_record(2)], closed=(w0,))
    assert store.load_states(name) == {
        ("total", None, SIZE.state_key()): NumMatches(2),
        ("window", w1.start, SIZE.state_key()): NumMatches(1),
    }
    assert store.load_states("other") == {("window", w0.start, SIZE.state_key()): NumMatches(7)}
    assert [r["batch_id"] for r in store.history(name, "Size").to_pylist()] == [0, 1]


def test_maintain_compacts_and_vacuums(tmp_path: Path) -> None:
    store = DeltaStateStore(str(tmp_path), derived_delay=0)  # one metrics file per batch
    for b in range(4):
        commit_batch(store, b)
    files_before = len(DeltaTable(store.path(S.METRICS)).file_uris())
    store.maintain(retention_hours=0)
    assert len(DeltaTable(store.path(S.METRICS)).file_uris()) < files_before
    assert store.history("orders", "Size").num_rows == 4


def test_spark_reads_the_tables_through_arrow(tmp_path: Path, spark) -> None:  # type: ignore[no-untyped-def]
    """The docs/state.md recipe for clusters without the Delta jars: deltalake -> Arrow -> Spark."""
    store = DeltaStateStore(str(tmp_path))
    for b in range(3):
        commit_batch(store, b, states=[size_record(b + 1)])
    store.close()  # the writer is done (its last batch's metrics rows are written after its report)
    metrics = spark.createDataFrame(DeltaTable(store.path(S.METRICS)).to_pyarrow_table())
    got = metrics.where("name = 'Size' AND scope = 'batch'").orderBy("batch_id").select("value").collect()
    assert [r.value for r in got] == [0.0, 1.0, 2.0]
    states = spark.createDataFrame(DeltaTable(store.path(S.STATES)).to_pyarrow_table())
    assert states.schema["state"].dataType.typeName() == "binary"
    assert states.count() == 3


def test_store_satisfies_the_protocol(tmp_path: Path) -> None:
    from streamdq.state import StateStore

    assert isinstance(DeltaStateStore(str(tmp_path)), StateStore)


def test_the_streaming_handler_commits_restores_and_replays_through_the_store(tmp_path: Path, spark) -> None:  # type: ignore[no-untyped-def]
    """End to end with the engine's foreachBatch handler on static frames: a restarted
    handler restores totals and open windows from the store; a replayed batch re-emits
    the stored report; a crash inside commit is repaired and never double counts."""
    from datetime import datetime

    from streamdq.checks.check import Check, Level
    from streamdq.engine.handler import BatchHandler, BatchJudge

    schema = "ts timestamp, name string, x double"
    checks = [Check(Level.ERROR, "orders").is_complete("name").has_size(">= 1", scope="total")]

    def handler(store: DeltaStateStore) -> BatchHandler:
        return BatchHandler(
            dataset="orders",
            query_id="q1",
            judge=BatchJudge(checks),
            window_seconds=60,
            watermark_seconds=10,
            event_time="ts",
            store=store,
        )

    def t(m: int, s: int = 0) -> datetime:
        return datetime(2026, 1, 1, 12, m, s)

    def total_size(rep) -> float:  # type: ignore[no-untyped-def]
        return next(m.metric.value for m in rep.metrics if m.scope == "total" and m.metric.name == "Size")

    b0 = spark.createDataFrame([(t(0, 5), "a", 1.0), (t(0, 30), None, 2.0)], schema)
    b1 = spark.createDataFrame([(t(0, 40), "c", 3.0)], schema)
    b2 = spark.createDataFrame([(t(1, 20), "d", 4.0), (t(1, 30), "e", 5.0)], schema)
    first = handler(DeltaStateStore(str(tmp_path)))
    r0 = first.handle(b0, 0)
    assert total_size(r0) == 2.0
    # batch 1 crashes right before its report is written
    with pytest.raises(CrashAt):
        handler(crashing_store(tmp_path, S.REPORTS)).handle(b1, 1)
    # restart: batch 0 is replayed by Spark (stored report re-emitted), then batch 1 is recomputed
    restarted = handler(DeltaStateStore(str(tmp_path)))
    replay = restarted.handle(b0, 0)
    assert replay.replayed and replay.batch_id == 0 and total_size(replay) == 2.0
    r1 = restarted.handle(b1, 1)
    assert total_size(r1) == 3.0  # not 4: the uncommitted first attempt is not counted
    r2 = restarted.handle(b2, 2)
    assert total_size(r2) == 5.0
    assert [w.start.replace(tzinfo=None) for w in r2.closed_windows] == [t(0)]
    store = DeltaStateStore(str(tmp_path))
    assert store.last_committed_batch("q1") == 2
    t0, t1, t2 = (t(m).replace(tzinfo=UTC) for m in range(3))
    assert store.merge_range("orders", Size(), t0, t1) == NumMatches(3)  # the closed 12:00 window
    assert store.merge_range("orders", Size(), t0, t2) == NumMatches(5)  # plus the open 12:01 window
    store.settle()  # the handler's kept metric rows, read out of band below
    keys = [
        (r["batch_id"], r["scope"], r["window_start"]) for r in rows(store, S.METRICS) if r["name"] == "Size"
    ]
    assert len(keys) == len(set(keys)), "no duplicate (batch, scope, window) metric rows"
    assert {k[0] for k in keys} == {0, 1, 2}
