"""Records -> Arrow tables in the exact schemas of ``state.schemas`` (driver side).

Each builder stamps the batch coordinates (dataset, batch_id, query_id, times) and the
``date`` partition value. Empty input gives an empty table with the right schema.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, date, datetime
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from streamdq.state import schemas as S
from streamdq.state.records import (
    MEASURE_ENTITY,
    DetectorStateRecord,
    MetricRecord,
    ResultRecord,
    StateRecord,
    split_value,
)

from streamdq.errors import InvalidArgument
from streamdq.report import BatchReport


def utc_date(ts: datetime) -> date:
    return ts.astimezone(UTC).date()


def aware_utc(ts: datetime | None, what: str) -> datetime | None:
    """``ts`` in UTC (None stays None); a naive ``ts`` is an error naming the argument ``what``.

    >>> aware_utc(None, "since") is None
    True
    """
    if ts is None:
        return None
    if ts.tzinfo is None:
        raise InvalidArgument(
            f"{what} {ts.isoformat()} must be timezone-aware (e.g. 2026-01-01T00:00:00+00:00)"
        )
    return ts.astimezone(UTC)


def _point_time(scope: str, window_start: datetime | None, processing_time: datetime) -> datetime:
    return window_start if scope == "window" and window_start is not None else processing_time


def state_table(
    records: Sequence[StateRecord], *, dataset: str, batch_id: int, query_id: str, committed_at: datetime
) -> pa.Table:
    rows = state_rows(
        records, dataset=dataset, batch_id=batch_id, query_id=query_id, committed_at=committed_at
    )
    return pa.Table.from_pylist(rows, schema=S.SCHEMAS[S.STATES])


def state_rows(
    records: Sequence[StateRecord], *, dataset: str, batch_id: int, query_id: str, committed_at: datetime
) -> list[dict[str, Any]]:
    """``state_table``'s rows as dicts (what the Delta store compares with its view before it
    builds the table of the changed ones)."""
    return [
        {
            "dataset": dataset,
            "scope": r.scope,
            "window_start": r.window_start,
            "window_end": r.window_end,
            "state_key": r.state_key,
            "analyzer": r.analyzer_spec,
            "state_type": r.state.TYPE_TAG,
            "state": r.state.to_bytes(),
            "format_version": r.state.FORMAT_VERSION,
            "final": r.final,
            "batch_id": batch_id,
            "query_id": query_id,
            "committed_at": committed_at,
            "date": utc_date(_point_time(r.scope, r.window_start, committed_at)),
        }
        for r in records
    ]


def metric_table(records: Sequence[MetricRecord], report: BatchReport) -> pa.Table:
    rows = []
    for r in records:
        value, value_json = split_value(r.value)
        if r.entity == MEASURE_ENTITY and value_json is None and r.value is not None:
            value_json = json.dumps(r.value)  # a measure keeps its exact JSON value (100, not 100.0)
        time = _point_time(r.scope, r.window_start, report.processing_time)
        rows.append(
            {
                "dataset": report.dataset,
                "scope": r.scope,
                "window_start": r.window_start,
                "window_end": r.window_end,
                "time": time,
                "entity": r.entity,
                "instance": r.instance,
                "name": r.name,
                "value": value,
                "value_json": value_json,
                "failure": r.failure,
                "empty": r.empty,
                "approximate": r.approximate,
                "error_bound": r.error_bound,
                "analyzer_key": r.analyzer_key,
                "batch_id": report.batch_id,
                "query_id": report.query_id,
                "processing_time": report.processing_time,
                "date": utc_date(time),
            }
        )
    return pa.Table.from_pylist(rows, schema=S.SCHEMAS[S.METRICS])


def result_table(records: Sequence[ResultRecord], report: BatchReport) -> pa.Table:
    rows = []
    for r in records:
        value, value_json = split_value(r.metric_value)
        time = _point_time(r.scope, r.window_start, report.processing_time)
        rows.append(
            {
                "dataset": report.dataset,
                "check": r.check,
                "level": r.level,
                "constraint": r.constraint,
                "constraint_id": r.constraint_id,
                "status": r.status,
                "message": r.message,
                "metric_entity": r.metric_entity,
                "metric_name": r.metric_name,
                "metric_instance": r.metric_instance,
                "metric_value": value,
                "metric_value_json": value_json,
                "scope": r.scope,
                "window_start": r.window_start,
                "window_end": r.window_end,
                "time": time,
                "bound": None if r.bound is None else json.dumps(r.bound, default=str),
                "batch_id": report.batch_id,
                "query_id": report.query_id,
                "processing_time": report.processing_time,
                "date": utc_date(time),
            }
        )
    return pa.Table.from_pylist(rows, schema=S.SCHEMAS[S.RESULTS])


def report_table(report: BatchReport, committed_at: datetime) -> pa.Table:
    row = {
        "dataset": report.dataset,
        "query_id": report.query_id,
        "batch_id": report.batch_id,
        "processing_time": report.processing_time,
        "status": report.status,
        "report": report.to_json(),
        "committed_at": committed_at,
        "date": utc_date(report.processing_time),
    }
    return pa.Table.from_pylist([row], schema=S.SCHEMAS[S.REPORTS])


def detector_table(
    records: Sequence[DetectorStateRecord],
    *,
    dataset: str,
    batch_id: int,
    query_id: str,
    updated_at: datetime,
) -> pa.Table:
    keys = [r.key for r in records]
    if len(set(keys)) != len(keys):
        raise InvalidArgument(f"dataset {dataset!r} batch {batch_id}: duplicate detector keys in one commit")
    rows = [
        {
            "dataset": dataset,
            "key": r.key,
            "detector": r.detector,
            "state": bytes(r.state),
            "last_seq": int(r.last_seq),
            "batch_id": batch_id,
            "query_id": query_id,
            "updated_at": updated_at,
        }
        for r in records
    ]
    return pa.Table.from_pylist(rows, schema=S.SCHEMAS[S.DETECTORS])


def quarantine_table(
    table: pa.Table, *, dataset: str, batch_id: int, query_id: str, ingested_at: datetime
) -> pa.Table:
    """Normalize a caller's quarantine rows to the ``quarantine`` schema.

    Required columns: ``reason``, ``raw`` (binary payloads are decoded as UTF-8 with
    replacement). Optional: ``source`` (e.g. the source coordinates as JSON), ``topic``,
    ``partition``, ``offset``, ``file``, ``line``, ``event_time``, ``ingested_at``, and
    ``dataset``/``batch_id``/``query_id`` (must equal the commit's). Unknown columns are
    an error naming them.
    """
    names = set(table.column_names)
    unknown = names - S.QUARANTINE_CALLER_COLUMNS
    if unknown:
        raise InvalidArgument(
            f"quarantine table has unknown columns {sorted(unknown)}; allowed: "
            f"{sorted(S.QUARANTINE_CALLER_COLUMNS)}"
        )
    expected = {"dataset": dataset, "batch_id": batch_id, "query_id": query_id}
    for name, value in expected.items():
        if name in names:
            found = set(table.column(name).to_pylist()) - {None}
            if found - {value}:
                raise InvalidArgument(
                    f"quarantine column {name!r} has {sorted(map(str, found))}, the commit is for {value!r}"
                )
    missing = [c for c in S.QUARANTINE_REQUIRED if c not in names]
    if missing:
        raise InvalidArgument(f"quarantine table lacks required columns {missing}")
    n = table.num_rows
    schema = S.SCHEMAS[S.QUARANTINE]
    arrays: list[Any] = []
    for field in schema:
        name = field.name
        if name == "dataset":
            arrays.append(pa.array([dataset] * n, pa.string()))
        elif name == "batch_id":
            arrays.append(pa.array([batch_id] * n, pa.int64()))
        elif name == "query_id":
            arrays.append(pa.array([query_id] * n, pa.string()))
        elif name == "date":
            arrays.append(pa.array([utc_date(ingested_at)] * n, pa.date32()))
        elif name in names:
            column = table.column(name)
            if name == "raw" and (pa.types.is_binary(column.type) or pa.types.is_large_binary(column.type)):
                column = pa.array(
                    [None if v is None else v.decode("utf-8", "replace") for v in column.to_pylist()],
                    pa.string(),
                )
            try:
                arrays.append(pc.cast(column, field.type))
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
                raise InvalidArgument(
                    f"quarantine column {name!r} ({column.type}) is not {field.type}: {exc}"
                ) from exc
        elif name == "ingested_at":
            arrays.append(pa.array([ingested_at] * n, field.type))
        else:
            arrays.append(pa.nulls(n, field.type))
    return pa.Table.from_arrays(arrays, schema=schema)
