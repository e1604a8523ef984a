"""Prometheus sink: an HTTP exporter inside the driver over the latest reports.

``PrometheusSink`` owns a private ``CollectorRegistry`` (no global state; several sinks can
live in one process) with one custom collector, ``ReportCollector``, and serves it with
``prometheus_client.start_http_server`` on ``host:port`` (port 0: a free port, see
``.port``/``.url``). ``emit`` only updates in-memory values under a lock: scraping never
touches Spark and a slow scraper never blocks the stream. Idempotent per ``(query_id,
batch_id)``: a replayed batch does not count twice.

Exposed families (label sets are fixed; cardinality is bounded by the configuration:
datasets x scopes(3) x analyzers, checks x constraints, detectors; never by data values,
window starts or batch ids):

Gauges (latest value):
  streamdq_metric_value{dataset,scope,entity,column,metric,params,where,where_id,window}
      scalar metric values. ``column`` carries the metric's Deequ *instance* (a column,
      comma-joined columns, ``*`` for the dataset, or a Compliance name): ``instance`` itself
      is reserved by Prometheus for the scrape target. ``params``, ``where`` and ``where_id``
      tell apart metrics of one name and column computed with other parameters or filters
      (``series.py``). Window scope: ``window="closed"`` is the most recent closed window's
      final value, ``window="open"`` the window still filling (partial; gone once the
      watermark closes it); batch and total series have no ``window`` label. Failed and
      distribution-valued metrics (Histogram, DataType, ApproxQuantiles) are not exported.
  streamdq_constraint_status{dataset,check,level,constraint_id,constraint,scope}  1 failing, 0 passing;
      one series per constraint id: a constraint whose text changes (a relearned program's
      new bounds) replaces its series, and a constraint the check no longer evaluates at a
      scope (a relearned program dropped it) is removed when the check next reports there
  streamdq_check_status{dataset,check,level}        0 Success, 1 Warning, 2 Error
  streamdq_dataset_pass{dataset,scope}              1 the latest measure/check/pass document of the
      scope passed the dataset's pass policy, 0 not (docs/measure-check-pass.md)
  streamdq_measure{dataset,scope,measure,key}       the latest value of each SQL measure per scope
      (window: the latest closed window); a list measure has one series per element (``key`` =
      its index), a map measure one per key, a single value none (no ``key`` label); numbers
      only (booleans 1/0), at most ``measure_series.MAX_KEYS`` keys per measure; a measure
      whose latest result failed or is not a number has no series (docs/prometheus.md)
  streamdq_last_batch_id{dataset}, streamdq_last_batch_timestamp_seconds{dataset}
  streamdq_batch_duration_seconds{dataset}          the handler's total time of the last batch
  streamdq_phase_duration_seconds{dataset,phase}    per phase (compute, commit, ...)
  streamdq_state_commit_seconds{dataset}            time of the last state-store commit
  streamdq_input_rows{dataset}                      rows of the last batch
  streamdq_rows_per_second{dataset}                 input rows / batch duration
  streamdq_batch_counter{dataset,counter}           every counter of the last batch
  streamdq_watermark_timestamp_seconds{dataset}, streamdq_event_time_max_timestamp_seconds{dataset}
  streamdq_query_heartbeat_timestamp_seconds{dataset}  last time the engine's heartbeat saw the query
      active (every ~10 s, batches or not)
  streamdq_query_waiting_for_data{dataset}          1 idle (no trigger running, no new input), 0 busy:
      with the heartbeat it tells an idle feed from a stalled job
Counters (since the exporter started):
  streamdq_batches_total{dataset}
  streamdq_rows_total{dataset,counter}              sums of the batch counters (input_rows, late_rows...)
  streamdq_constraint_failures_total{dataset,check,level,constraint_id,constraint,scope}
      one series per constraint id, labelled with the constraint's latest text
  streamdq_anomalies_total{dataset,scope,entity,column,metric,detector,constraint_id}
      at 0 from the first result of its ``has_no_anomalies`` constraint, before any anomaly
  streamdq_alerts_total{dataset,kind,severity}   at 0 for every alert kind and check level
      seen, before the first alert
  streamdq_measure_failures_total{dataset,measure}  failed results of a SQL measure (each scope
      counts); at 0 from the measure's first result
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from prometheus_client import CollectorRegistry, start_http_server
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from streamdq.connectors.sinks.base import SeenBatches
from streamdq.connectors.sinks.measure_series import measure_samples
from streamdq.connectors.sinks.prometheus_supervisor import SupervisorCollector
from streamdq.connectors.sinks.series import series_identity

from streamdq.alerts.alert import KINDS as ALERT_KINDS
from streamdq.alerts.alert import Alert
from streamdq.query_status import QueryStatus
from streamdq.report import BatchReport, ConstraintResult
from streamdq.supervision import SupervisorStatus

METRIC_LABELS = ("dataset", "scope", "entity", "column", "metric", "params", "where", "where_id", "window")
CONSTRAINT_LABELS = ("dataset", "check", "level", "constraint_id", "constraint", "scope")
CHECK_LABELS = ("dataset", "check", "level")
ANOMALY_LABELS = ("dataset", "scope", "entity", "column", "metric", "detector", "constraint_id")
ALERT_LABELS = ("dataset", "kind", "severity")
STATUS_CODE = {"Success": 0, "Warning": 1, "Error": 2}
_DETECTOR_TYPE = re.compile(r"detector=\{[^}]*'type': '([^']+)'")


@dataclass
class _Snapshot:
    metric_values: dict[tuple[str, ...], tuple[float, float]] = field(default_factory=dict)
    open_until: dict[tuple[str, ...], float] = field(default_factory=dict)  # open series -> window end
    # (dataset, check, level, scope) -> constraint_id -> (constraint text, 1 failing / 0 passing)
    constraint_status: dict[tuple[str, ...], dict[str, tuple[str, float]]] = field(default_factory=dict)
    check_status: dict[tuple[str, ...], float] = field(default_factory=dict)
    per_dataset: dict[str, dict[str, float]] = field(default_factory=dict)
    phases: dict[tuple[str, str], float] = field(default_factory=dict)
    batch_counters: dict[tuple[str, str], float] = field(default_factory=dict)
    batches: dict[str, float] = field(default_factory=dict)
    rows: dict[tuple[str, str], float] = field(default_factory=dict)
    # (dataset, check, level, constraint_id, scope) -> (latest constraint text, failures)
    failures: dict[tuple[str, ...], tuple[str, float]] = field(default_factory=dict)
    anomalies: dict[tuple[str, ...], float] = field(default_factory=dict)
    alerts: dict[tuple[str, ...], float] = field(default_factory=dict)
    # (dataset, scope) -> 1 the dataset's latest measure/check/pass document passed, 0 not
    dataset_pass: dict[tuple[str, str], float] = field(default_factory=dict)
    # (dataset, scope, measure) -> (window start or -inf, {key label: value}) of the latest result
    measures: dict[tuple[str, str, str], tuple[float, dict[str, float]]] = field(default_factory=dict)
    measure_failures: dict[tuple[str, str], float] = field(default_factory=dict)


def _seconds(value: datetime | None) -> float | None:
    return value.timestamp() if value is not None else None


def _window_order(window: tuple[str, str] | None) -> float:
    """A measure result's order within its scope: its window's start (ISO), -inf without one."""
    if window is None:
        return -math.inf
    start = datetime.fromisoformat(window[0])
    return (start if start.tzinfo is not None else start.replace(tzinfo=UTC)).timestamp()


def _anomaly_series(ds: str, r: ConstraintResult) -> tuple[str, ...] | None:
    """The anomaly counter's labels for a ``has_no_anomalies`` constraint result (None otherwise):
    the labels an ``Anomaly`` of that constraint gets, so its counter exists at 0 beforehand."""
    found = _DETECTOR_TYPE.search(r.constraint) if r.constraint.startswith("has_no_anomalies(") else None
    if found is None or r.metric is None:
        return None
    m = r.metric
    return (ds, r.scope, m.entity, m.instance, m.name, found.group(1), r.constraint_id)


class ReportCollector(Collector):
    """Keeps the latest values of the reports it was given and yields them on ``collect``."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._s = _Snapshot()
        self._seen = SeenBatches()

    def update(self, report: BatchReport, alerts: list[Alert]) -> bool:
        """Fold one report in; False (no change) if this (query_id, batch_id) was seen."""
        if not self._seen.first_time(report.query_id, report.batch_id):
            return False
        ds = report.dataset
        with self._lock:
            s = self._s
            closed = {w.start for w in report.closed_windows}
            watermark = _seconds(report.watermark)
            for scoped in report.metrics:
                m = scoped.metric
                value = m.scalar
                if value is None or not math.isfinite(value):
                    continue
                ident = series_identity(scoped.analyzer_key)
                window = scoped.window
                state = "" if window is None else "closed" if window.start in closed else "open"
                key = (
                    ds,
                    scoped.scope,
                    m.entity,
                    m.instance,
                    m.name,
                    ident.params,
                    ident.where,
                    ident.where_id,
                    state,
                )
                order = window.start.timestamp() if window is not None else -math.inf
                old = s.metric_values.get(key)
                if old is None or order >= old[0]:
                    s.metric_values[key] = (order, value)
                    if state == "open" and window is not None:
                        s.open_until[key] = window.end.timestamp()
            for open_key, end in list(s.open_until.items()):  # an open series ends when its window closes
                start = s.metric_values[open_key][0]
                if (watermark is not None and end <= watermark) or any(
                    c.timestamp() == start for c in closed
                ):
                    del s.open_until[open_key], s.metric_values[open_key]
            groups: dict[tuple[str, ...], dict[str, tuple[str, float]]] = {}
            for check in report.check_results:
                s.check_status[(ds, check.check, check.level)] = float(STATUS_CODE.get(check.status, 2))
                for r in check.constraint_results:
                    failed = 1.0 if r.failed else 0.0
                    groups.setdefault((ds, r.check, r.level, r.scope), {})[r.constraint_id] = (
                        r.constraint,
                        failed,
                    )
                    fkey = (ds, r.check, r.level, r.constraint_id, r.scope)
                    s.failures[fkey] = (r.constraint, s.failures.get(fkey, ("", 0.0))[1] + failed)
                    akey = _anomaly_series(ds, r)
                    if akey is not None:
                        s.anomalies.setdefault(akey, 0.0)
                    for kind in ALERT_KINDS:
                        s.alerts.setdefault((ds, kind, r.level), 0.0)
            # the constraints a check evaluated at a scope replace those it reported there before
            s.constraint_status.update(groups)
            for a in report.anomalies:
                akey = (
                    ds,
                    a.scope,
                    a.metric.entity,
                    a.metric.instance,
                    a.metric.name,
                    a.detector,
                    a.constraint_id,
                )
                s.anomalies[akey] = s.anomalies.get(akey, 0.0) + 1.0
            for alert in alerts:
                k = (ds, alert.kind, alert.severity)
                s.alerts[k] = s.alerts.get(k, 0.0) + 1.0
            for doc in report.measure_check_pass:  # in judgement order: the latest window wins
                s.dataset_pass[(ds, doc.scope or "batch")] = 1.0 if doc.passed else 0.0
            for measure in report.measures:
                fails = s.measure_failures.get((ds, measure.name), 0.0)
                s.measure_failures[(ds, measure.name)] = fails + (0.0 if measure.ok else 1.0)
                order = _window_order(measure.window)
                mkey = (ds, measure.scope, measure.name)
                held = s.measures.get(mkey)
                if held is None or order >= held[0]:  # a failed latest result drops the series
                    s.measures[mkey] = (order, measure_samples(measure))
            health = s.per_dataset.setdefault(ds, {})
            health["last_batch_id"] = float(report.batch_id)
            health["last_batch_timestamp_seconds"] = report.processing_time.timestamp()
            total = report.timings.get("total")
            rows = report.counters.get("input_rows")
            if total is not None:
                health["batch_duration_seconds"] = float(total)
            if "commit" in report.timings:
                health["state_commit_seconds"] = float(report.timings["commit"])
            if rows is not None:
                health["input_rows"] = float(rows)
                if total:
                    health["rows_per_second"] = float(rows) / float(total)
            for name, ts in (("watermark", report.watermark), ("event_time_max", report.event_time_max)):
                seconds = _seconds(ts)
                if seconds is not None:
                    health[f"{name}_timestamp_seconds"] = seconds
            for phase, seconds_ in report.timings.items():
                s.phases[(ds, phase)] = float(seconds_)
            for counter, n in report.counters.items():
                s.batch_counters[(ds, counter)] = float(n)
                s.rows[(ds, counter)] = s.rows.get((ds, counter), 0.0) + float(n)
            s.batches[ds] = s.batches.get(ds, 0.0) + 1.0
        return True

    def query_status(self, status: QueryStatus) -> None:
        """Fold in the engine heartbeat's poll of the query (``streamdq.engine.heartbeat``)."""
        with self._lock:
            health = self._s.per_dataset.setdefault(status.dataset, {})
            if status.active:
                health["query_heartbeat_timestamp_seconds"] = status.at
            health["query_waiting_for_data"] = 1.0 if status.waiting_for_data else 0.0

    def collect(self) -> Iterator[Metric]:
        with self._lock:
            s = self._s
            families: list[Metric] = []

            def gauge(name: str, doc: str, labels: tuple[str, ...], items: Any) -> None:
                fam = GaugeMetricFamily(name, doc, labels=list(labels))
                for key, value in items:
                    fam.add_metric(list(key), value)
                families.append(fam)

            def counter(name: str, doc: str, labels: tuple[str, ...], items: Any) -> None:
                fam = CounterMetricFamily(name, doc, labels=list(labels))
                for key, value in items:
                    fam.add_metric(list(key), value)
                families.append(fam)

            gauge(
                "streamdq_metric_value",
                "Latest value of a data-quality metric per scope (window scope: the most recent closed"
                ' window, window="closed", and the window still filling, window="open").',
                METRIC_LABELS,
                ((k, v[1]) for k, v in s.metric_values.items()),
            )
            gauge(
                "streamdq_constraint_status",
                "1 if the constraint failed in the latest batch that evaluated it, else 0.",
                CONSTRAINT_LABELS,
                (
                    ((ds, check, level, cid, text, scope), value)
                    for (ds, check, level, scope), group in s.constraint_status.items()
                    for cid, (text, value) in group.items()
                ),
            )
            gauge(
                "streamdq_check_status",
                "Latest check status: 0 Success, 1 Warning, 2 Error.",
                CHECK_LABELS,
                s.check_status.items(),
            )
            gauge(
                "streamdq_dataset_pass",
                "1 if the dataset's latest measure/check/pass document at this scope passed its pass"
                " policy, else 0 (window: the latest closed window).",
                ("dataset", "scope"),
                s.dataset_pass.items(),
            )
            gauge(
                "streamdq_measure",
                "Latest value of a SQL measure per scope (window: the latest closed window); list and"
                " map measures have one series per element or key (label key).",
                ("dataset", "scope", "measure", "key"),
                (
                    ((ds, scope, name, key), value)
                    for (ds, scope, name), (_, values) in s.measures.items()
                    for key, value in values.items()
                ),
            )
            health_docs = {
                "last_batch_id": "Id of the last processed microbatch.",
                "last_batch_timestamp_seconds": "Processing time of the last microbatch (unix seconds).",
                "batch_duration_seconds": "Handler time of the last microbatch.",
                "state_commit_seconds": "State-store commit time of the last microbatch.",
                "input_rows": "Input rows of the last microbatch.",
                "rows_per_second": "Input rows per second of handler time in the last microbatch.",
                "watermark_timestamp_seconds": "Event-time watermark after the last microbatch (unix seconds).",
                "event_time_max_timestamp_seconds": "Latest event time seen (unix seconds).",
                "query_heartbeat_timestamp_seconds": "Last time the driver saw the streaming query active.",
                "query_waiting_for_data": "1 while the query is idle waiting for new input, 0 while data"
                " is available or a batch runs (idle is not stalled).",
            }
            for key, doc in health_docs.items():
                gauge(
                    f"streamdq_{key}",
                    doc,
                    ("dataset",),
                    (((ds,), h[key]) for ds, h in s.per_dataset.items() if key in h),
                )
            gauge(
                "streamdq_phase_duration_seconds",
                "Time per handler phase in the last microbatch.",
                ("dataset", "phase"),
                s.phases.items(),
            )
            gauge(
                "streamdq_batch_counter",
                "Counters of the last microbatch (input_rows, late_rows, ...).",
                ("dataset", "counter"),
                s.batch_counters.items(),
            )
            counter(
                "streamdq_batches",
                "Microbatches processed since the exporter started.",
                ("dataset",),
                (((ds,), n) for ds, n in s.batches.items()),
            )
            counter(
                "streamdq_rows",
                "Sums of the microbatch counters since the exporter started.",
                ("dataset", "counter"),
                s.rows.items(),
            )
            counter(
                "streamdq_constraint_failures",
                "Failed evaluations of each constraint.",
                CONSTRAINT_LABELS,
                (
                    ((ds, check, level, cid, text, scope), n)
                    for (ds, check, level, cid, scope), (text, n) in s.failures.items()
                ),
            )
            counter(
                "streamdq_anomalies", "Anomalies flagged by detectors.", ANOMALY_LABELS, s.anomalies.items()
            )
            counter("streamdq_alerts", "Alerts emitted by the alert policy.", ALERT_LABELS, s.alerts.items())
            counter(
                "streamdq_measure_failures",
                "Failed results of a SQL measure (each scope counts).",
                ("dataset", "measure"),
                s.measure_failures.items(),
            )
        yield from families


