"""Console sink: a compact human summary per batch (and per closed window) plus the alerts.

Runs in the driver and writes to stdout (or stderr). Idempotent per ``(query_id,
batch_id)`` within the process. An empty batch prints one short line. The rate is the
stream's: the rows of this batch over the time since the previous batch's report (processing
time to processing time, so it includes Spark's own trigger work and any idle wait of a
processing-time trigger), not rows per handler second; the handler's own time follows it.
The first batch a sink sees has no previous one: it shows the handler time only. Example::

    orders batch 12 [Error] rows=1000 bad=3 late=2 433 rows/s (2.31 s since batch 11) handler 0.42s
      bad: 2 undecodable JSON, 1 field amount: expected DOUBLE; first at orders-7.json:41
      drift: new field(s) coupon; missing field(s) email
      window 12:00..12:01 closed: Size=5400 Completeness(amount)=0.91
      FAILED [Error] orders: Completeness(amount) >= 0.95 -> 0.91 (window)
      ALERT violation [Error] orders: 'Completeness(amount) >= 0.95' failed (...)
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any, TextIO

from streamdq.connectors.sinks.base import SeenBatches
from streamdq.connectors.sinks.series import series_identity

from streamdq.alerts.alert import Alert
from streamdq.display import window_text
from streamdq.report import BadDataSummary, BatchReport, ScopedMetric, Window

# the row counters shown in the head line when non-zero
COUNTERS = (
    "bad_rows",
    "late_rows",
    "quarantined_rows",
    "unknown_field_rows",
    "missing_field_rows",
    "type_error_rows",
    "implausible_event_time_rows",
    "invalid_utf8_rows",
)

KEY_METRICS = ("Size", "Completeness", "Mean", "ApproxCountDistinct", "CountDistinct", "Uniqueness")


def _fmt(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def _hhmm(window: Window) -> str:
    return window_text(window.start, window.end)


def bad_data_lines(bad: BadDataSummary) -> list[str]:
    """At most two lines: the top reasons with their counts and where the first bad record came
    from; the names of new and missing fields."""
    lines = []
    if bad.reasons:
        text = ", ".join(f"{n} {reason}" for reason, n in bad.reasons)
        if bad.other_rows:
            text += f" (+{bad.other_rows} other)"
        if bad.sample:
            text += f"; first at {bad.sample}"
        lines.append(f"  bad: {text}")
    fields = []
    if bad.unknown_fields:
        fields.append("new field(s) " + ", ".join(bad.unknown_fields))
    if bad.missing_fields:
        fields.append("missing field(s) " + ", ".join(bad.missing_fields))
    if fields:
        lines.append(f"  drift: {'; '.join(fields)}")
    return lines


def _metric_label(m: ScopedMetric) -> str:
    """``Name(instance, params where filter)``: metrics of one name and column computed with
    other parameters or filters read apart (``Mean(dep_delay where dep_delay > 0)``)."""
    metric = m.metric
    inner = "" if metric.instance in ("*", "") else metric.instance
    inner += series_identity(m.analyzer_key).suffix()
    inner = inner.removeprefix(", ").strip()
    return f"{metric.name}({inner})" if inner else metric.name


def _metric_text(m: ScopedMetric) -> str:
    return f"{_metric_label(m)}={_fmt(m.metric.value) if m.metric.ok else 'FAILED'}"


def format_report(
    report: BatchReport,
    alerts: list[Alert],
    *,
    verbose: bool = False,
    max_items: int = 8,
    previous: BatchReport | None = None,
) -> str:
    """The summary text of one report (no trailing newline); ``previous`` (the query's
    previous batch) gives the stream's rows/s."""
    counters = report.counters
    rows = counters.get("input_rows")
    total_s = report.timings.get("total")
    head = f"{report.dataset} batch {report.batch_id} [{report.status}]"
    if rows is not None:
        head += f" rows={rows}"
    for key in COUNTERS:
        if counters.get(key):
            head += f" {key.removesuffix('_rows')}={counters[key]}"
    if previous is not None and rows is not None:
        elapsed = (report.processing_time - previous.processing_time).total_seconds()
        if elapsed > 0:
            head += f" {rows / elapsed:.0f} rows/s ({elapsed:.2f} s since batch {previous.batch_id})"
    if total_s is not None:
        head += f" handler {total_s:.2f}s"
    if report.replayed:
        head += " (replayed)"
    lines = [head, *bad_data_lines(report.bad_data)]
    for window in report.closed_windows:
        in_window = [
            m
            for m in report.metrics
            if m.scope == "window" and m.window == window and (verbose or m.metric.name in KEY_METRICS)
        ]
        shown = " ".join(_metric_text(m) for m in in_window[:max_items])
        lines.append(f"  window {_hhmm(window)} closed: {shown}".rstrip())
    if verbose:
        for m in report.metrics_at("batch")[:max_items]:
            lines.append(f"  batch {_metric_text(m)}")
    failed = report.failed_constraints()
    for r in failed[:max_items]:
        value = _fmt(r.metric.value) if r.metric is not None and r.metric.ok else "n/a"
        lines.append(f"  FAILED [{r.level}] {r.check}: {r.constraint} -> {value} ({r.scope})")
    if len(failed) > max_items:
        lines.append(f"  ... {len(failed) - max_items} more failed constraints")
    for doc in report.measure_check_pass:  # the dataset's pass policy said no (measure-check-pass.md)
        if not doc.passed:
            where = f"window {doc.window[0]}" if doc.window else str(doc.scope)
            names = ", ".join(name for name, ok in doc.check.items() if not ok) or "none"
            lines.append(f"  NOT PASSED ({where}): failed checks: {names}")
    for a in report.anomalies[:max_items]:
        # the judged metric's own entry tells its parameters and filter apart
        same = (
            m
            for m in report.metrics
            if m.scope == a.scope and m.window == a.window and m.metric == a.metric and m.analyzer_key
        )
        judged = next(same, None)
        label = _metric_label(judged) if judged else f"{a.metric.name}({a.metric.instance})"
        lines.append(f"  ANOMALY {a.detector}: {label}={_fmt(a.value)} ({a.scope})")
    for alert in alerts:
        lines.append(f"  ALERT {alert.kind} [{alert.severity}] {alert.message}")
    return "\n".join(lines)


