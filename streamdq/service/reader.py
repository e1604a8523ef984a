"""``StateReader``: the query service's read-only view of one Delta state store (delta-rs, no Spark).

Every read goes through ``DeltaStateStore`` for table access and its ``committed_filter``, so the
service shows committed batches only (a batch is committed once its report row exists), and
each call refreshes the tables to their newest version: the console follows a running job.
Nothing here writes; a missing table reads as empty.

Contract of the read methods: a ``dataset`` that has no committed report raises ``NotFound``
(naming the known datasets); times are ``TimeRange`` values; results are plain JSON-ready
values (``plain``: datetimes as epoch seconds, non-finite floats as the strings ``"NaN"``,
``"Infinity"``, ``"-Infinity"``). One reader serves concurrent requests: calls are serialized
by a lock (``DeltaStateStore`` is not thread-safe).
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as pads

from streamdq.service.errors import BadRequest, NotFound
from streamdq.service.times import TimeRange
from streamdq.state import schemas as S
from streamdq.state.delta_store import DeltaStateStore
from streamdq.state.queries import committed_watermark, history_of, latest_per
from streamdq.state.sql import conj, lit
from streamdq.state.tables import utc_date

AUTO_VALIDATE_KEY = "monitor:auto_validate"
QUALITY_KEY = "monitor:quality_score"
QUALITY_METRIC = "QualityScore"
MAX_PAGE = 1000


def plain(value: Any) -> Any:
    """A JSON-ready copy of ``value``: datetimes -> epoch seconds, NaN/inf -> strings, bytes dropped."""
    if isinstance(value, datetime):
        return value.astimezone(UTC).timestamp()
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, bytes | bytearray):
        return None
    if hasattr(value, "isoformat"):  # a date partition value
        return value.isoformat()
    return value


def _loads(text: str | None) -> Any:
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text


class StateReader:
    """Read-only queries over the state store at ``root`` (see the module docstring)."""

    def __init__(self, root: str, storage_options: dict[str, str] | None = None) -> None:
        self.root = root
        self.store = DeltaStateStore(root, storage_options=storage_options or None)
        self._lock = threading.RLock()
        self.memo: dict[tuple[Any, ...], Any] = {}  # derived values keyed by table version

    @contextmanager
    def locked(self) -> Iterator[DeltaStateStore]:
        """The store, held exclusively for one request."""
        with self._lock:
            yield self.store

    # -- tables ---------------------------------------------------------------------
    def rows(
        self,
        name: str,
        dataset: str,
        *,
        prune: tuple[str, ...] = (),
        where: pads.Expression | None = None,
        columns: list[str] | None = None,
        committed: bool = True,
    ) -> pa.Table:
        """Rows of ``dataset`` in table ``name`` (committed batches only unless ``committed=False``)."""
        dt = self.store.table(name)
        wanted = columns
        if committed and columns is not None:
            wanted = list(dict.fromkeys([*columns, "query_id", "batch_id"]))
        if dt is None:
            empty = S.SCHEMAS[name].empty_table()
            return empty.select(wanted) if wanted is not None else empty
        expr = pads.field("dataset") == dataset
        if where is not None:
            expr &= where
        table = dt.to_pyarrow_dataset(
            file_pruning_predicate=conj(f"dataset = {lit(dataset)}", *prune)
        ).to_table(columns=wanted, filter=expr)
        return self.store.committed_filter(table) if committed else table

    # -- datasets -----------------------------------------------------------------------
    def _reports(self) -> pa.Table:
        dt = self.store.table(S.REPORTS)
        cols = ["dataset", "query_id", "batch_id", "processing_time", "status"]
        if dt is None:
            return S.SCHEMAS[S.REPORTS].empty_table().select(cols)
        return self.store.committed_filter(dt.to_pyarrow_dataset().to_table(columns=cols))

    def dataset_names(self) -> list[str]:
        reports = self._reports()
        return sorted(str(d) for d in pc.unique(reports.column("dataset")).to_pylist() if d is not None)

    def require(self, dataset: str) -> None:
        """``NotFound`` unless ``dataset`` has a committed batch."""
        names = self.dataset_names()
        if dataset not in names:
            known = ", ".join(names) if names else "none yet"
            raise NotFound(f"unknown dataset {dataset!r}; datasets in {self.root}: {known}")

    def datasets(self) -> list[dict[str, Any]]:
        """Every dataset with its last committed batch, status, batch count and latest quality score."""
        reports = self._reports()
        if reports.num_rows == 0:
            return []
        counts = dict(
            zip(
                *reports.group_by("dataset")
                .aggregate([("batch_id", "count")])
                .select(["dataset", "batch_id_count"])
                .to_pydict()
                .values(),
                strict=True,
            )
        )
        latest = latest_per(reports, ["dataset"], ["processing_time", "batch_id"])
        out = []
        for row in sorted(latest.to_pylist(), key=lambda r: r["dataset"]):
            dataset = row["dataset"]
            out.append(
                {
                    "dataset": dataset,
                    "status": row["status"],
                    "lastBatch": row["batch_id"],
                    "queryId": row["query_id"],
                    "lastProcessingTime": plain(row["processing_time"]),
                    "batches": int(counts.get(dataset, 0)),
                    "qualityScore": self.latest_quality(dataset),
                }
            )
        return out

    def dataset(self, dataset: str) -> dict[str, Any]:
        """The dataset's last status with its last report's counters, watermark and alerts."""
        self.require(dataset)
        summary = next(d for d in self.datasets() if d["dataset"] == dataset)
        report = self.store.report(summary["queryId"], summary["lastBatch"])
        if report is not None:
            summary["watermark"] = plain(report.watermark)
            summary["eventTimeMax"] = plain(report.event_time_max)
            summary["counters"] = dict(report.counters)
            summary["lastAlerts"] = plain(list(report.alerts))
            summary["failedConstraints"] = [r.constraint for r in report.failed_constraints()]
        return summary

    def latest_quality(self, dataset: str) -> float | None:
        rows = self.rows(
            S.METRICS,
            dataset,
            prune=(f"name = {lit(QUALITY_METRIC)}", "scope = 'window'"),
            where=(pads.field("name") == QUALITY_METRIC) & (pads.field("scope") == "window"),
            columns=["time", "value", "processing_time"],
        )
        rows = rows.filter(pc.is_valid(rows.column("value")))
        if rows.num_rows == 0:
            return None
        last = rows.sort_by([("time", "ascending"), ("processing_time", "ascending")]).slice(
            rows.num_rows - 1
        )
        return float(last.column("value")[0].as_py())

    # -- metrics ----------------------------------------------------------------------
    def window_metric_rows(
        self,
        dataset: str,
        rng: TimeRange,
        where: pads.Expression | None = None,
        columns: list[str] | None = None,
    ) -> pa.Table:
        """Committed window-scope metric rows whose window starts in ``rng``."""
        expr = (
            (pads.field("scope") == "window")
            & (pads.field("time") >= pa.scalar(rng.start, S.TS))
            & (pads.field("time") < pa.scalar(rng.end, S.TS))
        )
        if where is not None:
            expr &= where
        return self.rows(
            S.METRICS,
            dataset,
            prune=(
                "scope = 'window'",
                f"date >= {lit(utc_date(rng.start))}",
                f"date <= {lit(utc_date(rng.end))}",
            ),
            where=expr,
            columns=columns,
        )

    def metric_catalog(self, dataset: str, rng: TimeRange, scope: str | None = None) -> list[dict[str, Any]]:
        """The distinct metrics (scope, entity, instance, name, analyzer key) stored in ``rng``."""
        self.require(dataset)
        expr = (pads.field("time") >= pa.scalar(rng.start, S.TS)) & (
            pads.field("time") < pa.scalar(rng.end, S.TS)
        )
        if scope is not None:
            expr &= pads.field("scope") == scope
        rows = self.rows(
            S.METRICS,
            dataset,
            prune=(f"date >= {lit(utc_date(rng.start))}", f"date <= {lit(utc_date(rng.end))}"),
            where=expr,
            columns=["scope", "entity", "instance", "name", "analyzer_key"],
        )
        keys = ["scope", "entity", "instance", "name", "analyzer_key"]
        groups = rows.group_by(keys).aggregate([("batch_id", "count")])
        out = [
            {
                "scope": r["scope"],
                "entity": r["entity"],
                "instance": r["instance"],
                "name": r["name"],
                "key": r["analyzer_key"] or "",
                "points": r["batch_id_count"],
            }
            for r in groups.to_pylist()
        ]
        return sorted(out, key=lambda r: (r["name"], r["instance"] or "", r["scope"] or "", r["key"]))

    def history(
        self,
        dataset: str,
        name: str,
        rng: TimeRange,
        *,
        scope: str | None = None,
        instance: str | None = None,
        key: str | None = None,
    ) -> list[dict[str, Any]]:
        """The series of metric ``name`` (one point per batch, or per window at window scope)."""
        self.require(dataset)
        try:
            table = self.store.history(
                dataset, name, instance=instance, scope=scope, start=rng.start, end=rng.end
            )
        except ValueError as exc:
            raise BadRequest(str(exc)) from None
        if key is not None:
            table = table.filter(pc.fill_null(pc.equal(table.column("analyzer_key"), key), False))
        return self._points(table)

    @staticmethod
    def _points(table: pa.Table) -> list[dict[str, Any]]:
        """History rows (``queries.HISTORY_COLUMNS``) as API points, converted column-wise."""

        def seconds(name: str) -> pa.Array:
            micros = pc.cast(pc.cast(table.column(name), pa.int64()), pa.float64())
            return pc.divide(micros, 1e6)

        view = pa.table(
            {
                "timestamp": seconds("time"),
                "scope": table.column("scope"),
                "windowStart": seconds("window_start"),
                "windowEnd": seconds("window_end"),
                "entity": table.column("entity"),
                "instance": table.column("instance"),
                "name": table.column("name"),
                "value": table.column("value"),
                "value_json": table.column("value_json"),
                "failure": table.column("failure"),
                "approximate": pc.fill_null(table.column("approximate"), False),
                "errorBound": table.column("error_bound"),
                "batchId": table.column("batch_id"),
                "key": pc.fill_null(table.column("analyzer_key"), ""),
                "open": table.column("open"),
            }
        )
        out = view.to_pylist()
        for p in out:
            text = p.pop("value_json")
            value = _loads(text) if text is not None else p["value"]
            if not isinstance(value, str | int) or isinstance(value, bool):
                value = plain(value)
            p["value"] = value
            if isinstance(p["errorBound"], float):
                p["errorBound"] = plain(p["errorBound"])
        return out

    def window_series(
        self, dataset: str, field: str, key: str | None, name: str, rng: TimeRange
    ) -> list[dict[str, Any]] | None:
        """The latest value per window of metric ``name`` of ``field``: of analyzer ``key``; with
        ``key=""`` of every analyzer of that name; with ``key=None`` of the preferred one (no
        ``where`` filter, then the shortest key). None when the field has no such metric in ``rng``."""
        where = (pads.field("instance") == field) & (pads.field("name") == name)
        rows = self.window_metric_rows(dataset, rng, where)
        if rows.num_rows == 0:
            return None
        if key is None:
            keys = [k or "" for k in pc.unique(rows.column("analyzer_key")).to_pylist()]
            key = min(keys, key=lambda k: ('"where"' in k, len(k), k))
        if key:
            rows = rows.filter(pc.fill_null(pc.equal(rows.column("analyzer_key"), key), False))
            if rows.num_rows == 0:
                return None
        table = history_of(rows, committed_watermark(self.store, rows))
        return self._points(table)

    # -- checks, alerts, quarantine -------------------------------------------------
    def results(
        self,
        dataset: str,
        rng: TimeRange,
        *,
        status: str | None = None,
        scope: str | None = None,
        limit: int = 1000,
    ) -> list[dict[str, Any]]:
        """Constraint outcomes with ``start <= time < end`` (newest ``limit``, in time order)."""
        self.require(dataset)
        expr = (pads.field("time") >= pa.scalar(rng.start, S.TS)) & (
            pads.field("time") < pa.scalar(rng.end, S.TS)
        )
        if status is not None:
            expr &= pads.field("status") == status
        if scope is not None:
            expr &= pads.field("scope") == scope
        rows = self.rows(
            S.RESULTS,
            dataset,
            prune=(f"date >= {lit(utc_date(rng.start))}", f"date <= {lit(utc_date(rng.end))}"),
            where=expr,
        )
        rows = rows.sort_by([("time", "ascending"), ("batch_id", "ascending")])
        if rows.num_rows > limit:
            rows = rows.slice(rows.num_rows - limit)
        out = []
        for r in rows.to_pylist():
            out.append(
                plain(
                    {
                        "timestamp": r["time"],
                        "check": r["check"],
                        "level": r["level"],
                        "constraint": r["constraint"],
                        "constraintId": r["constraint_id"],
                        "status": r["status"],
                        "message": r["message"],
                        "metric": {
                            "entity": r["metric_entity"],
                            "name": r["metric_name"],
                            "instance": r["metric_instance"],
                            "value": _loads(r["metric_value_json"])
                            if r["metric_value_json"] is not None
                            else r["metric_value"],
                        },
                        "scope": r["scope"],
                        "windowStart": r["window_start"],
                        "windowEnd": r["window_end"],
                        "bound": _loads(r["bound"]),
                        "batchId": r["batch_id"],
                    }
                )
            )
        return out

    def alerts(self, dataset: str, rng: TimeRange) -> list[dict[str, Any]]:
        """The alerts the policy raised (stored with each batch's report) whose time is in ``rng``.

        An alert's time (``timestamp``) is its window start at window scope, else its event time,
        else the batch's processing time."""
        self.require(dataset)
        rows = self.rows(
            S.REPORTS,
            dataset,
            prune=(f"date >= {lit(utc_date(rng.start))}",),
            where=pads.field("processing_time") >= pa.scalar(rng.start, S.TS),
            columns=["report", "processing_time"],
        )
        with_alerts = rows.filter(pc.invert(pc.match_substring(rows.column("report"), '"alerts": []')))
        out = []
        for text in with_alerts.column("report").to_pylist():
            for alert in json.loads(text).get("alerts", ()):
                ts = _alert_time(alert)
                if ts is not None and rng.start <= ts < rng.end:
                    out.append({"timestamp": ts.timestamp(), **plain(alert)})
        out.sort(key=lambda a: (a["timestamp"], str(a.get("alert_id"))))
        return out

    def quarantine(
        self, dataset: str, rng: TimeRange, *, offset: int, limit: int, reason: str | None
    ) -> dict[str, Any]:
        """One page of quarantined rows ingested in ``rng``, oldest first, with the total count."""
        self.require(dataset)
        if offset < 0 or not 1 <= limit <= MAX_PAGE:
            raise BadRequest(
                f"offset must be >= 0 and limit in 1..{MAX_PAGE} (got offset={offset}, limit={limit})"
            )
        expr = (pads.field("ingested_at") >= pa.scalar(rng.start, S.TS)) & (
            pads.field("ingested_at") < pa.scalar(rng.end, S.TS)
        )
        rows = self.rows(
            S.QUARANTINE,
            dataset,
            prune=(f"date >= {lit(utc_date(rng.start))}", f"date <= {lit(utc_date(rng.end))}"),
            where=expr,
        )
        if reason:
            rows = rows.filter(pc.fill_null(pc.match_substring(rows.column("reason"), reason), False))
        total = rows.num_rows
        rows = rows.sort_by(
            [
                ("ingested_at", "ascending"),
                ("batch_id", "ascending"),
                ("offset", "ascending"),
                ("line", "ascending"),
            ]
        ).slice(offset, limit)
        page = [plain({k: v for k, v in r.items() if k not in ("dataset", "date")}) for r in rows.to_pylist()]
        return {"total": total, "offset": offset, "limit": limit, "rows": page}

    # -- monitors -------------------------------------------------------------------
    def monitor_state(self, dataset: str, key: str) -> dict[str, Any] | None:
        """The JSON state of a window monitor (``monitor:<key>`` in the detectors table), or None."""
        record = self.store.load_detector_states(dataset).get(key)
        if record is None:
            return None
        try:
            doc = json.loads(record.state)
        except ValueError:
            return None
        return doc if isinstance(doc, dict) else None

    def programs(self, dataset: str) -> list[dict[str, Any]]:
        """The programs the job learned from history (``auto_validate:``), as of the last batch."""
        from streamdq.autovalidate.avh.program import Program

        self.require(dataset)
        doc = self.monitor_state(dataset, AUTO_VALIDATE_KEY) or {}
        out = []
        for column, spec in sorted(doc.get("programs", {}).items()):
            program = Program.from_dict(spec)
            out.append({"column": column, "description": program.show(), "program": plain(program.to_dict())})
        return out


def _alert_time(alert: dict[str, Any]) -> datetime | None:
    window = alert.get("window")
    candidates = [window.get("start") if isinstance(window, dict) else None]
    candidates += [alert.get("event_time"), alert.get("processing_time")]
    for text in candidates:
        if isinstance(text, str) and text:
            try:
                ts = datetime.fromisoformat(text)
            except ValueError:
                continue
            return ts.replace(tzinfo=UTC) if ts.tzinfo is None else ts.astimezone(UTC)
    return None