class PrometheusSink:
    """Serves ``ReportCollector`` on ``http://host:port/metrics`` from a private registry."""

    @classmethod
    def _unit_test_params(cls, targets: Any) -> Iterator[dict[str, Any]]:
        """Specs for the conformance laws (streamdq.testing.sink_checks): any free loopback port."""
        yield {"type": "prometheus", "port": 0}
        yield {"type": "prometheus", "host": "127.0.0.1", "port": 0, "name": "metrics"}

    def __init__(self, host: str = "127.0.0.1", port: int = 9108, name: str = "prometheus") -> None:
        self.name = name
        self.collector = ReportCollector()
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(self.collector)
        self.supervision = SupervisorCollector()  # streamdq_supervisor_* (prometheus_supervisor.py)
        self.registry.register(self.supervision)
        self._server, self._thread = start_http_server(port, addr=host, registry=self.registry)
        self.host = host
        self.port = int(self._server.server_port)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/metrics"

    def emit(self, report: BatchReport, alerts: list[Alert]) -> None:
        self.collector.update(report, alerts)

    def query_status(self, status: QueryStatus) -> None:
        """The heartbeat's view of the query: alive, and idle or not (tells idle from stalled)."""
        self.collector.query_status(status)

    def supervisor_status(self, status: SupervisorStatus) -> None:
        """The supervisor's latest state (restarts, last failure) for the supervisor series."""
        self.supervision.update(status)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
