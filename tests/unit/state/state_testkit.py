"""Builders of small reports and state records for the state-store tests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from streamdq.state.records import StateRecord

from streamdq.analyzers import Completeness, Mean, Size
from streamdq.analyzers.basic_states import NumMatches, NumMatchesAndCount, SumState
from streamdq.analyzers.metric import Metric
from streamdq.report import BatchReport, CheckResult, ConstraintResult, ScopedMetric, Window

T0 = datetime(2026, 1, 1, tzinfo=UTC)
SIZE = Size()
COMPLETE = Completeness("email")
MEAN = Mean("amount")


def window(i: int, minutes: int = 1) -> Window:
    return Window(T0 + timedelta(minutes=i * minutes), T0 + timedelta(minutes=(i + 1) * minutes))


def size_metric(value: float) -> Metric:
    return Metric("Dataset", "Size", "*", value=value)


def report(
    dataset: str,
    query_id: str,
    batch_id: int,
    *,
    metrics: tuple[ScopedMetric, ...] = (),
    closed: tuple[Window, ...] = (),
    failed: bool = False,
) -> BatchReport:
    cr = ConstraintResult(
        check="orders",
        level="Error",
        constraint="SizeConstraint(Size(None))",
        constraint_id="c-size",
        status="Failure" if failed else "Success",
        message="too small" if failed else None,
        metric=size_metric(float(batch_id)),
        scope="batch",
        bound=">= 1",
    )
    return BatchReport(
        dataset=dataset,
        query_id=query_id,
        batch_id=batch_id,
        processing_time=T0 + timedelta(seconds=5 * batch_id),
        metrics=metrics,
        check_results=(CheckResult("orders", "Error", "Error" if failed else "Success", (cr,)),),
        closed_windows=closed,
        counters={"input_rows": 10},
    )


def size_record(n: int, scope: str = "total", w: Window | None = None, final: bool = False) -> StateRecord:
    return StateRecord.of(SIZE, NumMatches(n), scope, w, final=final)


def mean_record(total: float, n: int, scope: str = "window", w: Window | None = None) -> StateRecord:
    return StateRecord.of(MEAN, SumState(total, n), scope, w)


def complete_record(matches: int, count: int, w: Window) -> StateRecord:
    return StateRecord.of(COMPLETE, NumMatchesAndCount(matches, count, count), "window", w)
