"""Hand-built BatchReports and alerts for the sink tests (streamdq.report classes only)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from streamdq.alerts import Alert, AlertPolicy
from streamdq.analyzers.metric import Metric
from streamdq.report import Anomaly, BatchReport, CheckResult, ConstraintResult, ScopedMetric, Window

T0 = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
W1 = Window(T0, T0 + timedelta(minutes=1))
W2 = Window(T0 + timedelta(minutes=1), T0 + timedelta(minutes=2))


def make_report(batch_id: int = 3, *, failing: bool = True, query_id: str = "q-1") -> BatchReport:
    completeness = Metric("Column", "Completeness", "amount", value=0.8 if failing else 1.0)
    result = ConstraintResult(
        check="orders-basic",
        level="Error",
        constraint="Completeness(amount) >= 0.95",
        constraint_id="c-compl-amount",
        status="Failure" if failing else "Success",
        message="Value: 0.8 does not meet the constraint requirement!" if failing else None,
        metric=completeness,
        scope="batch",
        bound=">= 0.95",
    )
    anomalies = (
        (
            Anomaly(
                "OnlineNormal",
                Metric("Column", "Mean", "amount", value=512.0),
                "window",
                value=512.0,
                lower=4.0,
                upper=6.5,
                score=40.0,
                window=W2,
                constraint_id="c-anom-mean",
            ),
        )
        if failing
        else ()
    )
    return BatchReport(
        dataset="orders",
        query_id=query_id,
        batch_id=batch_id,
        processing_time=T0 + timedelta(minutes=2, seconds=5 * batch_id),
        metrics=(
            ScopedMetric("batch", Metric("Dataset", "Size", "*", value=1000.0)),
            ScopedMetric("batch", completeness),
            ScopedMetric("window", Metric("Dataset", "Size", "*", value=5400.0), W1),
            ScopedMetric("window", Metric("Dataset", "Size", "*", value=120.0), W2),
            ScopedMetric("window", Metric("Column", "Mean", "amount", value=512.0), W2),
            ScopedMetric("total", Metric("Dataset", "Size", "*", value=20000.0)),
            ScopedMetric(
                "total", Metric("Column", "Histogram", "country", value={"number_of_bins": 1, "values": {}})
            ),
            ScopedMetric("total", Metric("Column", "Mean", "amount", failure="no rows")),
        ),
        check_results=(CheckResult("orders-basic", "Error", "Error" if failing else "Success", (result,)),),
        anomalies=anomalies,
        timings={"total": 2.0, "compute": 1.5, "commit": 0.25},
        counters={"input_rows": 1000, "late_rows": 4, "quarantined_rows": 2},
        closed_windows=(W1,),
        event_time_max=T0 + timedelta(minutes=1, seconds=50),
        watermark=T0 + timedelta(minutes=1, seconds=20),
    )


def alerts_for(report: BatchReport, state: dict | None = None) -> tuple[list[Alert], dict]:
    return AlertPolicy().evaluate(report, state or {})


@pytest.fixture
def report_and_alerts():
    report = make_report()
    alerts, _ = alerts_for(report)
    return report, alerts
