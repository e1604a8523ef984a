"""Hand-built BatchReports for the alert tests (streamdq.report classes only)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from streamdq.analyzers.metric import Metric
from streamdq.report import Anomaly, BatchReport, CheckResult, ConstraintResult, ScopedMetric

T0 = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


def constraint(
    cid: str,
    ok: bool,
    *,
    name: str = "Completeness",
    instance: str = "amount",
    value: float = 0.5,
    bound: Any = ">= 0.95",
    level: str = "Error",
    check: str = "orders",
    scope: str = "batch",
) -> ConstraintResult:
    return ConstraintResult(
        check=check,
        level=level,
        constraint=f"{name}({instance}) {bound}",
        constraint_id=cid,
        status="Success" if ok else "Failure",
        message=None if ok else f"Value: {value} does not meet the constraint requirement!",
        metric=Metric("Column" if instance != "*" else "Dataset", name, instance, value=value),
        scope=scope,
        bound=bound,
    )


def report(
    batch_id: int,
    results: list[ConstraintResult],
    *,
    rows: int = 1000,
    anomalies: tuple[Anomaly, ...] = (),
    query_id: str = "q-1",
    seconds_per_batch: int = 10,
) -> BatchReport:
    failed = any(r.failed for r in results)
    level = results[0].level if results else "Error"
    checks = (
        (CheckResult("orders", level, level if failed else "Success", tuple(results)),) if results else ()
    )
    return BatchReport(
        dataset="orders",
        query_id=query_id,
        batch_id=batch_id,
        processing_time=T0 + timedelta(seconds=seconds_per_batch * batch_id),
        metrics=(ScopedMetric("batch", Metric("Dataset", "Size", "*", value=float(rows))),),
        check_results=checks,
        anomalies=anomalies,
        counters={"input_rows": rows},
        timings={"total": 0.5, "commit": 0.1},
        event_time_max=T0 + timedelta(seconds=seconds_per_batch * batch_id - 3),
    )


@pytest.fixture
def mk():
    class Factory:
        constraint = staticmethod(constraint)
        report = staticmethod(report)

    return Factory
