"""BatchJudge with expressions: the scope's metrics and measures, history prefetched from a
state store (InMemoryStateStore, the StateStore contract), and one document per judgement."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from streamdq.state.memory_store import InMemoryStateStore
from streamdq.state.records import records_for_batch

from streamdq.checks import Check, Level
from streamdq.checks.expression import HistoryRef
from streamdq.checks.kinds import make
from streamdq.checks.pass_policy import PassPolicy
from streamdq.engine.expression_history import ExpressionHistory, row_metric_key
from streamdq.engine.judge import BatchJudge
from streamdq.measure_result import MeasureResult
from streamdq.report import BatchReport, ScopedMetric, Window

T0 = datetime(2026, 11, 26, 12, 0, tzinfo=UTC)
SIZE = make("Size")
COMPLETE = make("Completeness", column="email")


def commit(
    store: InMemoryStateStore, batch_id: int, rows: float, nulls: int, *, dataset: str = "orders"
) -> None:
    report = BatchReport(
        dataset=dataset,
        query_id="q",
        batch_id=batch_id,
        processing_time=T0 + timedelta(minutes=batch_id),
        metrics=(
            ScopedMetric("batch", SIZE.ok(rows), analyzer_key=SIZE.key()),
            ScopedMetric("batch", COMPLETE.ok(0.9), analyzer_key=COMPLETE.key()),
        ),
        measures=(MeasureResult("Null Count", "single_value", nulls),),
    )
    records = records_for_batch(report, total={}, open_windows={})
    store.commit(
        "q",
        batch_id,
        dataset=dataset,
        states=records.states,
        metrics=records.metrics,
        results=records.results,
        report=report,
    )


def test_history_of_measures_and_metrics_is_read_from_the_store_oldest_first():
    store = InMemoryStateStore()
    for b, (rows, nulls) in enumerate([(10.0, 0), (12.0, 1), (11.0, 4)]):
        commit(store, b, rows, nulls)
    check = Check(Level.ERROR, "c").expression(
        "x",
        'previous_values("Null Count", 2) == [1, 4] && previous("Size") == 11 '
        '&& previous_values("Completeness(email)", 5).all(v, v == 0.9) && previous("other", "Size") == null',
    )
    history = ExpressionHistory(store, "orders", [check], ["Null Count"])
    fetched = history.prefetch("batch")
    assert fetched == {
        HistoryRef(None, "Null Count", 2): [1, 4],
        HistoryRef(None, "Size", 1): [11.0],
        HistoryRef(None, "Completeness(email)", 5): [0.9, 0.9, 0.9],
        HistoryRef("other", "Size", 1): [],
    }
    assert history.prefetch("window") == {}  # no expression at window scope
    judge = BatchJudge([check], dataset="orders", history=history)
    (result,), _ = judge.evaluate({SIZE: SIZE.ok(3.0)}, "batch")
    assert result.status == "Success", result.constraint_results[0].message
    commit(store, 3, 5.0, 9, dataset="other")  # another dataset's history, by name
    assert ExpressionHistory(store, "orders", [check], ["Null Count"]).prefetch("batch")[
        HistoryRef("other", "Size", 1)
    ] == [5.0]


def test_stored_rows_are_keyed_like_the_expressions():
    assert row_metric_key("Size", "*", SIZE.key()) == "Size"
    assert row_metric_key("Completeness", "email", COMPLETE.key()) == "Completeness(email)"
    assert row_metric_key("InputRows", "*", "") == "InputRows"


def test_each_scope_judges_its_own_metrics_and_measures_into_its_own_document():
    checks = [
        Check(Level.ERROR, "volume")
        .expression("batch big", 'metrics["Size"] >= 10 && measures["rows"] == 10', scope="batch")
        .expression("window big", 'metrics["Size"] >= 100 && measures["rows"] == 100', scope="window"),
    ]
    judge = BatchJudge(checks, dataset="orders", pass_policy=PassPolicy("all"))
    window = Window(T0, T0 + timedelta(hours=1))
    batch_measures = [MeasureResult("rows", "single_value", 10)]
    window_measures = [MeasureResult("rows", "single_value", 50, scope="window")]
    batch, _ = judge.evaluate({SIZE: SIZE.ok(10.0)}, "batch", measures=batch_measures)
    windowed, _ = judge.evaluate({SIZE: SIZE.ok(50.0)}, "window", window, measures=window_measures)
    batch_doc = judge.document("batch", batch, batch_measures)
    window_doc = judge.document("window", windowed, window_measures, window)
    assert batch_doc is not None and window_doc is not None
    assert batch_doc.to_dict() == {"measure": {"rows": 10}, "check": {"batch big": True}, "pass": True}
    assert window_doc.to_dict() == {"measure": {"rows": 50}, "check": {"window big": False}, "pass": False}
    assert window_doc.window == (window.start.isoformat(), window.end.isoformat())
    assert judge.document("total", [], []) is None  # nothing judged at total scope


def test_this_datasets_history_is_read_once_then_kept_by_each_judgement():
    store = InMemoryStateStore()
    for b, nulls in enumerate([1, 2, 3]):
        commit(store, b, 10.0, nulls)
    check = Check(Level.ERROR, "c").expression("x", 'previous_values("Null Count", 3).all(v, v < 5)')
    history = ExpressionHistory(store, "orders", [check], ["Null Count"])
    judge = BatchJudge([check], dataset="orders", history=history)
    ref = HistoryRef(None, "Null Count", 3)
    (result,), _ = judge.evaluate({}, "batch", measures=[MeasureResult("Null Count", "single_value", 7)])
    assert result.status == "Success"  # the batch being judged is not its own history
    # the judged value joins the kept series; the store is not read again (a commit it was
    # not told about does not show, the recorded one does)
    commit(store, 3, 10.0, 99)
    assert history.prefetch("batch") == {ref: [2, 3, 7]}
    (result,), _ = judge.evaluate({}, "batch", measures=[MeasureResult("Null Count", "single_value", 0)])
    assert result.status == "Error" and "the expression is false" in (
        result.constraint_results[0].message or ""
    )
    # a new job (a restart) reads the store afresh
    assert ExpressionHistory(store, "orders", [check], ["Null Count"]).prefetch("batch") == {ref: [2, 3, 99]}


def test_a_measure_that_exists_per_batch_only_says_so_at_window_scope():
    check = Check(Level.ERROR, "c").expression("w", 'measures["distinct ids"] > 0', scope="window")
    judge = BatchJudge([check], dataset="orders", measure_names=["distinct ids"])
    window = Window(T0, T0 + timedelta(hours=1))
    (result,), _ = judge.evaluate({}, "window", window, measures=[])
    message = result.constraint_results[0].message or ""
    assert "'distinct ids' has no value: the measure has no value at window scope" in message
