"""Read committed rows of one state table over a time range: the quarantine, the constraint
results and the alerts (kept in each batch's stored report).

``read_rows(store, table, ...)`` prunes by dataset and UTC ``date`` partition, filters
``since <= time < until`` on the table's time column (``TIME_COLUMNS``), keeps only rows of
committed batches (``store.committed_filter``), sorts by time (then batch id) and returns
the **last** ``limit`` rows (the newest ones, still in time order). ``alert_rows`` expands
the alerts of the stored reports in that range into one dict per alert
(``Alert.to_dict()``), newest ``limit`` last. Times must be timezone-aware (UTC is used).
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import pyarrow as pa
import pyarrow.dataset as pads
from streamdq.state import schemas as S
from streamdq.state.sql import conj, lit
from streamdq.state.tables import aware_utc, utc_date

from streamdq.errors import InvalidArgument

# the column each readable table is ranged and ordered on
TIME_COLUMNS = {
    S.QUARANTINE: "ingested_at",
    S.RESULTS: "time",
    S.REPORTS: "processing_time",
}


def read_rows(
    store: Any,
    table: str,
    *,
    dataset: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    limit: int | None = None,
    where: pads.Expression | None = None,
) -> pa.Table:
    """Committed rows of ``table`` (one of ``TIME_COLUMNS``) in ``[since, until)``; the newest
    ``limit`` of them in time order. An absent table gives an empty one of its schema."""
    if table not in TIME_COLUMNS:
        raise InvalidArgument(f"cannot range-read table {table!r}; expected one of {sorted(TIME_COLUMNS)}")
    if limit is not None and limit < 1:
        raise InvalidArgument(f"limit must be >= 1, got {limit}")
    since, until = aware_utc(since, "since"), aware_utc(until, "until")
    if since is not None and until is not None and until <= since:
        raise InvalidArgument(f"empty range: until {until.isoformat()} <= since {since.isoformat()}")
    time_col = TIME_COLUMNS[table]
    prune: list[str] = []
    expr: pads.Expression | None = where
    if dataset is not None:
        prune.append(f"dataset = {lit(dataset)}")
        expr = _and(expr, pads.field("dataset") == dataset)
    if since is not None:
        # the date partition is the UTC day of the row's point in time; results of a window
        # are dated by the window start (<= time), quarantine and reports by processing time
        prune.append(f"date >= {lit(utc_date(since))}")
        expr = _and(expr, pads.field(time_col) >= pa.scalar(since, S.TS))
    if until is not None:
        prune.append(f"date <= {lit(utc_date(until))}")
        expr = _and(expr, pads.field(time_col) < pa.scalar(until, S.TS))
    dt = store.table(table, dataset=dataset)
    if dt is None:
        return S.SCHEMAS[table].empty_table()
    dataset_ = dt.to_pyarrow_dataset(file_pruning_predicate=conj(*prune) if prune else None)
    rows = dataset_.to_table(filter=expr) if expr is not None else dataset_.to_table()
    rows = store.committed_filter(rows)
    if rows.num_rows == 0:
        return rows
    rows = rows.sort_by([(time_col, "ascending"), ("batch_id", "ascending")])
    if limit is not None and rows.num_rows > limit:
        rows = rows.slice(rows.num_rows - limit)
    return rows


def _and(expr: pads.Expression | None, term: pads.Expression) -> pads.Expression:
    return term if expr is None else expr & term


def alert_rows(
    store: Any,
    *,
    dataset: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    limit: int | None = None,
) -> list[dict[str, Any]]:
    """The alerts of the committed batches processed in ``[since, until)``, oldest first (the
    newest ``limit``), each the stored ``streamdq.alert/v1`` document."""
    reports = read_rows(store, S.REPORTS, dataset=dataset, since=since, until=until)
    alerts: list[dict[str, Any]] = []
    for text in reports.column("report").to_pylist():
        alerts.extend(json.loads(text).get("alerts") or ())
    if limit is not None and len(alerts) > limit:
        alerts = alerts[len(alerts) - limit :]
    return alerts
