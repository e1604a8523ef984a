"""Measures committed with their batches are read back by (dataset, name), oldest first, with
their exact JSON types, from the in-memory store and from real Delta tables (delta-rs)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from streamdq.state import InMemoryStateStore
from streamdq.state.delta_store import DeltaStateStore
from streamdq.state.measure_history import measure_history, measure_series
from streamdq.state.records import records_for_batch

from streamdq.measure_result import MeasureResult
from streamdq.report import BatchReport, Window

T0 = datetime(2024, 1, 1, tzinfo=UTC)


def _commit(store: Any, batch_id: int, measures: tuple[MeasureResult, ...], dataset: str = "orders") -> None:
    report = BatchReport(dataset, "q1", batch_id, T0 + timedelta(minutes=batch_id), measures=measures)
    records = records_for_batch(report, total={}, open_windows={})
    store.commit(
        "q1",
        batch_id,
        dataset=dataset,
        states=records.states,
        metrics=records.metrics,
        results=records.results,
        report=report,
    )


def _batches(store: Any) -> None:
    w = Window(T0, T0 + timedelta(hours=1))
    label = (w.start.isoformat(), w.end.isoformat())
    for b, nulls in enumerate([3, 0, 5, 2]):
        _commit(
            store,
            b,
            (
                MeasureResult("Null Count", "single_value", nulls),
                MeasureResult("counts", "map", {"c": 10 + b, "cd": 4}),
                MeasureResult("pair", "list", (b, 2.5)),
                MeasureResult("Null Count", "single_value", 10 + b, scope="total"),
            ),
        )
    _commit(
        store,
        4,
        (
            MeasureResult(
                "Null Count", "single_value", None, failure="measure 'Null Count': Spark SQL failed"
            ),
            MeasureResult("Null Count", "single_value", 7, scope="window", window=label),
        ),
    )
    _commit(store, 5, (MeasureResult("Null Count", "single_value", 99),), dataset="other")


@pytest.fixture(params=["memory", "delta"])
def store(request: Any, tmp_path: Any) -> Any:
    s = InMemoryStateStore() if request.param == "memory" else DeltaStateStore(str(tmp_path / "state"))
    _batches(s)
    return s


def test_the_last_n_values_of_a_measure_oldest_first_skipping_failed_points(store: Any) -> None:
    assert measure_history(store, "orders", "Null Count", 30) == [3, 0, 5, 2]
    assert measure_history(store, "orders", "Null Count", 2) == [5, 2]
    assert all(type(v) is int for v in measure_history(store, "orders", "Null Count", 30))
    assert measure_history(store, "orders", "Null Count", 0) == []


def test_other_scopes_datasets_and_result_types(store: Any) -> None:
    assert measure_history(store, "orders", "Null Count", 5, scope="total") == [10, 11, 12, 13]
    assert measure_history(store, "orders", "Null Count", 5, scope="window") == [7]
    assert measure_history(store, "other", "Null Count", 5) == [99]
    assert measure_history(store, "orders", "counts", 1) == [{"c": 13, "cd": 4}]
    assert measure_history(store, "orders", "pair", 2) == [[2, 2.5], [3, 2.5]]
    assert measure_history(store, "orders", "no such measure", 5) == []


def test_the_series_keeps_failures_batches_and_times(store: Any) -> None:
    points = measure_series(store, "orders", "Null Count")
    assert [p.batch_id for p in points] == [0, 1, 2, 3, 4]
    assert points[-1].value is None and "Spark SQL failed" in (points[-1].failure or "")
    assert points[0].time == T0 and points[0].result_type == "single_value"
    window = measure_series(store, "orders", "Null Count", scope="window")
    assert window[0].window_start == T0 and window[0].window_end == T0 + timedelta(hours=1)
