"""bench/detectors/latency.py: every incident ends in exactly one class, from reports and arrivals."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from streamdq.analyzers.metric import Metric
from streamdq.report import BatchReport, CheckResult, ConstraintResult, Window
from tests.unit.bench.bench_modules import load_bench_module

T0 = datetime(2026, 11, 24, 5, 0, tzinfo=UTC)


def _latency():
    return load_bench_module("detectors/latency.py", "bench_latency")


def _ms(t: datetime) -> int:
    return int(t.timestamp() * 1000)


def _window(s: int) -> Window:
    return Window(T0 + timedelta(seconds=s), T0 + timedelta(seconds=s + 5))


def _report(batch_id: int, windows: dict[int, bool], alerted: tuple[int, ...]) -> BatchReport:
    results = tuple(
        ConstraintResult(
            check="latency",
            level="Error",
            constraint="c",
            constraint_id="c1",
            status="Success" if ok else "Failure",
            metric=Metric("Column", "Completeness", "amount", value=1.0 if ok else 0.3),
            scope="window",
            window=_window(s),
            bound=">= 0.7",
        )
        for s, ok in windows.items()
    )
    alerts = tuple(
        {"alert_id": f"{batch_id}-{s}", "kind": "violation", "window": _window(s).to_dict()} for s in alerted
    )
    return BatchReport(
        dataset="orders",
        query_id="q",
        batch_id=batch_id,
        processing_time=T0 + timedelta(seconds=60 + batch_id),
        check_results=(CheckResult("latency", "Error", "Error", results),),
        closed_windows=tuple(_window(s) for s in windows),
        alerts=alerts,
    )


def test_every_incident_is_classified_once_and_false_alerts_are_counted():
    lat = _latency()
    # incidents in windows 0, 15, 30, 45, 60
    incidents = [_ms(T0 + timedelta(seconds=s)) for s in (0, 15, 30, 45, 60)]
    reports = [
        _report(0, {0: False, 5: True, 10: False}, alerted=(0, 10)),  # 10 is not an incident window
        _report(1, {15: False, 20: True}, alerted=(15,)),  # emitted, never arrives
        _report(2, {30: False}, alerted=()),  # failed, held back
        _report(3, {45: True}, alerted=()),  # the check passed
    ]  # window 60 never closed
    arrivals = [
        (_ms(T0) + 9000, reports[0].alerts[0]),
        (_ms(T0) + 9500, reports[0].alerts[0]),  # a redelivery: de-duplicated by id
        (_ms(T0) + 9600, reports[0].alerts[1]),
    ]
    fates, false_alerts = lat.account(incidents, 1, reports, arrivals)
    assert [f.klass for f in fates] == [
        "alerted",
        "not_delivered",
        "held_by_policy",
        "check_passed",
        "window_not_closed",
    ]
    assert fates[0].latency_s == 9.0 and fates[0].backlog and not fates[1].backlog
    assert fates[0].closed_batch == 0 and fates[0].judged_ms == _ms(T0) + 60_000
    assert false_alerts == 1
    assert set(lat.CLASSES) == {f.klass for f in fates}
