"""The ``foreachBatch`` handler: one microbatch in, one committed ``BatchReport`` out.

Runs on the driver, once per microbatch, in this order (DESIGN.md section 5):

1. Replay check: a batch id the state store already committed is not recomputed; its
   stored report (with its alerts) is re-emitted and sinks de-duplicate.
2. Compute: ONE grouped pass over the microbatch (``AnalysisPlan.run_segmented``)
   yields every scan-shareable state per (bad record?, event-time window) segment, plus
   row counts and the max event time; one grouped pass per grouping set.
3. Merge: batch states (all good rows) into ``total``; each window's states into its
   open window unless the watermark already closed it (late rows: counted, quarantined,
   kept in batch and total). Advance the watermark; close windows it passed.
4. Judge: batch-scope constraints on batch metrics (not on an empty microbatch),
   window-scope constraints on windows closed in this batch, total-scope constraints on
   total metrics; detectors on the series they watch; the alert policy.
5. Commit states, metrics, results, quarantined rows and the report in one idempotent
   step (Delta application transaction per table, version = batch id).
6. Emit the report and alerts to every sink (sinks never block the stream).

Empty microbatch: nothing is merged, no batch-scope check is judged; total-scope
metrics are reported as they stand and windows may still close as time advances only
with data (the watermark moves with event time, as in Spark).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from streamdq.analyzers.base import Analyzer, col
from streamdq.analyzers.metric import DATASET, Metric
from streamdq.analyzers.state import State
from streamdq.engine.analysis import metrics_from_states
from streamdq.engine.judge import BatchJudge
from streamdq.engine.monitor import MONITOR_KEY_PREFIX, WindowMonitor
from streamdq.engine.plan import AnalysisPlan
from streamdq.engine.scopes import ScopeStates, StateMap, merge_maps, states_for
from streamdq.report import Anomaly, BatchReport, CheckResult, ScopedMetric, Window

log = logging.getLogger(__name__)

ERROR_COLUMN = "_streamdq_error"
RAW_COLUMN = "_streamdq_raw"
# schema-drift columns of the decoders -> the counter of rows in which each is non-empty
DRIFT_COLUMNS = {
    "_streamdq_unknown_fields": "unknown_field_rows",
    "_streamdq_missing_fields": "missing_field_rows",
    "_streamdq_type_errors": "type_error_rows",
}


# quarantine columns holding the row's source position: (name, decoder metadata column, type)
QUARANTINE_SOURCE_COLUMNS = (
    ("topic", "_streamdq_kafka_topic", "string"),
    ("partition", "_streamdq_kafka_partition", "int"),
    ("offset", "_streamdq_kafka_offset", "long"),
    ("file", "_streamdq_file", "string"),
)


def _as_utc(value: datetime | None) -> datetime | None:
    if value is None:
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class BatchHandler:
    """Callable for ``DataStreamWriter.foreachBatch``; also callable directly on static frames."""

    def __init__(
        self,
        *,
        dataset: str,
        query_id: str,
        judge: BatchJudge,
        window_seconds: float,
        watermark_seconds: float = 0.0,
        event_time: str | None = None,
        store: Any = None,
        sinks: Sequence[Any] = (),
        alert_policy: Any = None,
        quarantine: bool = True,
        max_groups: int = 100_000,
        extra_analyzers: Iterable[Analyzer] = (),
        maintenance_every: int = 100,
        retention_hours: float = 168.0,
        monitors: Sequence[WindowMonitor] = (),
    ) -> None:
        self.dataset = dataset
        self.query_id = query_id
        self.judge = judge
        self.event_time = event_time
        self.window_length = timedelta(seconds=window_seconds)
        self.watermark_delay = timedelta(seconds=watermark_seconds)
        self.store = store
        self.sinks = list(sinks)
        self.alert_policy = alert_policy
        self.quarantine = quarantine
        self.maintenance_every = maintenance_every
        self.retention_hours = retention_hours
        self.monitors = list(monitors)
        monitor_analyzers = [a for m in self.monitors for a in m.analyzers()]
        self.analyzers: list[Analyzer] = list(
            dict.fromkeys([*judge.analyzers(), *extra_analyzers, *monitor_analyzers])
        )
        self.plan = AnalysisPlan(self.analyzers, max_groups=max_groups)
        self.scopes = ScopeStates(self.window_length)
        self.watermark: datetime | None = None
        self.max_event_time: datetime | None = None
        self.policy_state: dict[str, Any] = {}
        self.last_report: BatchReport | None = None
        self.batches_committed = 0
        self._restored = False

    # -- restore -------------------------------------------------------------------------
    def restore(self) -> None:
        """Load running states, watermark and alert-policy state from the state store (once)."""
        if self._restored or self.store is None:
            self._restored = True
            return
        self._restored = True
        last = self.store.last_committed_batch(self.query_id)
        if last is None:
            return
        report = self.store.report(self.query_id, last)
        if report is not None:
            self.watermark = report.watermark
            self.max_event_time = report.event_time_max
            self.policy_state = dict(report.policy_state) if getattr(report, "policy_state", None) else {}
            self.last_report = report
        detector_states = self.store.load_detector_states(self.dataset)
        judge_states = {k: r.state for k, r in detector_states.items() if not k.startswith(MONITOR_KEY_PREFIX)}
        if judge_states:
            self.judge.load_states(judge_states)
        for monitor in self.monitors:
            record = detector_states.get(MONITOR_KEY_PREFIX + monitor.key)
            if record is not None:
                monitor.load_state(record.state)
        for (scope, window_start, key), state in self.store.load_states(self.dataset).items():
            if scope == "total":
                self.scopes.total[key] = state
            elif scope == "window" and window_start is not None:
                start = _as_utc(window_start)
                assert start is not None
                self.scopes.windows.setdefault(start, {})[key] = state

    # -- the handler ------------------------------------------------------------------------
    def __call__(self, df: DataFrame, batch_id: int) -> None:
        self.handle(df, int(batch_id))

    def handle(self, df: DataFrame, batch_id: int) -> BatchReport:
        started = time.perf_counter()
        self.restore()
        if self.store is not None:
            last = self.store.last_committed_batch(self.query_id)
            if last is not None and batch_id <= last:
                stored = self.store.report(self.query_id, batch_id)
                if stored is not None:
                    replayed = stored.as_replayed()
                    self._emit(replayed)
                    return replayed
        report, quarantine_rows = self._compute(df, batch_id, started)
        commit_started = time.perf_counter()
        if self.store is not None:
            self._commit(report, quarantine_rows)
        timings = dict(report.timings)
        timings["commit"] = time.perf_counter() - commit_started
        timings["total"] = time.perf_counter() - started
        report = replace(report, timings=timings)
        self.last_report = report
        self._emit(report)
        return report

    # -- compute ------------------------------------------------------------------------
    def _window_start(self) -> Column:
        """Start of the tumbling window of each row's event time (NULL for a NULL time).

        Computed arithmetically rather than with ``F.window``, which silently filters out
        rows whose event time is NULL: such rows must still count (batch and total).
        """
        assert self.event_time is not None
        length = int(self.window_length.total_seconds() * 1_000_000)
        micros = F.unix_micros(col(self.event_time).cast("timestamp"))
        return F.timestamp_micros(F.floor(micros / F.lit(length)) * F.lit(length))

    def _segments(self, df: DataFrame) -> tuple[list[Column], list[Column]]:
        cols = set(df.columns)
        bad = col(ERROR_COLUMN).isNotNull() if ERROR_COLUMN in cols else F.lit(False)
        if self.event_time:
            window_start = self._window_start()
            event_max = F.max(col(self.event_time))
        else:
            window_start = F.lit(None).cast("timestamp")
            event_max = F.lit(None).cast("timestamp")
        extra = [F.count(F.lit(1)), event_max]
        for name in DRIFT_COLUMNS:
            if name in cols:
                extra.append(F.sum(F.when(F.size(col(name)) > 0, 1).otherwise(0)))
            else:
                extra.append(F.lit(0))
        return [bad, window_start], extra

    def _compute(self, df: DataFrame, batch_id: int, started: float) -> tuple[BatchReport, Any]:
        processing_time = datetime.now(UTC)
        df = df.persist()
        try:
            segment, extra = self._segments(df)
            result = self.plan.run_segmented(df, segment, extra)
            watermark_before = self.watermark
            batch: StateMap = {}
            counters = {"input_rows": 0, "bad_rows": 0, "late_rows": 0}
            counters.update({name: 0 for name in DRIFT_COLUMNS.values()})
            touched: dict[datetime, StateMap] = {}
            late_windows: list[datetime] = []
            batch_max: datetime | None = None
            for (is_bad, window_start), row in result.segments.items():
                rows, event_max = int(row.extra[0] or 0), _as_utc(row.extra[1])
                counters["input_rows"] += rows
                for i, name in enumerate(DRIFT_COLUMNS.values()):
                    counters[name] += int(row.extra[2 + i] or 0)
                if is_bad:
                    counters["bad_rows"] += rows
                    continue
                if event_max is not None and (batch_max is None or event_max > batch_max):
                    batch_max = event_max
                keyed: StateMap = {}
                for analyzer, state in row.states.items():
                    keyed.setdefault(analyzer.state_key(), state)
                batch = merge_maps(batch, keyed)
                start = _as_utc(window_start)
                if start is None:
                    continue
                if self.scopes.is_closed(start, watermark_before):
                    counters["late_rows"] += rows
                    late_windows.append(start)
                    continue
                touched[start] = merge_maps(touched.get(start, {}), keyed)
            compute_seconds = time.perf_counter() - started
            quarantine_rows = None
            if self.quarantine and (counters["bad_rows"] or late_windows):
                quarantine_rows = self._quarantine_rows(df, batch_id, late_windows)
                counters["quarantined_rows"] = quarantine_rows.num_rows if quarantine_rows is not None else 0
        finally:
            df.unpersist()
        counters["spark_jobs"] = result.jobs
        # merge into running scopes
        self.scopes.add_batch(batch)
        for start, states in touched.items():
            self.scopes.add_window(start, states)
        if batch_max is not None and (self.max_event_time is None or batch_max > self.max_event_time):
            self.max_event_time = batch_max
        if self.max_event_time is not None:
            candidate = self.max_event_time - self.watermark_delay
            if self.watermark is None or candidate > self.watermark:
                self.watermark = candidate
        closed = self.scopes.close_up_to(self.watermark)
        # metrics and judgement
        good_rows = counters["input_rows"] - counters["bad_rows"]
        metrics: list[ScopedMetric] = []
        check_results: list[CheckResult] = []
        batch_metrics = self._metrics(batch, result.failures)
        metrics += self._scoped("batch", batch_metrics)
        metrics += self._counter_metrics(counters)
        anomalies: list[Anomaly] = []
        if good_rows > 0:
            results, found = self.judge.evaluate(batch_metrics, "batch", seq=batch_id, time=processing_time)
            check_results += results
            anomalies += found
        for start in sorted(touched):
            if start in self.scopes.windows:
                window = Window(start, start + self.window_length)
                metrics += self._scoped("window", self._metrics(self.scopes.windows[start], {}), window)
        closed_windows: list[Window] = []
        self._closed_states: list[tuple[Window, StateMap]] = []
        for start, states in closed:
            window = Window(start, start + self.window_length)
            closed_windows.append(window)
            self._closed_states.append((window, states))
            window_metrics = self._metrics(states, {})
            metrics += self._scoped("window", window_metrics, window, final=True)
            seq = self._window_index(start)
            results, found = self.judge.evaluate(window_metrics, "window", window, seq=seq, time=window.end)
            check_results += results
            anomalies += found
            for monitor in self.monitors:
                try:
                    out = monitor.observe(window, seq, window_metrics, states)
                except Exception:  # a monitor never stops the stream
                    log.exception("monitor %s failed on window %s", monitor.key, window.start)
                    continue
                metrics += [
                    ScopedMetric("window", replace(m, extra={**m.extra, "final": True}), window)
                    for m in out.metrics
                ]
                check_results += out.check_results
                anomalies += out.anomalies
        total_metrics = self._metrics(self.scopes.total, {})
        metrics += self._scoped("total", total_metrics)
        results, found = self.judge.evaluate(total_metrics, "total", seq=batch_id, time=processing_time)
        check_results += results
        anomalies += found
        report = BatchReport(
            dataset=self.dataset,
            query_id=self.query_id,
            batch_id=batch_id,
            processing_time=processing_time,
            metrics=tuple(metrics),
            check_results=tuple(check_results),
            anomalies=tuple(anomalies),
            timings={"compute": compute_seconds},
            counters=counters,
            closed_windows=tuple(closed_windows),
            event_time_max=self.max_event_time,
            watermark=self.watermark,
        )
        report = self._apply_alert_policy(report)
        return report, quarantine_rows

    def _window_index(self, start: datetime) -> int:
        """Position of a window in its series: window start // window length (strictly increasing)."""
        return int(start.timestamp() // self.window_length.total_seconds())

    def _metrics(self, by_key: StateMap, failures: Mapping[Analyzer, str]) -> dict[Analyzer, Metric]:
        return metrics_from_states(self.analyzers, states_for(self.analyzers, by_key), failures)

    @staticmethod
    def _scoped(
        scope: str, metrics: Mapping[Analyzer, Metric], window: Window | None = None, final: bool = False
    ) -> list[ScopedMetric]:
        out = []
        for analyzer, metric in metrics.items():
            if final:
                metric = replace(metric, extra={**metric.extra, "final": True})
            out.append(ScopedMetric(scope=scope, metric=metric, window=window, analyzer_key=analyzer.key()))
        return out

    def _counter_metrics(self, counters: Mapping[str, int]) -> list[ScopedMetric]:
        names = {
            "input_rows": "InputRows",
            "bad_rows": "BadRecords",
            "late_rows": "LateRows",
            "unknown_field_rows": "UnknownFieldRows",
            "missing_field_rows": "MissingFieldRows",
            "type_error_rows": "TypeErrorRows",
        }
        return [
            ScopedMetric("batch", Metric(DATASET, name, "*", value=float(counters.get(key, 0))))
            for key, name in names.items()
        ]

    def _quarantine_rows(self, df: DataFrame, batch_id: int, late_windows: list[datetime]) -> Any:
        """Collect bad and late rows (raw payload + reason) as an Arrow table: the error path only."""
        cols = set(df.columns)
        conds = []
        reason = F.lit(None).cast("string")
        if ERROR_COLUMN in cols:
            conds.append(col(ERROR_COLUMN).isNotNull())
            reason = col(ERROR_COLUMN)
        if late_windows and self.event_time:
            wstart = self._window_start()
            is_late = wstart.isin([F.lit(w) for w in late_windows])
            if ERROR_COLUMN in cols:
                is_late = is_late & col(ERROR_COLUMN).isNull()
            conds.append(is_late)
            reason = F.when(is_late, F.lit("late: event time behind the watermark")).otherwise(reason)
        if not conds:
            return None
        cond = conds[0]
        for c in conds[1:]:
            cond = cond | c
        if RAW_COLUMN in cols:
            raw = col(RAW_COLUMN)
        else:
            data_cols = [col(c) for c in df.columns if not c.startswith("_streamdq_")]
            raw = F.to_json(F.struct(*data_cols))
        # where the row came from: the decoders' metadata columns (or Spark's own kafka columns)
        coordinates = []
        for name, meta, dtype in QUARANTINE_SOURCE_COLUMNS:
            found = meta if meta in cols else name if name in cols else None
            if found is not None:
                coordinates.append(col(found).cast(dtype).alias(name))
        position = list(coordinates)
        if self.event_time and self.event_time in cols:
            position.append(col(self.event_time).cast("timestamp").alias("event_time"))
        selected = df.filter(cond).select(
            F.lit(self.dataset).alias("dataset"),
            F.lit(batch_id).cast("long").alias("batch_id"),
            reason.alias("reason"),
            raw.cast("string").alias("raw"),
            F.to_json(F.struct(*coordinates or [F.lit(None)])).alias("source"),
            *position,
        )
        return selected.toArrow()

    # -- alerts, commit, emit -----------------------------------------------------------
    def _apply_alert_policy(self, report: BatchReport) -> BatchReport:
        if self.alert_policy is None:
            return report
        alerts, new_state = self.alert_policy.evaluate(report, self.policy_state)
        self.policy_state = new_state
        return replace(report, alerts=tuple(a.to_dict() for a in alerts), policy_state=dict(new_state))

    def _commit(self, report: BatchReport, quarantine_rows: Any) -> None:
        from streamdq.state.records import records_for_batch

        closed = getattr(self, "_closed_states", [])
        records = records_for_batch(
            report,
            total=self.scopes.total,
            open_windows={
                Window(s, s + self.window_length): states for s, states in self.scopes.windows.items()
            },
            closed_windows=closed,
            analyzers=self.analyzers,
        )
        self.store.commit(
            self.query_id,
            report.batch_id,
            dataset=self.dataset,
            states=records.states,
            metrics=records.metrics,
            results=records.results,
            report=report,
            quarantine=quarantine_rows,
            detector_states=self._detector_records(report.batch_id),
        )
        self.batches_committed += 1
        if self.maintenance_every and self.batches_committed % self.maintenance_every == 0:
            try:
                self.store.maintain(retention_hours=self.retention_hours)
            except Exception:  # maintenance must never stop the stream
                log.exception("state store maintenance failed; will retry at the next interval")

    def _detector_records(self, batch_id: int) -> list[Any]:
        from streamdq.state.records import DetectorStateRecord

        records = [
            DetectorStateRecord(key=key, detector="has_no_anomalies", state=blob, last_seq=batch_id)
            for key, blob in self.judge.dump_states().items()
        ]
        records += [
            DetectorStateRecord(
                key=MONITOR_KEY_PREFIX + m.key, detector="monitor", state=m.dump_state(), last_seq=batch_id
            )
            for m in self.monitors
        ]
        return records

    def _emit(self, report: BatchReport) -> None:
        alerts = self._alerts_of(report)
        for sink in self.sinks:
            try:
                sink.emit(report, alerts)
            except Exception:  # a sink never kills the stream
                log.exception("sink %s failed on batch %s", type(sink).__name__, report.batch_id)

    @staticmethod
    def _alerts_of(report: BatchReport) -> list[Any]:
        docs = getattr(report, "alerts", ())
        if not docs:
            return []
        from streamdq.alerts.alert import Alert

        return [Alert.from_dict(d) for d in docs]

    # -- helpers for tests and the demo -------------------------------------------------
    def current_states(self) -> dict[str, State]:
        return dict(self.scopes.total)
