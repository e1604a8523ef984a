"""Console and JSON-lines sinks: content, idempotence per (query_id, batch_id), torn-line repair."""

from __future__ import annotations

import io
import json

from streamdq.connectors.sinks.console import ConsoleSink
from streamdq.connectors.sinks.jsonl import JsonLinesSink, read_lines

from streamdq.report import BatchReport
from tests.unit.sinks.conftest import alerts_for, make_report


def test_console_prints_summary_window_failures_and_alerts_once(report_and_alerts):
    report, alerts = report_and_alerts
    out = io.StringIO()
    sink = ConsoleSink(stream=out)
    sink.emit(report, alerts)
    sink.emit(report.as_replayed(), alerts)
    text = out.getvalue()
    assert text.count("orders batch 3 [Error]") == 1
    assert "rows=1000" in text and "late=4" in text and "handler 2.00s" in text
    assert "rows/s" not in text  # the first batch a sink sees has no previous one
    assert "window 2026-11-22 12:00:00..12:01:00 closed: Size=5400" in text
    assert "FAILED [Error] orders-basic: Completeness(amount) >= 0.95 -> 0.8 (batch)" in text
    assert "ALERT violation [Error]" in text and "ALERT anomaly" in text


def test_console_rate_is_the_streams_not_the_handlers():
    """rows over the time between two batches' reports (trigger work and idle wait included)."""
    from dataclasses import replace
    from datetime import timedelta

    out = io.StringIO()
    sink = ConsoleSink(stream=out)
    first = make_report(3)
    second = replace(make_report(4), processing_time=first.processing_time + timedelta(seconds=4))
    sink.emit(first, [])
    sink.emit(second, [])
    last = out.getvalue().strip().splitlines()
    head = [line for line in last if line.startswith("orders batch 4")][0]
    assert "250 rows/s (4.00 s since batch 3)" in head  # 1000 rows in 4 s, the handler took 2 s
    assert "handler 2.00s" in head


def test_console_only_changes_skips_quiet_batches():
    out = io.StringIO()
    sink = ConsoleSink(stream=out, only_changes=True)
    quiet = make_report(5, failing=False)
    quiet = BatchReport(**{**quiet.__dict__, "closed_windows": ()})
    sink.emit(quiet, [])
    assert out.getvalue() == ""
    sink.emit(make_report(6), alerts_for(make_report(6))[0])
    assert "batch 6" in out.getvalue()


def test_jsonl_one_line_per_batch_idempotent_across_reopen(tmp_path, report_and_alerts):
    report, alerts = report_and_alerts
    path = tmp_path / "out" / "reports.jsonl"
    sink = JsonLinesSink(path)
    sink.emit(report, alerts)
    sink.emit(report, alerts)
    sink.close()
    again = JsonLinesSink(path)
    again.emit(report.as_replayed(), alerts)  # replay after restart: not written twice
    again.emit(make_report(4), [])
    again.close()
    lines = read_lines(path)
    assert [(d["query_id"], d["batch_id"]) for d in lines] == [("q-1", 3), ("q-1", 4)]
    assert BatchReport.from_dict(lines[0]["report"]).batch_id == 3
    assert {a["kind"] for a in lines[0]["alerts"]} == {"violation", "anomaly"}


def test_jsonl_cuts_a_torn_last_line(tmp_path):
    path = tmp_path / "reports.jsonl"
    sink = JsonLinesSink(path)
    sink.emit(make_report(1), [])
    sink.close()
    with open(path, "a") as fh:
        fh.write('{"query_id": "q-1", "batch_id": 2, "rep')  # crash mid-write
    sink = JsonLinesSink(path)
    sink.emit(make_report(2), [])
    sink.close()
    lines = path.read_text().splitlines()
    assert [json.loads(x)["batch_id"] for x in lines] == [1, 2]


def test_console_tells_apart_metrics_with_other_parameters_or_filters():
    """Mean(dep_delay) with and without a where filter, and two quantiles of one column."""
    from dataclasses import replace

    from streamdq.analyzers.metric import Metric
    from streamdq.report import ScopedMetric
    from tests.unit.sinks.conftest import W1

    def sm(name, value, **spec):
        key = json.dumps({"analyzer": name, **spec}, sort_keys=True, separators=(",", ":"))
        return ScopedMetric("window", Metric("Column", name, spec.get("column", "*"), value=value), W1, key)

    report = replace(
        make_report(3, failing=False),
        metrics=(
            sm("Mean", 1.891, column="dep_delay"),
            sm("Mean", 5.55, column="dep_delay", where="dep_delay > 0"),
            sm("ApproxQuantile", 2.0, column="dep_delay", quantile=0.5, k=200),
            sm("ApproxQuantile", 40.0, column="dep_delay", quantile=0.9, k=200),
        ),
    )
    out = io.StringIO()
    ConsoleSink(stream=out, verbose=True).emit(report, [])
    line = [x for x in out.getvalue().splitlines() if "closed:" in x][0]
    assert "Mean(dep_delay)=1.891" in line
    assert "Mean(dep_delay where dep_delay > 0)=5.55" in line
    assert "ApproxQuantile(dep_delay, k=200,quantile=0.5)=2" in line
    assert "ApproxQuantile(dep_delay, k=200,quantile=0.9)=40" in line


def test_console_anomaly_line_names_the_filter_of_the_judged_metric():
    from dataclasses import replace

    from streamdq.analyzers.metric import Metric
    from streamdq.report import Anomaly, ScopedMetric
    from tests.unit.sinks.conftest import W1

    plain = Metric("Column", "Mean", "dep_delay", value=1.891)
    filtered = Metric("Column", "Mean", "dep_delay", value=55.0)
    key = json.dumps({"analyzer": "Mean", "column": "dep_delay", "where": "dep_delay > 0"}, sort_keys=True)
    report = replace(
        make_report(3, failing=False),
        metrics=(
            ScopedMetric("window", plain, W1, json.dumps({"analyzer": "Mean", "column": "dep_delay"})),
            ScopedMetric("window", filtered, W1, key),
        ),
        anomalies=(Anomaly("simple_threshold", filtered, "window", value=55.0, window=W1),),
    )
    out = io.StringIO()
    ConsoleSink(stream=out).emit(report, [])
    assert "ANOMALY simple_threshold: Mean(dep_delay where dep_delay > 0)=55 (window)" in out.getvalue()
