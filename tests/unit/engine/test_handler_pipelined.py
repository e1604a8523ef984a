"""The pipelined handler (``BatchHandler(pipelined=True)``) on the in-memory state store:
``foreachBatch`` returns once the batch is computed, its judge/commit/emit run after, in batch
order; the same reports and stored rows as the inline handler; a failed tail is raised by the
next batch, naming the batch, which a new handler then commits exactly once."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from streamdq.state import InMemoryStateStore

from streamdq.engine.handler import BatchHandler
from streamdq.engine.pipeline import PipelinedBatchFailed
from tests.unit.engine.test_handler_stages import SCHEMA, _rows, _values
from tests.unit.engine.test_handler_stages import _handler as stage_handler


class _Collect:
    def __init__(self) -> None:
        self.reports: list[Any] = []

    def emit(self, report: Any, alerts: Any) -> None:
        self.reports.append(report)

    def close(self) -> None:
        pass


class _HeldStore(InMemoryStateStore):
    """An in-memory store whose commit of ``hold`` waits until ``release`` is set."""

    def __init__(self, hold: int) -> None:
        super().__init__()
        self.hold = hold
        self.release = threading.Event()
        self.entered = threading.Event()

    def commit(self, query_id: str, batch_id: int, **kw: Any) -> bool:
        if batch_id == self.hold:
            self.entered.set()
            assert self.release.wait(60)
        return super().commit(query_id, batch_id, **kw)


def _handler(store: Any, sink: _Collect, *, pipelined: bool) -> BatchHandler:
    return stage_handler(store, sinks=[sink], pipelined=pipelined)


BATCHES = [_rows(0, 5, bad=1), _rows(1, 20), _rows(0, 2) + _rows(3, 3), [], _rows(4, 7)]


def test_pipelined_gives_the_inline_reports_and_rows(spark: Any) -> None:
    out = {}
    for pipelined in (False, True):
        store, sink = InMemoryStateStore(), _Collect()
        handler = _handler(store, sink, pipelined=pipelined)
        for i, rows in enumerate(BATCHES):
            handler(spark.createDataFrame(rows, SCHEMA), i)
        handler.finish_pending()
        out[pipelined] = (store, sink.reports)
    (inline_store, inline), (piped_store, piped) = out[False], out[True]
    assert [r.batch_id for r in piped] == [0, 1, 2, 3, 4]
    for a, b in zip(inline, piped, strict=True):
        assert _values(a) == pytest.approx(_values(b))
        assert a.counters == b.counters
        assert [c.status for c in a.check_results] == [c.status for c in b.check_results]
    assert "tail" in piped[1].timings and "tail" not in inline[1].timings
    assert piped_store.last_committed_batch("q1") == 4
    for table in ("states", "metrics", "results", "quarantine"):
        assert piped_store.table(table).num_rows == inline_store.table(table).num_rows, table


def test_foreach_batch_returns_before_the_commit_and_the_next_batch_waits(spark: Any) -> None:
    store, sink = _HeldStore(hold=1), _Collect()
    handler = _handler(store, sink, pipelined=True)
    handler(spark.createDataFrame(_rows(0, 3), SCHEMA), 0)
    # the query's first batch is committed before foreachBatch returns
    assert store.last_committed_batch("q1") == 0 and handler.pipeline.pending is None
    handler(spark.createDataFrame(_rows(1, 4), SCHEMA), 1)
    assert store.entered.wait(60)
    # returned while batch 1's commit is held: not stored, not emitted yet
    assert handler.pipeline.pending == 1
    assert store.last_committed_batch("q1") == 0 and [r.batch_id for r in sink.reports] == [0]
    nxt = threading.Thread(target=handler, args=(spark.createDataFrame(_rows(2, 2), SCHEMA), 2))
    nxt.start()
    nxt.join(1.0)
    assert nxt.is_alive()  # batch 2 waits for batch 1's tail before it computes
    store.release.set()
    nxt.join(60)
    report = handler.finish_pending()
    assert report is not None and report.batch_id == 2
    assert [r.batch_id for r in sink.reports] == [0, 1, 2]
    assert _values(report)[("total", "Size", "*", None)] == 9.0


def test_a_failed_tail_is_raised_by_the_next_batch_and_committed_once_by_a_new_handler(spark: Any) -> None:
    store, sink = InMemoryStateStore(), _Collect()
    handler = _handler(store, sink, pipelined=True)
    frames = [spark.createDataFrame(rows, SCHEMA) for rows in (_rows(0, 3), _rows(1, 4), _rows(2, 5))]
    handler(frames[0], 0)
    store.crash_before_report()  # batch 1's commit raises, after its foreachBatch returned
    handler(frames[1], 1)
    with pytest.raises(PipelinedBatchFailed) as failed:
        handler(frames[2], 2)
    assert failed.value.batch_id == 1 and isinstance(failed.value.__cause__, RuntimeError)
    assert store.last_committed_batch("q1") == 0
    # the restarted query (its checkpoint rewound to the store) runs batch 1 again, then 2
    restarted = _handler(store, sink, pipelined=True)
    restarted(frames[1], 1)
    restarted(frames[2], 2)
    last = restarted.finish_pending()
    assert last is not None and _values(last)[("total", "Size", "*", None)] == 12.0
    assert store.last_committed_batch("q1") == 2
    assert sorted(r["batch_id"] for r in store.table("reports").to_pylist()) == [0, 1, 2]
