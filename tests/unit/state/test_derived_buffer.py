"""DerivedBuffer: committed batches' report-derived rows kept until due (no Delta, no Spark)."""

from __future__ import annotations

import threading

import pytest
from streamdq.state import schemas as S
from streamdq.state.derived_buffer import DerivedBuffer, PendingBatch, table_rows
from streamdq.state.records import metric_records, result_records

from streamdq.report import ScopedMetric
from tests.unit.state.state_testkit import SIZE, report, size_metric


def pending(
    batch_id: int, query_id: str = "q1", *, results: bool = True, dataset: str = "orders"
) -> PendingBatch:
    rep = report(
        dataset,
        query_id,
        batch_id,
        metrics=(ScopedMetric("batch", size_metric(float(batch_id)), analyzer_key=SIZE.key()),),
    )
    return PendingBatch(rep, tuple(metric_records(rep)), tuple(result_records(rep)) if results else ())


def test_a_zero_delay_makes_every_batch_due() -> None:
    buffer = DerivedBuffer(delay=0.0, on_due=lambda: None)
    assert buffer.add("q1", pending(0)) is True
    assert [b.batch_id for b in buffer.take()["q1"]] == [0]
    assert buffer.take() == {} and buffer.pending() == 0


def test_batches_wait_until_the_oldest_is_due_and_come_out_per_query_oldest_first() -> None:
    buffer = DerivedBuffer(delay=60.0, on_due=lambda: None)
    try:
        assert not any(buffer.add(q, pending(i, q)) for i, q in [(0, "q1"), (1, "q1"), (0, "q2")])
        assert buffer.pending() == 3
        assert [b.batch_id for b in buffer.peek("q1")] == [0, 1]
        assert [b.batch_id for b in buffer.take("q1")["q1"]] == [0, 1]  # one query only
        assert buffer.pending() == 1
        assert list(buffer.take()) == ["q2"]
    finally:
        buffer.cancel()


def test_taking_one_dataset_takes_every_query_keeping_rows_of_it_whole() -> None:
    buffer = DerivedBuffer(delay=60.0, on_due=lambda: None)
    try:
        buffer.add("mine", pending(0, "mine"))
        buffer.add("other", pending(0, "other", dataset="customers"))
        buffer.add("other", pending(1, "other", dataset="customers"))
        assert buffer.take(dataset="payments") == {}
        taken = buffer.take(dataset="customers")
        assert {q: [b.batch_id for b in v] for q, v in taken.items()} == {"other": [0, 1]}
        assert [b.batch_id for b in buffer.peek("mine")] == [0]  # the other dataset's stay kept
    finally:
        buffer.cancel()


def test_an_idle_buffer_is_handed_over_by_its_timer() -> None:
    fired = threading.Event()
    buffer = DerivedBuffer(delay=0.05, on_due=fired.set)
    assert buffer.add("q1", pending(0)) is False
    assert fired.wait(10), "the idle timer never handed the buffer over"
    assert buffer.pending() == 1  # the owner takes it


def test_a_buffer_taken_before_its_timer_cancels_it() -> None:
    fired = threading.Event()
    buffer = DerivedBuffer(delay=0.2, on_due=fired.set)
    buffer.add("q1", pending(0))
    buffer.take()
    assert not fired.wait(0.6)


def test_table_rows_concatenate_the_batches_with_the_newest_that_has_rows() -> None:
    batches = [pending(0), pending(1), pending(2, results=False)]
    metrics = table_rows(S.METRICS, batches)
    assert metrics is not None and metrics.last_batch == 2
    assert metrics.rows.column("batch_id").to_pylist() == [0, 1, 2]
    results = table_rows(S.RESULTS, batches)
    assert results is not None and results.last_batch == 1  # batch 2 has no result rows
    assert table_rows(S.RESULTS, [pending(3, results=False)]) is None


def test_a_negative_delay_is_refused() -> None:
    with pytest.raises(ValueError, match="delay"):
        DerivedBuffer(delay=-1.0, on_due=lambda: None)