class ConsoleSink:
    """Prints ``format_report`` for every new batch; ``only_changes`` skips quiet batches
    (no closed window, no failure, no anomaly, no alert)."""

    @classmethod
    def _unit_test_params(cls, targets: Any) -> Iterator[dict[str, Any]]:
        """Specs for the conformance laws (streamdq.testing.sink_checks)."""
        yield {"type": "console"}
        yield {"type": "console", "stream": "stderr", "verbose": True, "only_changes": True, "name": "quiet"}

    def __init__(
        self,
        name: str = "console",
        *,
        stream: TextIO | None = None,
        verbose: bool = False,
        only_changes: bool = False,
    ) -> None:
        self.name = name
        self._stream = stream
        self.verbose = verbose
        self.only_changes = only_changes
        self._seen = SeenBatches()
        self._previous: dict[str, BatchReport] = {}

    def emit(self, report: BatchReport, alerts: list[Alert]) -> None:
        if not self._seen.first_time(report.query_id, report.batch_id):
            return
        previous = None if report.replayed else self._previous.get(report.query_id)
        if not report.replayed:
            self._previous[report.query_id] = report
        quiet = not (report.closed_windows or report.failed_constraints() or report.anomalies or alerts)
        if self.only_changes and quiet:
            return
        out = self._stream or sys.stdout
        text = format_report(report, alerts, verbose=self.verbose, previous=previous)
        # a closed pipe or stream must not kill the stream
        with contextlib.suppress(OSError, ValueError):
            print(text, file=out, flush=True)

    def close(self) -> None:
        pass
