"""The handler's stages on the in-memory state store: path choice, empty batches, replay,
restore, late rows and closing windows, and the two paths giving the same reports."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from streamdq.state import InMemoryStateStore

from streamdq.analyzers import Completeness, Size
from streamdq.analyzers.basic_states import NumMatches
from streamdq.checks.check import Check, Level
from streamdq.engine.batch_size import BatchSizer, RowEstimate, reads_nothing
from streamdq.engine.handler import BatchHandler
from streamdq.engine.judge import BatchJudge
from streamdq.engine.plan import count_jobs
from streamdq.engine.scopes import ScopeStates
from streamdq.engine.stages import BatchStates

SCHEMA = "ts timestamp, name string, x double, _streamdq_error string, _streamdq_raw string"


def _t(minute: int, second: int = 0) -> datetime:
    return datetime(2026, 1, 1, 12, minute, second)


def _checks() -> list[Any]:
    return [
        Check(Level.ERROR, "c")
        .is_complete("name")
        .has_mean("x", "<= 100")
        .is_unique("name")
        .has_approx_quantile("x", 0.5, ">= 0")
        .has_size(">= 1", scope="window")
    ]


def _handler(store: Any, *, small_batch_rows: int = 250_000, query_id: str = "q1", **kw: Any) -> BatchHandler:
    """The stage tests' handler; ``kw`` goes to ``BatchHandler`` as well (sinks, pipelined)."""
    return BatchHandler(
        dataset="orders",
        query_id=query_id,
        judge=BatchJudge(_checks()),
        window_seconds=60,
        watermark_seconds=10,
        event_time="ts",
        store=store,
        small_batch_rows=small_batch_rows,
        # frames made from Python lists carry no size statistics: the cap of a Kafka source
        # (max_records_per_trigger) is what bounds such a batch
        rows_cap=1000,
        **kw,
    )


def _values(report: Any) -> dict[tuple[Any, ...], Any]:
    return {
        (m.scope, m.metric.name, m.metric.instance, m.window.start if m.window else None): m.metric.value
        for m in report.metrics
    }


def _rows(minute: int, n: int, bad: int = 0) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = [(_t(minute, i), f"n{minute}-{i}", float(i), None, None) for i in range(n)]
    out += [(_t(minute, 0), None, None, "undecodable JSON", "{oops") for _ in range(bad)]
    return out


def test_small_batches_take_the_one_job_path_and_match_the_fused_path(spark: Any) -> None:
    batches = [_rows(0, 5, bad=1), _rows(1, 20), _rows(0, 2) + _rows(3, 3)]  # the last: late rows
    reports = {}
    for label, small in (("arrow", 250_000), ("fused", 0)):
        handler = _handler(InMemoryStateStore(), small_batch_rows=small)
        reports[label] = [
            handler.handle(spark.createDataFrame(rows, SCHEMA), i) for i, rows in enumerate(batches)
        ]
    for arrow, fused in zip(reports["arrow"], reports["fused"], strict=True):
        assert arrow.counters["arrow_path"] == 1 and fused.counters["arrow_path"] == 0
        assert arrow.counters["spark_jobs"] == 1
        assert _values(arrow) == pytest.approx(_values(fused))
        for key in ("input_rows", "bad_rows", "late_rows", "quarantined_rows"):
            assert arrow.counters.get(key) == fused.counters.get(key), key
        assert [c.status for c in arrow.check_results] == [c.status for c in fused.check_results]
    assert reports["arrow"][0].counters["quarantined_rows"] == 1  # the bad row
    assert reports["arrow"][2].counters["late_rows"] == 2  # 12:00 closed by the 12:01 batch


def test_quarantined_rows_are_the_same_on_both_paths(spark: Any) -> None:
    stores = {"arrow": InMemoryStateStore(), "fused": InMemoryStateStore()}
    for label, small in (("arrow", 250_000), ("fused", 0)):
        handler = _handler(stores[label], small_batch_rows=small)
        handler.handle(spark.createDataFrame(_rows(0, 3, bad=2), SCHEMA), 0)
        handler.handle(spark.createDataFrame(_rows(2, 20), SCHEMA), 1)
        handler.handle(spark.createDataFrame(_rows(0, 1), SCHEMA), 2)  # late
    rows = {
        k: sorted((r["batch_id"], r["reason"], r["raw"]) for r in s.table("quarantine").to_pylist())
        for k, s in stores.items()
    }
    assert rows["arrow"] == rows["fused"]
    assert [r[1] for r in rows["arrow"]] == [
        "undecodable JSON",
        "undecodable JSON",
        "late: event time behind the watermark",
    ]


