"""Progress at the terminal and readable text (issue 17, item 10): the start banner, the idle
heartbeat, the stop summary; windows and open-ended bounds in the console and alert messages."""

from __future__ import annotations

import io
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace

from streamdq.connectors.sinks.console import format_report

from streamdq.alerts.policy import AlertPolicy
from streamdq.analyzers.metric import Metric
from streamdq.detectors.base import MAX_DOUBLE, MIN_DOUBLE
from streamdq.display import bound_text, interval_text, window_text
from streamdq.engine.config import load_run_config
from streamdq.engine.progress import Progress, attach, banner
from streamdq.report import Anomaly, BatchReport, CheckResult, ConstraintResult, Window

DAY0 = datetime(2013, 1, 1, tzinfo=UTC)


def test_windows_read_as_days_or_full_ranges() -> None:
    assert window_text(DAY0, DAY0 + timedelta(days=1)) == "2013-01-01 (1 day)"
    assert window_text(DAY0, DAY0 + timedelta(days=7)) == "2013-01-01..2013-01-07 (7 days)"
    hour = DAY0 + timedelta(hours=10)
    assert window_text(hour, hour + timedelta(hours=1)) == "2013-01-01 10:00:00..11:00:00"
    late = DAY0 + timedelta(hours=23)
    assert window_text(late, late + timedelta(hours=2)) == "2013-01-01 23:00:00..2013-01-02 01:00:00"


def test_open_sides_are_left_out() -> None:
    assert interval_text(0.5, MAX_DOUBLE) == ">= 0.5"
    assert interval_text(MIN_DOUBLE, 10) == "<= 10"
    assert interval_text(float("-inf"), None) == "any value"
    assert interval_text(0.5, 1.7) == "[0.5, 1.7]"
    assert bound_text({"lower": 0.5, "upper": 1.7976931348623157e308}) == ">= 0.5"
    assert bound_text([0.25, 0.75]) == "[0.25, 0.75]"
    assert bound_text(">= 0.95") == ">= 0.95"


def _report(
    window: Window, anomaly: Anomaly | None = None, failed: ConstraintResult | None = None
) -> BatchReport:
    return BatchReport(
        dataset="flights",
        query_id="q1",
        batch_id=3,
        processing_time=DAY0 + timedelta(days=2),
        anomalies=(anomaly,) if anomaly else (),
        check_results=(CheckResult("flights", "Error", "Error", (failed,)),) if failed else (),
        closed_windows=(window,),
        counters={"input_rows": 10},
    )


def test_console_and_alert_messages_are_readable() -> None:
    window = Window(DAY0, DAY0 + timedelta(days=1))
    metric = Metric("Column", "Mean", "dep_delay", value=0.2)
    anomaly = Anomaly(
        "OnlineNormal", metric, "window", 0.2, lower=0.5, upper=MAX_DOUBLE, window=window, constraint_id="a1"
    )
    failed = ConstraintResult(
        check="flights",
        level="Error",
        constraint="learned Mean(dep_delay)",
        constraint_id="c1",
        status="Failure",
        metric=metric,
        scope="window",
        window=window,
        bound={"lower": 0.5, "upper": MAX_DOUBLE},
    )
    report = _report(window, anomaly, failed)
    text = format_report(report, [])
    assert "window 2013-01-01 (1 day) closed" in text
    alerts, _ = AlertPolicy().evaluate(report, {})
    messages = " | ".join(a.message for a in alerts)
    assert alerts and "e+308" not in messages and "1.797" not in messages
    assert "expected >= 0.5" in messages
    assert "window 2013-01-01 (1 day)" in messages and "00:00:00..00:00:00" not in messages


def test_progress_counts_beats_when_idle_and_sums_up() -> None:
    now = [0.0]
    out = io.StringIO()
    progress = Progress(heartbeat_seconds=30, stream=out, clock=lambda: now[0])
    report = BatchReport(
        "orders", "q1", 0, DAY0, counters={"input_rows": 1200, "bad_rows": 41, "late_rows": 2}
    )
    progress.emit(report, [])
    progress.emit(report, [])  # a re-emitted batch counts once
    now[0] = 29.0
    assert progress.tick() is False and out.getvalue() == ""
    now[0] = 31.0
    progress.tick()
    now[0] = 45.0
    progress.tick()  # not due again yet
    now[0] = 62.0
    progress.tick()
    lines = out.getvalue().splitlines()
    assert lines == [
        "streamdq: idle: no batch completed for 31 s (1 batches, 1,200 rows so far)",
        "streamdq: idle: no batch completed for 62 s (1 batches, 1,200 rows so far)",
    ]
    progress.emit(BatchReport("orders", "q1", 1, DAY0, counters={"input_rows": 5}), [object()])  # type: ignore[list-item]
    now[0] = 80.0
    progress.tick()  # a batch reset the clock
    assert len(out.getvalue().splitlines()) == 2
    assert progress.summary() == (
        "streamdq: stopped after 80 s: 2 batches, 1,205 rows, 41 bad, 2 late, 1 alerts"
    )


def _config(tmp_path: Path):
    (tmp_path / "in").mkdir(exist_ok=True)
    path = tmp_path / "run.yaml"
    path.write_text(
        "dataset: orders\n"
        "source: {type: files, format: json, path: in/, schema: 'id long, ts timestamp'}\n"
        "checkpoint: ck/\n"
        "event_time: ts\n"
        "window: 1 day\n"
        "state: {path: state/}\n"
        "checks: []\n"
    )
    return load_run_config(str(path))


def test_banner_names_source_state_checkpoint_metrics_and_utc(tmp_path: Path) -> None:
    config = _config(tmp_path)
    sink = SimpleNamespace(url="http://127.0.0.1:9108/metrics")  # PrometheusSink.url is a property
    text = banner(config, [sink])
    assert "dataset 'orders'" in text
    assert "source      files json " in text and str(tmp_path / "in") in text
    assert f"state       {tmp_path / 'state'}" in text and "checkpoint  " + str(tmp_path / "ck") in text
    assert "metrics     http://127.0.0.1:9108/metrics" in text
    assert "1 day event-time windows on ts, in UTC" in text
    assert "(no prometheus sink)" in banner(config, [])
    assert "windows     none (no event_time" in banner(replace(config, event_time=None), [])
    from streamdq.connectors.sinks.prometheus import PrometheusSink

    real = PrometheusSink(port=0)
    try:
        assert f"metrics     http://127.0.0.1:{real.port}/metrics" in banner(config, [real])
    finally:
        real.close()


def test_attach_prints_the_banner_and_joins_the_sinks(tmp_path: Path, capsys) -> None:
    runner = SimpleNamespace(config=_config(tmp_path), sinks=[])
    progress = attach(runner, heartbeat_seconds=5)
    assert runner.sinks == [progress]
    assert "streamdq: validating dataset 'orders'" in capsys.readouterr().err


def test_learned_constraints_read_without_double_max() -> None:
    from streamdq.autovalidate.avh.program import LearnedConstraint
    from streamdq.display import between_text, range_text

    assert between_text("Mean(x)", 0.5, MAX_DOUBLE) == "Mean(x) >= 0.5"
    assert between_text("Mean(x)", 1.0, 3.0) == "1 <= Mean(x) <= 3"
    assert range_text(1, 2) == "in [1, 2]" and range_text(MIN_DOUBLE, 9) == "<= 9"
    learned = LearnedConstraint("amount", "mean", 0.5, MAX_DOUBLE, bound="cantelli", k=3.0, fpr=0.001)
    text = learned.describe()
    assert text.startswith("mean(amount) >= 0.5  [cantelli") and "e+308" not in text
