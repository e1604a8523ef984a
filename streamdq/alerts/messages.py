"""The words of an alert: ``build_alert(report, candidate, kind)`` -> ``Alert``.

The policy (``streamdq.alerts.policy``) decides *whether* a candidate alerts and with which kind
(``violation``, ``anomaly``, ``resolved``); this module decides what the alert says: its message
(``orders: 'has_completeness(column='email') >= 0.95' failed (batch scope): Completeness(email)
= 0.5, expected >= 0.95``), its deterministic id, metric, expected bound (display text, as the
check states it, or the detector's interval), window and times. Pure; no I/O, no clock.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any

from streamdq.alerts.alert import Alert, alert_id_for
from streamdq.alerts.candidate import PASS_ID_PREFIX, Candidate, step_key
from streamdq.display import bound_text, interval_text, window_text
from streamdq.report import BatchReport, Window


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        if not math.isfinite(value):
            return repr(value)
        return f"{value:.6g}"
    return str(value)


def _event_time(report: BatchReport, window: Window | None) -> datetime | None:
    return window.end if window is not None else report.event_time_max


def metric_text(metric: Any, value: Any) -> str:
    """``Completeness(email) = 0.5`` (or ``... = failed: <reason>``); the value alone without a metric.

    >>> from streamdq.metric import Metric
    >>> metric_text(Metric("Column", "Completeness", "email", value=0.5), 0.5), metric_text(None, 1 / 3)
    ('Completeness(email) = 0.5', '0.333333')
    """
    if metric is None:
        return _fmt(value)
    return f"{metric.name}({metric.instance}) = {_fmt(value) if metric.failure is None else 'failed: ' + metric.failure}"


def where_text(scope: str, window: Window | None) -> str:
    """``batch scope`` or ``window scope, window 2026-11-22 12:00:00..13:00:00``.

    >>> from datetime import UTC, datetime
    >>> where_text("window", Window(datetime(2026, 11, 22, 12, tzinfo=UTC), datetime(2026, 11, 22, 13, tzinfo=UTC)))
    'window scope, window 2026-11-22 12:00:00..13:00:00'
    """
    if window is not None:
        return f"{scope} scope, window {window_text(window.start, window.end)}"
    return f"{scope} scope"


def message_for(report: BatchReport, cand: Candidate, kind: str, since_batch: int | None = None) -> str:
    """The human line of an alert of ``kind`` about ``cand`` (``since_batch``: resolved only)."""
    metric, value, expected = cand.metric, cand.value, cand.expected
    where = where_text(cand.scope, cand.window)
    since = f"; failing since batch {since_batch}" if since_batch is not None else ""
    if kind == "resolved" and cand.constraint_id.startswith(PASS_ID_PREFIX):
        return f"{report.dataset}: the dataset passes its pass policy again ({where})" + since
    if kind == "resolved":
        return (
            f"{cand.check}: '{cand.constraint}' passes again ({where}): {metric_text(metric, value)}"
            + (f", expected {bound_text(expected)}" if expected is not None else "")
            + since
        )
    if kind == "anomaly":
        assert cand.anomaly is not None
        lo, hi = cand.anomaly.lower, cand.anomaly.upper
        interval = f", expected {interval_text(lo, hi)}" if lo is not None or hi is not None else ""
        message = f"{cand.anomaly.detector} flagged {metric_text(metric, value)}{interval} ({where})"
        return message + (f": {cand.anomaly.message}" if cand.anomaly.message else "")
    if cand.constraint_id.startswith(PASS_ID_PREFIX):
        message = f"{report.dataset}: the dataset does not pass its pass policy ({where})"
    else:
        message = f"{cand.check}: '{cand.constraint}' failed ({where}): {metric_text(metric, value)}"
        if expected is not None:
            message += f", expected {bound_text(expected)}"
    if cand.result is not None and cand.result.message:
        message += f"; {cand.result.message}"
    return message


def build_alert(report: BatchReport, cand: Candidate, kind: str, since_batch: int | None = None) -> Alert:
    """The ``Alert`` document of ``kind`` about ``cand`` in ``report`` (id deterministic from the
    query id, batch id, check, constraint id, kind and, at window scope, the window start)."""
    metric = cand.metric
    return Alert(
        alert_id=alert_id_for(
            report.query_id,
            report.batch_id,
            cand.check,
            cand.constraint_id,
            kind,
            step_key(cand.scope, cand.window),
        ),
        kind=kind,
        dataset=report.dataset,
        severity=cand.severity,
        check=cand.check,
        constraint=cand.constraint,
        constraint_id=cand.constraint_id,
        metric_name=metric.name if metric is not None else None,
        metric_entity=metric.entity if metric is not None else None,
        metric_instance=metric.instance if metric is not None else None,
        metric_value=cand.value,
        expected=cand.expected,
        scope=cand.scope,
        window=cand.window.to_dict() if cand.window is not None else None,
        query_id=report.query_id,
        batch_id=report.batch_id,
        event_time=_event_time(report, cand.window),
        processing_time=report.processing_time,
        message=message_for(report, cand, kind, since_batch),
    )
