"""The foreachBatch handler on static frames: scopes, windows, watermark, late and bad rows."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from streamdq import analyze
from streamdq.analyzers import Completeness, Mean, Size
from streamdq.checks.check import Check, Level
from streamdq.engine.handler import BatchHandler
from streamdq.engine.judge import BatchJudge

SCHEMA = "ts timestamp, name string, x double, _streamdq_error string"


def _t(minute: int, second: int = 0) -> datetime:
    return datetime(2026, 1, 1, 12, minute, second)


def _handler(checks):
    return BatchHandler(
        dataset="orders",
        query_id="q1",
        judge=BatchJudge(checks),
        window_seconds=60,
        watermark_seconds=10,
        event_time="ts",
    )


def _metric(report, scope, name, instance="*", window_start=None):
    for m in report.metrics:
        same = m.scope == scope and m.metric.name == name and m.metric.instance == instance
        if same and (window_start is None or (m.window and m.window.start == window_start)):
            return m.metric
    raise KeyError((scope, name, instance, window_start))


@pytest.fixture(scope="module")
def checks():
    return [
        Check(Level.ERROR, "batch")
        .is_complete("name")
        .has_mean("x", "<= 100")
        .has_size(">= 1", scope="total"),
        Check(Level.WARNING, "windows").has_size(">= 3", scope="window"),
    ]


def test_total_and_window_scopes_merge_exactly(spark, checks):
    rows1 = [(_t(0, 5), "a", 1.0, None), (_t(0, 30), None, 2.0, None), (_t(0, 50), "c", None, None)]
    rows2 = [(_t(0, 55), "d", 4.0, None), (_t(1, 15), "e", 5.0, None)]
    handler = _handler(checks)
    r1 = handler.handle(spark.createDataFrame(rows1, SCHEMA), 0)
    r2 = handler.handle(spark.createDataFrame(rows2, SCHEMA), 1)
    union = spark.createDataFrame(rows1 + rows2, SCHEMA)
    expected = analyze(union, [Size(), Completeness("name"), Mean("x")])
    assert _metric(r2, "total", "Size").value == expected.metric(Size()).value == 5.0
    assert _metric(r2, "total", "Completeness", "name").value == expected.metric(Completeness("name")).value
    assert _metric(r2, "total", "Mean", "x").value == pytest.approx(expected.metric(Mean("x")).value)
    assert _metric(r1, "batch", "Size").value == 3.0
    # the 12:00 window is open after batch 0 (watermark 12:00:40), closed by batch 1 (12:01:05)
    assert not r1.closed_windows
    assert [w.start.replace(tzinfo=None) for w in r2.closed_windows] == [_t(0)]
    window_size = _metric(r2, "window", "Size", window_start=r2.closed_windows[0].start)
    assert window_size.value == 4.0
    # window-scope check judged on the closed window only
    window_results = [c for c in r2.check_results if c.check == "windows"]
    assert window_results and window_results[0].constraint_results[0].scope == "window"
    assert not [c for c in r1.check_results if c.check == "windows"]
    # batch 0 has a NULL name: the batch-scope completeness check fails there
    assert r1.status == "Error"
    assert r2.status == "Success"


def test_late_and_bad_rows_are_counted_not_merged(spark, checks):
    handler = _handler(checks)
    handler.handle(spark.createDataFrame([(_t(5), "a", 1.0, None), (_t(7), "b", 1.0, None)], SCHEMA), 0)
    assert handler.watermark == datetime(2026, 1, 1, 12, 6, 50, tzinfo=UTC)
    late_and_bad = [
        (_t(5, 30), "late", 1.0, None),  # its window [12:05, 12:06) closed: late
        (_t(7, 1), "ok", 3.0, None),
        (None, None, None, "undecodable JSON"),
    ]
    report = handler.handle(spark.createDataFrame(late_and_bad, SCHEMA), 1)
    assert report.counters["late_rows"] == 1
    assert report.counters["bad_rows"] == 1
    assert report.counters["input_rows"] == 3
    assert _metric(report, "batch", "BadRecords").value == 1.0
    # late rows count in batch and total, not in their (closed) window
    assert _metric(report, "batch", "Size").value == 2.0
    assert _metric(report, "total", "Size").value == 4.0
    assert report.counters["quarantined_rows"] == 2


def test_empty_batch_is_not_judged(spark, checks):
    handler = _handler(checks)
    report = handler.handle(spark.createDataFrame([], SCHEMA), 0)
    assert report.counters["input_rows"] == 0
    assert not [
        c for c in report.check_results if c.check == "batch" and c.constraint_results[0].scope == "batch"
    ]


def test_grouping_states_per_window_in_one_pass(spark):
    """Uniqueness per window and in total equals a batch analysis over the same rows."""
    from streamdq.analyzers import Uniqueness

    checks = [Check(Level.ERROR, "ids").is_unique("name", scope="window")]
    handler = _handler(checks)
    rows1 = [(_t(0, 1), "a", 1.0, None), (_t(0, 2), "b", 1.0, None), (_t(1, 1), "a", 1.0, None)]
    rows2 = [(_t(0, 3), "b", 1.0, None), (_t(1, 2), "c", 1.0, None), (_t(2, 30), "z", 1.0, None)]
    handler.handle(spark.createDataFrame(rows1, SCHEMA), 0)
    report = handler.handle(spark.createDataFrame(rows2, SCHEMA), 1)
    union = spark.createDataFrame(rows1 + rows2, SCHEMA)
    expected_total = analyze(union, [Uniqueness(("name",))]).metric(Uniqueness(("name",))).value
    assert _metric(report, "total", "Uniqueness", "name").value == expected_total
    first = [w for w in report.closed_windows if w.start.replace(tzinfo=None) == _t(0)][0]
    # window 12:00 holds a, b, b -> one unique of three rows
    assert _metric(report, "window", "Uniqueness", "name", first.start).value == pytest.approx(1 / 3)


def test_detectors_judge_closed_windows_and_report_anomalies(spark):
    """has_no_anomalies on the window row count: the detector sees one point per closed window."""
    detector = {"type": "simple_threshold", "upper_bound": 2.0}
    checks = [Check(Level.WARNING, "volume").has_no_anomalies(Size(), detector, scope="window")]
    handler = _handler(checks)
    rows = [(_t(0, 1), "a", 1.0, None), (_t(0, 2), "b", 1.0, None), (_t(0, 3), "c", 1.0, None)]
    rows += [(_t(1, 1), "d", 1.0, None), (_t(2, 30), "e", 1.0, None)]
    report = handler.handle(spark.createDataFrame(rows, SCHEMA), 0)
    # windows 12:00 (3 rows: anomalous) and 12:01 (1 row) close at watermark 12:02:20
    assert len(report.closed_windows) == 2
    assert [a.value for a in report.anomalies] == [3.0]
    assert report.anomalies[0].detector == "simple_threshold"
    assert report.anomalies[0].window is not None and report.anomalies[0].window.start.minute == 0
    statuses = [r.status for c in report.check_results for r in c.constraint_results]
    assert statuses == ["Failure", "Success"]
    assert handler.judge.dump_states(), "detector state is kept for the state store"


def test_schema_drift_facts_are_counted(spark):
    """The decoders' drift columns become counters and batch metrics (new, missing, mistyped fields)."""
    schema = (
        "ts timestamp, name string, x double, _streamdq_error string, _streamdq_unknown_fields array<string>, "
        "_streamdq_missing_fields array<string>, _streamdq_type_errors array<string>"
    )
    rows = [
        (_t(0, 1), "a", 1.0, None, ["coupon_code"], [], []),
        (_t(0, 2), "b", None, None, [], ["x"], []),
        (None, None, None, "field x: expected DOUBLE got 'abc'", [], [], ["x"]),
        (_t(0, 3), "c", 2.0, None, [], [], []),
    ]
    report = _handler([Check(Level.ERROR, "c").is_complete("name")]).handle(
        spark.createDataFrame(rows, schema), 0
    )
    assert report.counters["unknown_field_rows"] == 1
    assert report.counters["missing_field_rows"] == 1
    assert report.counters["type_error_rows"] == 1
    assert report.counters["bad_rows"] == 1
    assert _metric(report, "batch", "MissingFieldRows").value == 1.0
    assert _metric(report, "batch", "TypeErrorRows").value == 1.0


def test_interrupted_spark_job_is_not_a_data_failure():
    """A cancelled job (the query is stopping) must end the batch, not commit failed metrics."""
    from streamdq.engine.plan import is_interruption

    assert is_interruption(RuntimeError("org.apache.spark.SparkException: Job 44 cancelled because ..."))
    assert is_interruption(RuntimeError("java.lang.InterruptedException"))
    assert not is_interruption(RuntimeError("[UNRESOLVED_COLUMN] A column named `nope` cannot be resolved"))