def test_an_empty_microbatch_runs_no_job_and_commits_its_report(spark: Any, tmp_path: Path) -> None:
    store = InMemoryStateStore()
    handler = _handler(store)
    handler.handle(spark.createDataFrame(_rows(0, 3), SCHEMA), 0)
    (tmp_path / "empty.json").touch()
    empty = spark.read.schema(SCHEMA).json(str(tmp_path))  # what a file source's empty file gives
    state_rows = store.table("states").num_rows
    with count_jobs(spark) as jobs:
        report = handler.handle(empty, 1)
    assert jobs[0] == 0
    assert report.counters["spark_jobs"] == 0 and report.counters["input_rows"] == 0
    assert store.last_committed_batch("q1") == 1
    assert _values(report)[("total", "Size", "*", None)] == 3.0
    assert not [r for r in report.check_results if any(c.scope == "batch" for c in r.constraint_results)]
    # it changed no running state: none is sent again, and a restart still restores them all
    assert store.table("states").num_rows == state_rows
    restarted = _handler(store)
    later = restarted.handle(spark.createDataFrame(_rows(0, 2), SCHEMA), 2)
    assert _values(later)[("total", "Size", "*", None)] == 5.0
    assert _values(later)[("window", "Size", "*", datetime(2026, 1, 1, 12, 0, tzinfo=UTC))] == 5.0


def test_replay_is_not_counted_twice_and_restore_continues(spark: Any) -> None:
    store = InMemoryStateStore()
    first = _handler(store)
    first.handle(spark.createDataFrame(_rows(0, 4), SCHEMA), 0)
    replayed = first.handle(spark.createDataFrame(_rows(0, 4), SCHEMA), 0)
    assert _values(replayed)[("total", "Size", "*", None)] == 4.0
    # a restarted driver: a new handler on the same store picks up totals, windows, watermark
    second = _handler(store)
    again = second.handle(spark.createDataFrame(_rows(0, 4), SCHEMA), 0)  # Spark replays batch 0
    assert _values(again)[("total", "Size", "*", None)] == 4.0
    report = second.handle(spark.createDataFrame(_rows(1, 2), SCHEMA), 1)
    assert _values(report)[("total", "Size", "*", None)] == 6.0
    assert second.watermark == datetime(2026, 1, 1, 12, 0, 51, tzinfo=UTC)
    # window 12:00 closes when the watermark passes 12:01:00, with its 4 rows exactly
    closing = second.handle(spark.createDataFrame(_rows(2, 1), SCHEMA), 2)
    assert [w.start for w in closing.closed_windows] == [datetime(2026, 1, 1, 12, 0, tzinfo=UTC)]
    assert _values(closing)[("window", "Size", "*", closing.closed_windows[0].start)] == 4.0


def test_scope_stage_counts_late_rows_and_closes_windows_oldest_first() -> None:
    scopes = ScopeStates(timedelta(minutes=1), watermark_delay=timedelta(seconds=10))
    t = [datetime(2026, 1, 1, 12, m, tzinfo=UTC) for m in range(4)]
    one = {Size().state_key(): NumMatches(1)}
    u0 = scopes.advance(BatchStates(batch=one, windows={t[0]: one, t[1]: one}, event_time_max=t[1]))
    assert u0.touched == (t[0], t[1]) and not u0.closed
    u1 = scopes.advance(
        BatchStates(batch=one, windows={t[3]: one}, event_time_max=t[3] + timedelta(seconds=20))
    )
    assert [w.start for w, _ in u1.closed] == [t[0], t[1]]
    assert u1.watermark == t[3] + timedelta(seconds=10)
    u2 = scopes.advance(
        BatchStates(batch=one, windows={t[1]: one}, window_rows={t[1]: 7}, event_time_max=t[1])
    )
    assert u2.late == (t[1],) and u2.late_rows == 7 and not u2.touched
    assert u2.watermark == u1.watermark  # never goes back
    assert scopes.total[Size().state_key()] == NumMatches(3)


def test_sizer_learns_bytes_per_row_and_respects_the_threshold() -> None:
    sizer = BatchSizer(small_batch_rows=1000)
    estimate = RowEstimate(rows=2500, size_bytes=100_000, source="plan statistics")
    assert sizer.choose(estimate) == "fused"
    sizer.learn(estimate, 500)  # 200 bytes per row seen
    assert sizer.bytes_per_row == 200.0
    assert sizer.choose(RowEstimate(rows=500)) == "arrow"
    assert BatchSizer(small_batch_rows=0).choose(RowEstimate(rows=1)) == "fused"
    with pytest.raises(ValueError):
        BatchSizer(small_batch_rows=-1)


def test_a_microbatch_over_an_rdd_without_partitions_reads_nothing(spark: Any) -> None:
    """foreachBatch hands a batch over as a LogicalRDD: no partitions means no rows, a planner
    fact found without a job."""
    empty = spark.createDataFrame(spark.sparkContext.emptyRDD(), SCHEMA)
    execution = empty._jdf.queryExecution()
    assert execution.analyzed().getClass().getSimpleName() == "LogicalRDD"
    assert reads_nothing(execution)
    rows = spark.createDataFrame(spark.sparkContext.parallelize(_rows(0, 2), 1), SCHEMA)
    assert not reads_nothing(rows._jdf.queryExecution())


def test_completeness_metric_counts_only_good_rows(spark: Any) -> None:
    handler = _handler(InMemoryStateStore())
    report = handler.handle(spark.createDataFrame(_rows(0, 2, bad=3), SCHEMA), 0)
    assert report.counters["bad_rows"] == 3
    assert _values(report)[("batch", "Completeness", "name", None)] == 1.0
    assert Completeness("name") in handler.analyzers
