"""The batch reports the store and sink kits commit and deliver: one small builder.

``batch_report(batch_id, ...)`` is the report of one microbatch of the dataset ``kit`` with one
constraint (``is_complete(column='email')``) judged on a Completeness metric, plus the batch's row
count (Size, with its analyzer key so a store can index it). ``failing=True`` makes the
constraint fail (the alert policy then raises one violation). Pure values, no Spark.

>>> report = batch_report(3, failing=True)
>>> report.batch_id, [r.status for r in report.failed_constraints()]
(3, ['Failure'])
>>> batch_report(3).failed_constraints()
[]
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from streamdq.analyzers import Size
from streamdq.analyzers.metric import Metric
from streamdq.report import BatchReport, CheckResult, ConstraintResult, ScopedMetric

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def batch_report(
    batch_id: int, query_id: str = "kit-query", *, failing: bool = False, dataset: str = "kit", rows: int = 10
) -> BatchReport:
    """The report of batch ``batch_id`` (see the module docstring)."""
    completeness = Metric("Column", "Completeness", "email", value=0.5 if failing else 1.0)
    result = ConstraintResult(
        check="kit",
        level="Error",
        constraint="is_complete(column='email')",
        constraint_id="c-kit-email",
        status="Failure" if failing else "Success",
        message="Value: 0.5 does not meet the constraint requirement!" if failing else None,
        metric=completeness,
        scope="batch",
        bound="== 1",
    )
    size = Metric("Dataset", "Size", "*", value=float(rows))
    return BatchReport(
        dataset=dataset,
        query_id=query_id,
        batch_id=batch_id,
        processing_time=T0 + timedelta(minutes=batch_id),
        metrics=(ScopedMetric("batch", completeness), ScopedMetric("batch", size, analyzer_key=Size().key())),
        check_results=(CheckResult("kit", "Error", "Error" if failing else "Success", (result,)),),
        counters={"input_rows": rows},
    )


__all__ = ["T0", "batch_report"]
