"""The ``foreachBatch`` handler: one microbatch in, one committed ``BatchReport`` out.

Runs on the driver, once per microbatch, as stages that hand each other frozen values
(``stages.py``; DESIGN.md sections 1 and 5):

1. Replay check: a batch id the state store already committed is not recomputed; its
   stored report (with its alerts) is re-emitted and sinks de-duplicate.
2. Compute -> ``BatchStates``. ``BatchSizer`` estimates the batch's rows without a job
   (Spark's plan statistics, the source's cap, the previous batch) and picks the path:
   an empty microbatch runs no Spark job at all; a small one (up to ``small_batch_rows``)
   takes the Arrow path, ONE Spark job that projects every per-row input and also brings
   the bad rows to quarantine, reduced on the driver (late rows, known after the scope
   stage, are collected by a job of their own when there are any); a large one persists the frame and runs the fused passes (one segmented
   ``agg``, one grouped pass per grouping set, a quarantine job when there are bad or
   late rows). Both paths give the same states per (bad record?, event-time window).
3. Scopes -> ``ScopeUpdate`` (``ScopeStates.advance``): the batch into ``total``, each
   window's states into its open window unless the watermark already closed it (late rows:
   counted, quarantined, kept in batch and total), the watermark moved, windows closed.
4. Measure -> ``Measurement``: metrics of the batch, of open windows that took rows, of
   closed windows (final) and of the total.
5. Judge -> ``Judgement``: batch-scope constraints on batch metrics (not on a batch without
   good rows), window-scope constraints and window monitors on windows closed now,
   total-scope constraints on total metrics; detectors on the series they watch.
6. The alert policy, then commit states, metrics, results, quarantined rows and the report
   in one idempotent step (Delta application transaction per table, version = batch id).
7. Emit the report and alerts to every sink (sinks never block the stream).

Pipelined (``pipelined=True``: the runner's ``state.pipelined_commit``, with a store and a
local checkpoint): ``foreachBatch`` (``__call__``) runs stages 1-3, the ones that read the
frame, and hands a ``Computed`` value to the tail (stages 4-7) on ``pipeline.TailPipeline``'s
thread; the next call waits for that tail first. A query's first batch in the store runs whole
inside the call. The runner rewinds Spark's checkpoint to the store before each start
(``checkpoint_log.py``), since Spark logs a batch as committed when ``foreachBatch`` returns.
``handle`` is always whole.

Empty microbatch: nothing is merged, no batch-scope check is judged; total-scope metrics
are reported as they stand and the report is committed (so exactly-once holds); windows
close only as event time advances with data (the watermark moves with event time).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from streamdq import metadata_columns
from streamdq.analyzers.base import Analyzer, col
from streamdq.analyzers.metric import DATASET, Metric
from streamdq.analyzers.row_aggregate import RowAggregate
from streamdq.analyzers.state import State
from streamdq.engine.analysis import metrics_from_states
from streamdq.engine.arrow_path import DriverRefinement
from streamdq.engine.bad_data import DRIFT_NAME_COLUMNS, NAMES_CAP, capped_names
from streamdq.engine.bad_data import summarize as summarize_bad_data
from streamdq.engine.batch_size import BatchSizer
from streamdq.engine.event_time import EventTimeBounds, epoch_micros, from_epoch_micros
from streamdq.engine.faults import hold_forever, tail_hold_batch
from streamdq.engine.judge import BatchJudge
from streamdq.engine.measures import MeasureRunner, window_label
from streamdq.engine.monitor import MONITOR_KEY_PREFIX, WindowMonitor
from streamdq.engine.pipeline import TailPipeline
from streamdq.engine.plan import AnalysisPlan
from streamdq.engine.row_level import DEFAULT_MAX_ROWS as DEFAULT_ROW_LEVEL_MAX_ROWS
from streamdq.engine.row_level import RowLevelOutcome, RowLevelQuarantine
from streamdq.engine.scopes import ScopeStates, StateMap, merge_maps, states_by_key, states_for
from streamdq.engine.stages import BatchStates, Computed, Judgement, Measurement, ScopeUpdate
from streamdq.measure_result import MeasureResult
from streamdq.report import Anomaly, BatchReport, CheckResult, ScopedMetric, Window

if TYPE_CHECKING:  # the protocols the handler drives (wired in by the runner)
    from streamdq.alerts.policy import AlertPolicy
    from streamdq.connectors.sinks.base import Sink
    from streamdq.state.protocol import StateStore

log = logging.getLogger(__name__)

ERROR_COLUMN = metadata_columns.ERROR
RAW_COLUMN = metadata_columns.RAW
INVALID_UTF8_COLUMN = metadata_columns.INVALID_UTF8  # the payload was not valid UTF-8
# schema-drift columns of the decoders -> the counter of rows in which each is non-empty
DRIFT_COLUMNS = {
    metadata_columns.UNKNOWN_FIELDS: "unknown_field_rows",
    metadata_columns.MISSING_FIELDS: "missing_field_rows",
    metadata_columns.TYPE_ERRORS: "type_error_rows",
}


# positions in ``_segments``' extra aggregates: rows, max event micros, a count per drift column,
# implausible rows, invalid UTF-8 rows, drift names
EVENT_MAX_EXTRA = 1
IMPLAUSIBLE_EXTRA = 2 + len(DRIFT_COLUMNS)

# quarantine columns holding the row's source position: (name, decoder metadata column, type)
QUARANTINE_SOURCE_COLUMNS = (
    ("topic", metadata_columns.KAFKA_TOPIC, "string"),
    ("partition", metadata_columns.KAFKA_PARTITION, "int"),
    ("offset", metadata_columns.KAFKA_OFFSET, "long"),
    ("file", metadata_columns.FILE, "string"),
    ("line", metadata_columns.LINE, "long"),  # file sources that split files into lines
)


@dataclass(frozen=True)
class _BatchShape:
    """The compute stage's own expressions for one input schema: the segment columns, the
    extra per-segment aggregates, and which rows are bad with their quarantine columns.
    ``refine_inputs`` / ``refine_outputs``: (bad, implausible, event micros) / (bad,
    implausible), the columns the driver completes with the relative event-time bounds
    when this shape leaves them out (the small-batch path; ``DriverRefinement``)."""

    segment: list[Column]
    extra: list[RowAggregate]
    bad_filter: Column | None
    bad_columns: list[tuple[str, Column]]
    refine_inputs: tuple[Column, ...] = ()
    refine_outputs: tuple[Column, ...] = ()


def _concat(first: pa.Table | None, second: pa.Table | None) -> pa.Table | None:
    """Two quarantine tables as one (either may be None)."""
    if first is None or first.num_rows == 0:
        return second
    if second is None or second.num_rows == 0:
        return first
    return pa.concat_tables([first, second.select(first.column_names).cast(first.schema)])


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
        store: StateStore | None = None,
        sinks: Sequence[Sink] = (),
        alert_policy: AlertPolicy | None = None,
        quarantine: bool = True,
        max_groups: int = 100_000,
        small_batch_rows: int = 250_000,
        rows_cap: int | None = None,
        extra_analyzers: Iterable[Analyzer] = (),
        maintenance_every: int = 100,
        retention_hours: float = 168.0,
        monitors: Sequence[WindowMonitor] = (),
        event_time_bounds: EventTimeBounds | None = None,
        row_level_max_rows: int = DEFAULT_ROW_LEVEL_MAX_ROWS,
        measures: MeasureRunner | None = None,
        pipelined: bool = False,
    ) -> None:
        self.dataset = dataset
        self.query_id = query_id
        self.judge = judge
        self.event_time = event_time
        self.event_time_bounds = event_time_bounds or EventTimeBounds()
        self.window_length = timedelta(seconds=window_seconds)
        self._window_micros = max(1, self.window_length // timedelta(microseconds=1))
        self.watermark_delay = timedelta(seconds=watermark_seconds)
        self.store = store
        self.sinks = list(sinks)
        self.alert_policy = alert_policy
        self.quarantine = quarantine
        self.row_level = RowLevelQuarantine(judge.checks, row_level_max_rows)  # row_level.py
        self.maintenance_every = maintenance_every
        self.retention_hours = retention_hours
        self.monitors = list(monitors)
        monitor_analyzers = [a for m in self.monitors for a in m.analyzers()]
        self.measures = measures or MeasureRunner(())  # SQL measures (engine/measures.py)
        self.analyzers: list[Analyzer] = list(
            dict.fromkeys(
                [*judge.analyzers(), *extra_analyzers, *monitor_analyzers, *self.measures.analyzers()]
            )
        )
        self.plan = AnalysisPlan(self.analyzers, max_groups=max_groups)
        self.scopes = ScopeStates(self.window_length, watermark_delay=self.watermark_delay)
        self.sizer = BatchSizer(small_batch_rows=small_batch_rows, rows_cap=rows_cap)
        self._shapes: dict[tuple[str, bool], _BatchShape] = {}
        self.policy_state: dict[str, Any] = {}
        self.last_report: BatchReport | None = None
        self.batches_committed = 0
        self._restored = False
        # the last batch id committed for this query: read from the store once (restore), then
        # kept by this handler (Spark runs one instance of a query per checkpoint), which saves
        # a Delta log refresh per microbatch
        self._last_committed: int | None = None
        # pipelined: foreachBatch returns once the batch's states are computed; its judge,
        # commit and emit run on the pipeline's thread (pipeline.py)
        self.pipelined = pipelined
        self.pipeline = TailPipeline()
        self._hold_tail = tail_hold_batch()  # tests only (faults.py); None in production

    @property
    def watermark(self) -> datetime | None:
        """The event-time watermark (max event time seen minus the delay; never goes back)."""
        return self.scopes.watermark

    @property
    def max_event_time(self) -> datetime | None:
        return self.scopes.max_event_time

    # -- restore -------------------------------------------------------------------------
    def restore(self) -> None:
        """Load running states, watermark and alert-policy state from the state store (once)."""
        if self._restored or self.store is None:
            self._restored = True
            return
        self._restored = True
        last = self.store.last_committed_batch(self.query_id)
        self._last_committed = last
        if last is None:
            return
        report = self.store.report(self.query_id, last)
        if report is not None:
            self.scopes.watermark = _as_utc(report.watermark)
            self.scopes.max_event_time = _as_utc(report.event_time_max)
            stored_max = self.scopes.max_event_time
            if stored_max is not None and not self.event_time_bounds.plausible(stored_max, datetime.now(UTC)):
                # pushed there before event-time bounds existed (a record stamped 9999): every
                # later record would be late for good; the next plausible rows set it again
                log.warning(
                    "dataset %s: the stored max event time %s is implausible (%s); the watermark "
                    "is reset and set again by the next plausible rows",
                    self.dataset,
                    stored_max.isoformat(),
                    self.event_time_bounds.describe(),
                )
                self.scopes.watermark = self.scopes.max_event_time = None
            self.policy_state = dict(report.policy_state) if getattr(report, "policy_state", None) else {}
            self.last_report = report
        detector_states = self.store.load_detector_states(self.dataset)
        judge_states = {
            k: r.state for k, r in detector_states.items() if not k.startswith(MONITOR_KEY_PREFIX)
        }
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
        """``foreachBatch``'s call. Pipelined (``pipelined=True``): the batch's compute runs
        here, its tail (measure, judge, policy, commit, emit) in the background while Spark
        moves on; the next call waits for it first. Otherwise the whole of ``handle``."""
        batch_id = int(batch_id)
        waited = time.perf_counter()
        self.finish_pending()
        waited = time.perf_counter() - waited
        self.restore()
        if not self.pipelined or self._last_committed is None:
            # the query's first batch in the store is committed before foreachBatch returns:
            # a store holding no batch of the query is then never behind Spark's commit log,
            # and the checkpoint's rewind (checkpoint_log.py) can tell a crash from a new store
            self.handle(df, batch_id)
            return
        if self._replayed(batch_id) is not None:
            return
        computed = replace(self._front(df, batch_id), waited_seconds=waited)
        self.pipeline.submit(batch_id, lambda: self._tail(computed))

    def finish_pending(self, timeout: float | None = None) -> BatchReport | None:
        """Wait for the pipelined tail still running (the previous batch's judge, commit and
        emit); its report, or None when none was pending. Raises
        :class:`~streamdq.engine.pipeline.PipelinedBatchFailed` (that batch is not committed)
        if it failed, ``TimeoutError`` if it is still running after ``timeout`` s."""
        report: BatchReport | None = self.pipeline.wait(timeout)
        return report

    def handle(self, df: DataFrame, batch_id: int, *, poison: str | None = None) -> BatchReport:
        """Compute, judge, commit and emit one microbatch, and return its report (after the
        pipelined tail of the batch before, if one is still running). ``poison`` (the
        supervisor's word that this batch id keeps failing, with its last error): nothing is
        computed; every row goes to quarantine with the reason ``poison batch: <poison>`` and
        the batch commits as an empty one (its id is used, so exactly-once holds and the stream
        moves on)."""
        self.finish_pending()
        replayed = self._replayed(batch_id)
        if replayed is not None:
            return replayed
        return self._tail(self._front(df, batch_id, poison=poison))

    def _replayed(self, batch_id: int) -> BatchReport | None:
        """Stage 1: a batch id the store already committed is re-emitted from its stored report
        (None: the batch is new)."""
        self.restore()
        if self.store is None:
            return None
        last = self._last_committed
        if last is None or batch_id > last:
            return None
        stored = self.store.report(self.query_id, batch_id)
        if stored is None:
            return None
        replayed = stored.as_replayed()
        self._emit(replayed)
        return replayed

    def _front(self, df: DataFrame, batch_id: int, *, poison: str | None = None) -> Computed:
        """Stages 2 and 3, the part that reads the batch's frame: states, scope update,
        quarantined rows, SQL measures and row-level outcome."""
        started = time.perf_counter()
        poisoned = None
        if poison is not None:
            poisoned = self._quarantine_whole(df, batch_id, f"poison batch: {poison}")
            df = df.limit(0)
        processing_time = datetime.now(UTC)
        estimate = self.sizer.estimate(df)
        path = self.sizer.choose(estimate)
        persisted = path == "fused"
        if persisted:
            df = df.persist()
        try:
            states, quarantine_rows = self._compute(df, batch_id, path, processing_time)
            self.sizer.learn(estimate, int(states.counters.get("input_rows", 0)))
            update = self.scopes.advance(states)
            if states.path == "fused":
                quarantine_rows = self._quarantine_fused(df, batch_id, states, update)
            elif states.path == "arrow" and update.late:
                # late rows are known only after the scope stage: the error path's own job
                late_rows = self._quarantine_fused(df, batch_id, states, update, bad=False)
                quarantine_rows = _concat(quarantine_rows, late_rows)
            row_level = self._row_level(df, batch_id, states)
            sql_measures = self._sql_measures(df, states)
        finally:
            if persisted:
                df.unpersist()
        if poisoned is not None:
            quarantine_rows = _concat(quarantine_rows, poisoned)
            states = replace(states, counters={**states.counters, "poison_rows": poisoned.num_rows})
        row_level_metrics: tuple[ScopedMetric, ...] = ()
        if self.row_level.active:
            quarantine_rows = _concat(quarantine_rows, row_level.rows)
            states = replace(states, counters={**states.counters, **row_level.counters()})
            row_level_metrics = tuple(row_level.metrics())
        return Computed(
            batch_id=batch_id,
            processing_time=processing_time,
            states=states,
            update=update,
            quarantine_rows=quarantine_rows,
            sql_measures=sql_measures,
            row_level_metrics=row_level_metrics,
            compute_seconds=time.perf_counter() - started,
        )

    def _tail(self, computed: Computed) -> BatchReport:
        """Stages 4-7, from ``computed`` alone: measure, judge, alert policy, commit, emit."""
        tail_started = time.perf_counter()
        batch_id, states, update = computed.batch_id, computed.states, computed.update
        quarantine_rows = computed.quarantine_rows
        measurement = self._measure(states, update)
        measurement = replace(
            measurement, measures=computed.sql_measures + self._compiled_measures(states, update)
        )
        judgement = self._judge(batch_id, computed.processing_time, states, measurement)
        report = self._report(
            batch_id, computed.processing_time, states, update, measurement, judgement, quarantine_rows
        )
        report = replace(report, timings={"compute": computed.compute_seconds})
        if computed.row_level_metrics:
            report = replace(report, metrics=report.metrics + computed.row_level_metrics)
        report = replace(report, bad_data=summarize_bad_data(quarantine_rows, states.drift_names))
        report = self._apply_alert_policy(report)
        commit_started = time.perf_counter()
        if self.pipelined and batch_id == self._hold_tail:
            hold_forever()  # tests only: a kill while the commit log is ahead of the store
        if self.store is not None:
            self._commit(report, quarantine_rows, update.closed)
        timings = dict(report.timings)
        now = time.perf_counter()
        timings["commit"] = now - commit_started
        # the handler's whole time; with a pipelined tail, the tail's own part of it is "tail"
        # (off the trigger's path unless the next batch waits for it)
        timings["total"] = computed.compute_seconds + (now - tail_started)
        if self.pipelined:
            timings["tail"] = now - tail_started
            timings["wait"] = computed.waited_seconds
        report = replace(report, timings=timings)
        self.last_report = report
        self._emit(report)
        return report

    # -- stage 2: compute ------------------------------------------------------------------
    def _event_micros(self) -> Column:
        """Each row's event time as epoch microseconds (a BIGINT: any timestamp Spark holds,
        year 0001 and 9999 included, without a driver-side datetime)."""
        assert self.event_time is not None
        return F.unix_micros(col(self.event_time).cast("timestamp"))

    def _window_key(self) -> Column:
        """The tumbling window of each row's event time as an integer, event micros // window
        length (NULL for a NULL time); the driver turns plausible keys into window starts.

        Computed arithmetically rather than with ``F.window``, which silently filters out
        rows whose event time is NULL: such rows must still count (batch and total).
        """
        return F.floor(self._event_micros() / F.lit(self._window_micros)).cast("long")

    def _window_keys_of(self, starts: Iterable[datetime]) -> list[Column]:
        return [F.lit(epoch_micros(s) // self._window_micros) for s in starts]

    def _implausible(
        self, cols: set[str], *, now: Column | None = None, relative: bool = True
    ) -> Column | None:
        """TRUE for a row whose event time is outside ``event_time_bounds`` (event_time.py);
        ``relative=False``: outside its absolute bounds."""
        if not self.event_time or self.event_time not in cols:
            return None
        return self.event_time_bounds.implausible(self._event_micros(), now=now, relative=relative)

    def _relative_bounds(self, cols: set[str]) -> bool:
        """True when the event time is tested against bounds relative to processing time."""
        return bool(self.event_time and self.event_time in cols and self.event_time_bounds.relative)

    def _bad(self, cols: set[str], *, now: Column | None = None, relative: bool = True) -> Column:
        """TRUE for a row the analyzers must not see: a decode error or an implausible event
        time (``relative=False``: implausible by the absolute bounds)."""
        conds = [col(ERROR_COLUMN).isNotNull()] if ERROR_COLUMN in cols else []
        implausible = self._implausible(cols, now=now, relative=relative)
        if implausible is not None:
            conds.append(implausible)
        if not conds:
            return F.lit(False)
        return conds[0] if len(conds) == 1 else conds[0] | conds[1]

    def _shape(self, df: DataFrame, *, relative: bool = True) -> _BatchShape:
        """The Spark expressions the compute stage adds to the analyzers', built once per
        schema (each Spark expression costs a py4j round trip). ``relative=False``: without
        the event-time bounds relative to processing time, which the driver then completes
        (the refine columns); Spark would otherwise fold ``current_timestamp()`` into a literal
        of its generated code and compile the projection anew for every microbatch."""
        key = (df.schema.json(), relative)
        shape = self._shapes.get(key)
        if shape is None:
            segment, extra = self._segments(df, relative=relative)
            bad_filter, bad_columns = self._quarantine_selection(df, None, relative=relative)
            refine_in: tuple[Column, ...] = ()
            refine_out: tuple[Column, ...] = ()
            if not relative and self._relative_bounds(set(df.columns)):
                bad, implausible = segment[0], extra[IMPLAUSIBLE_EXTRA].inputs[0]
                refine_in = (bad, implausible, extra[EVENT_MAX_EXTRA].inputs[0])
                refine_out = (bad, implausible)
            shape = _BatchShape(segment, extra, bad_filter, bad_columns, refine_in, refine_out)
            self._shapes[key] = shape
        return shape

    def _refinement(self, shape: _BatchShape, now: datetime, flagged: list[int]) -> DriverRefinement:
        """The driver's half of the event-time test for ``shape`` (built with
        ``relative=False``) at processing time ``now``; ``flagged`` gets the number of rows it
        found implausible that Spark had not (they are outside the one job's side rows)."""
        bounds = self.event_time_bounds

        def apply(arrays: Sequence[pa.ChunkedArray]) -> list[Any]:
            bad, implausible, micros = arrays
            relative = bounds.relative_implausible(micros, now)
            flagged.append(int(pc.sum(pc.and_(relative, pc.invert(bad))).as_py() or 0))
            return [pc.or_(bad, relative), pc.or_(implausible, relative)]

        return DriverRefinement(shape.refine_inputs, shape.refine_outputs, apply)

    def _segments(self, df: DataFrame, *, relative: bool = True) -> tuple[list[Column], list[RowAggregate]]:
        """Segment columns (bad record?, window key) and the extra per-segment aggregates:
        rows, max event time (epoch micros), rows with each kind of schema drift, rows with an
        implausible event time, rows whose payload was not valid UTF-8. Integers only: no event time reaches the driver as a datetime
        before it is known to be plausible."""
        cols = set(df.columns)
        bad = self._bad(cols, relative=relative)
        window_key = self._window_key() if self.event_time else F.lit(None).cast("long")
        extra = [RowAggregate("rows")]
        extra.append(
            RowAggregate("max", (self._event_micros(),))
            if self.event_time
            else RowAggregate("max", (F.lit(None).cast("long"),))
        )
        for name in DRIFT_COLUMNS:
            present = F.size(col(name)) > 0 if name in cols else F.lit(False)
            extra.append(RowAggregate("count_if", (present,)))
        implausible = self._implausible(cols, relative=relative)
        extra.append(RowAggregate("count_if", (F.lit(False) if implausible is None else implausible,)))
        utf8 = col(INVALID_UTF8_COLUMN) if INVALID_UTF8_COLUMN in cols else F.lit(False)
        extra.append(RowAggregate("count_if", (utf8,)))
        # the names of new and missing fields, in the same pass (only drifting rows carry an array)
        for name in DRIFT_NAME_COLUMNS:
            names = F.when(F.size(col(name)) > 0, col(name)) if name in cols else F.lit(None)
            extra.append(RowAggregate("distinct_strings", (names.cast("array<string>"),), NAMES_CAP))
        return [bad, window_key], extra

    def _compute(self, df: DataFrame, batch_id: int, path: str, now: datetime) -> tuple[BatchStates, Any]:
        """States per (bad?, window) segment of one microbatch, and its rows to quarantine
        when the path brought them along (the Arrow path; the fused path collects them after
        the scope stage, on the error path only). ``now``: the batch's processing time, for
        the event-time bounds relative to it on the Arrow path (the fused path asks Spark's
        ``current_timestamp()``)."""
        counters = {"input_rows": 0, "bad_rows": 0}
        counters.update({name: 0 for name in DRIFT_COLUMNS.values()})
        counters["implausible_event_time_rows"] = 0
        counters["invalid_utf8_rows"] = 0
        if path == "empty":
            return BatchStates(counters=counters, path="empty"), None
        shape = self._shape(df)
        refine: DriverRefinement | None = None
        flagged: list[int] = []  # rows only the driver found implausible (relative bounds)
        if path == "arrow" and self._relative_bounds(set(df.columns)):
            fused = shape
            shape = self._shape(df, relative=False)
            refine = self._refinement(shape, now, flagged)
        side: list[tuple[str, Column]] = []
        side_filter: Column | None = None
        if self.quarantine and path == "arrow":  # the bad rows come along in the one job
            side_filter, side = shape.bad_filter, shape.bad_columns
        result = self.plan.run_segmented(
            df,
            shape.segment,
            shape.extra,
            path=path,
            side=side,
            side_filter=side_filter,
            refine=refine,
            fused_columns=None if refine is None else (fused.segment, fused.extra),
        )
        batch: StateMap = {}
        windows: dict[datetime, StateMap] = {}
        window_rows: dict[datetime, int] = {}
        batch_max: datetime | None = None
        drift_names: dict[str, set[str]] = {}
        for (is_bad, window_key), row in result.segments.items():
            rows = int(row.extra[0] or 0)
            counters["input_rows"] += rows
            for i, name in enumerate(DRIFT_COLUMNS.values()):
                counters[name] += int(row.extra[2 + i] or 0)
            counters["implausible_event_time_rows"] += int(row.extra[IMPLAUSIBLE_EXTRA] or 0)
            counters["invalid_utf8_rows"] += int(row.extra[IMPLAUSIBLE_EXTRA + 1] or 0)
            for i, name in enumerate(DRIFT_NAME_COLUMNS):
                drift_names.setdefault(name, set()).update(row.extra[IMPLAUSIBLE_EXTRA + 2 + i] or ())
            if is_bad:
                counters["bad_rows"] += rows
                continue
            # a good segment's event times are plausible: inside datetime's range
            event_max = (
                None if row.extra[EVENT_MAX_EXTRA] is None else from_epoch_micros(row.extra[EVENT_MAX_EXTRA])
            )
            if event_max is not None and (batch_max is None or event_max > batch_max):
                batch_max = event_max
            keyed = states_by_key(row.states)
            batch = merge_maps(batch, keyed)
            if window_key is None:
                continue
            start = from_epoch_micros(int(window_key) * self._window_micros)
            windows[start] = merge_maps(windows.get(start, {}), keyed)
            window_rows[start] = window_rows.get(start, 0) + rows
        quarantine_rows = None
        if result.path == "arrow" and result.side is not None and result.side.num_rows:
            side_rows: pa.Table = result.side
            n = side_rows.num_rows
            quarantine_rows = pa.table(
                {
                    "dataset": pa.array([self.dataset] * n, pa.string()),
                    "batch_id": pa.array([batch_id] * n, pa.int64()),
                    **{name: side_rows[name] for name in side_rows.column_names},
                }
            )
        if result.path == "arrow" and self.quarantine and any(flagged):
            # implausible by a relative bound only: found on the driver, not in the side rows
            quarantine_rows = _concat(quarantine_rows, self._quarantine_relative(df, batch_id, now))
        states = BatchStates(
            batch=batch,
            windows=windows,
            window_rows=window_rows,
            failures=dict(result.failures),
            counters=counters,
            event_time_max=batch_max,
            path=result.path,
            spark_jobs=result.jobs,
            drift_names=capped_names(drift_names),
        )
        return states, quarantine_rows

    # -- stage 4: measure ------------------------------------------------------------------
    def _measure(self, states: BatchStates, update: ScopeUpdate) -> Measurement:
        metrics: list[ScopedMetric] = []
        batch_metrics = self._metrics(states.batch, states.failures)
        metrics += self._scoped("batch", batch_metrics)
        for start in update.touched:
            if start in self.scopes.windows:
                window = Window(start, start + self.window_length)
                metrics += self._scoped("window", self._metrics(self.scopes.windows[start], {}), window)
        closed = []
        for window, window_states in update.closed:
            window_metrics = self._metrics(window_states, {})
            metrics += self._scoped("window", window_metrics, window, final=True)
            closed.append((window, window_metrics, window_states))
        total_metrics = self._metrics(self.scopes.total, {})
        metrics += self._scoped("total", total_metrics)
        return Measurement(tuple(metrics), batch_metrics, total_metrics, tuple(closed))

    # -- stage 5: judge --------------------------------------------------------------------
    def _judge(
        self, batch_id: int, processing_time: datetime, states: BatchStates, measurement: Measurement
    ) -> Judgement:
        check_results: list[CheckResult] = []
        anomalies: list[Anomaly] = []
        metrics: list[ScopedMetric] = []
        documents: list[Any] = []  # measure/check/pass per scope (judge.document)

        def document(
            scope: str, results: list[CheckResult], measures: list[Any], window: Window | None
        ) -> None:
            doc = self.judge.document(scope, results, measures, window)
            if doc is not None:
                documents.append(doc)

        if states.good_rows > 0:
            measures = [m for m in measurement.measures if m.scope == "batch"]
            results, found = self.judge.evaluate(
                measurement.batch, "batch", seq=batch_id, time=processing_time, measures=measures
            )
            check_results += results
            anomalies += found
            document("batch", results, measures, None)
        for window, window_metrics, window_states in measurement.closed:
            seq = self._window_index(window.start)
            label = window_label(window.start, window.end)
            measures = [m for m in measurement.measures if m.scope == "window" and m.window == label]
            results, found = self.judge.evaluate(
                window_metrics, "window", window, seq=seq, time=window.end, measures=measures
            )
            check_results += results
            anomalies += found
            document("window", results, measures, window)
            for monitor in self.monitors:
                try:
                    out = monitor.observe(window, seq, window_metrics, window_states)
                except Exception:  # a monitor never stops the stream
                    log.exception("monitor %s failed on window %s", monitor.key, window.start)
                    continue
                metrics += [
                    ScopedMetric("window", replace(m, extra={**m.extra, "final": True}), window)
                    for m in out.metrics
                ]
                check_results += out.check_results
                anomalies += out.anomalies
        measures = [m for m in measurement.measures if m.scope == "total"]
        results, found = self.judge.evaluate(
            measurement.total, "total", seq=batch_id, time=processing_time, measures=measures
        )
        check_results += results
        anomalies += found
        document("total", results, measures, None)
        return Judgement(tuple(check_results), tuple(anomalies), tuple(metrics), tuple(documents))

    def _report(
        self,
        batch_id: int,
        processing_time: datetime,
        states: BatchStates,
        update: ScopeUpdate,
        measurement: Measurement,
        judgement: Judgement,
        quarantine_rows: Any,
    ) -> BatchReport:
        counters = dict(states.counters)
        counters["late_rows"] = update.late_rows
        counters["spark_jobs"] = states.spark_jobs
        counters["arrow_path"] = int(states.path == "arrow")
        if quarantine_rows is not None:
            counters["quarantined_rows"] = quarantine_rows.num_rows
        metrics = list(measurement.metrics)
        metrics += self._counter_metrics(counters)
        metrics += judgement.metrics
        return BatchReport(
            dataset=self.dataset,
            query_id=self.query_id,
            batch_id=batch_id,
            processing_time=processing_time,
            metrics=tuple(metrics),
            check_results=judgement.check_results,
            anomalies=judgement.anomalies,
            counters=counters,
            closed_windows=tuple(window for window, _ in update.closed),
            event_time_max=update.event_time_max,
            watermark=update.watermark,
            measures=measurement.measures,
            measure_check_pass=judgement.documents,
        )

    # -- SQL measures (engine/measures.py) ---------------------------------------------
    def _sql_measures(self, df: DataFrame, states: BatchStates) -> tuple[MeasureResult, ...]:
        """The measures that run as Spark SQL, on this batch's good rows (data columns only);
        none on a batch without good rows (no job). Compiled ``map`` measures learn their
        column names here (analysis only, once per schema; also from an empty first batch after a
        restart, so the window and total values it reports carry Spark's names)."""
        if not self.measures or (states.good_rows <= 0 and self.measures.names_known):
            return ()
        cols = set(df.columns)
        data = df.filter(~self._bad(cols)).select(
            *[col(c) for c in metadata_columns.data_columns(df.columns)]
        )
        self.measures.resolve_names(data)
        return self.measures.run_sql(data) if states.good_rows > 0 else ()

    def _compiled_measures(self, states: BatchStates, update: ScopeUpdate) -> tuple[MeasureResult, ...]:
        """Compiled measures from the states: the batch (when it had good rows), each window
        closed now, the total."""
        if not self.measures:
            return ()
        out: list[MeasureResult] = []
        if states.good_rows > 0:
            batch = states_for(self.analyzers, states.batch)
            out += self.measures.from_states(batch, scope="batch", failures=states.failures)
        for window, window_states in update.closed:
            by_analyzer = states_for(self.analyzers, window_states)
            label = window_label(window.start, window.end)
            out += self.measures.from_states(by_analyzer, scope="window", window=label)
        out += self.measures.from_states(states_for(self.analyzers, self.scopes.total), scope="total")
        return tuple(out)

    def _window_index(self, start: datetime) -> int:
        """Position of a window in its series: window start // window length (strictly increasing)."""
        return int(start.timestamp() // self.window_length.total_seconds())

    def _metrics(
        self, by_key: Mapping[str, State], failures: Mapping[Analyzer, str]
    ) -> dict[Analyzer, Metric]:
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
            "implausible_event_time_rows": "ImplausibleEventTimeRows",
            "invalid_utf8_rows": "InvalidUtf8Rows",
            "unknown_field_rows": "UnknownFieldRows",
            "missing_field_rows": "MissingFieldRows",
            "type_error_rows": "TypeErrorRows",
        }
        return [
            ScopedMetric("batch", Metric(DATASET, name, "*", value=float(counters.get(key, 0))))
            for key, name in names.items()
        ]

    # -- quarantine --------------------------------------------------------------------------
    def _quarantine_selection(
        self, df: DataFrame, late: Column | None, *, now: Column | None = None, relative: bool = True
    ) -> tuple[Column | None, list[tuple[str, Column]]]:
        """(which rows, their per-row quarantine columns): bad rows and ``late`` rows, raw
        payload, reason, source coordinates and event time (the dataset and batch id are
        added by the caller). None when no row can be quarantined. ``now`` / ``relative``:
        the event-time bounds as in ``EventTimeBounds.implausible``."""
        cols = set(df.columns)
        conds = []
        reason = F.lit(None).cast("string")
        if ERROR_COLUMN in cols:
            conds.append(col(ERROR_COLUMN).isNotNull())
            reason = col(ERROR_COLUMN)
        implausible = self._implausible(cols, now=now, relative=relative)
        if implausible is not None:
            conds.append(implausible)
            shown = col(self.event_time).cast("timestamp").cast("string")  # type: ignore[arg-type]
            bound = self.event_time_bounds.reason(self._event_micros(), shown, now=now, relative=relative)
            reason = F.coalesce(reason, bound)
        if late is not None:
            conds.append(late)
            reason = F.when(late, F.lit("late: event time behind the watermark")).otherwise(reason)
        if not conds:
            return None, []
        cond = conds[0]
        for c in conds[1:]:
            cond = cond | c
        if RAW_COLUMN in cols:
            raw = col(RAW_COLUMN)
        else:
            data_cols = [col(c) for c in metadata_columns.data_columns(df.columns)]
            raw = F.to_json(F.struct(*data_cols))
        # where the row came from: the decoders' metadata columns (or Spark's own kafka columns)
        coordinates = []
        for name, meta, dtype in QUARANTINE_SOURCE_COLUMNS:
            # a data column named "line" is data, not a position
            found = meta if meta in cols else name if name in cols and name != "line" else None
            if found is not None:
                coordinates.append((name, col(found).cast(dtype)))
        position = list(coordinates)
        if self.event_time and self.event_time in cols:
            position.append(("event_time", col(self.event_time).cast("timestamp")))
        source = F.to_json(F.struct(*[c.alias(n) for n, c in coordinates] or [F.lit(None)]))
        selected = [
            ("reason", reason),
            ("raw", raw.cast("string")),
            ("source", source),
            *position,
        ]
        return cond, selected

    def _row_level(self, df: DataFrame, batch_id: int, states: BatchStates) -> RowLevelOutcome:
        """Rows failing the row-level constraints of ``row_level: quarantine`` checks (row_level.py);
        the rows already quarantined as bad are not judged."""
        if not self.quarantine or not self.row_level.active or states.path == "empty":
            return RowLevelOutcome()
        _, selected = self._quarantine_selection(df, F.lit(True))
        return self.row_level.run(df, ~self._bad(set(df.columns)), self._constants(batch_id), selected)

    def _constants(self, batch_id: int) -> list[Column]:
        """The quarantine rows' dataset and batch id columns."""
        return [F.lit(self.dataset).alias("dataset"), F.lit(batch_id).cast("long").alias("batch_id")]

    def _quarantine_rows(
        self, df: DataFrame, batch_id: int, cond: Column, selected: Sequence[tuple[str, Column]]
    ) -> pa.Table:
        """The rows of ``df`` where ``cond`` holds, as quarantine rows (``selected`` columns), in one job."""
        return (
            df.filter(cond).select(*self._constants(batch_id), *[c.alias(n) for n, c in selected]).toArrow()
        )

    def _quarantine_relative(self, df: DataFrame, batch_id: int, now: datetime) -> pa.Table:
        """The rows implausible only by an event-time bound relative to processing time
        ``now`` (the Arrow path's driver found them), as quarantine rows, in a job of their own."""
        cols = set(df.columns)
        now_micros = F.lit(epoch_micros(now))
        implausible = self._implausible(cols, now=now_micros)
        assert implausible is not None
        only_relative = ~self._bad(cols, relative=False) & implausible
        _, selected = self._quarantine_selection(df, None, now=now_micros)
        return self._quarantine_rows(df, batch_id, only_relative, selected)

    def _quarantine_whole(self, df: DataFrame, batch_id: int, reason: str) -> pa.Table:
        """Every row of ``df`` as quarantine rows with ``reason`` (a poison batch), in one job."""
        _, selected = self._quarantine_selection(df, F.lit(True))
        columns = [F.lit(reason).alias(n) if n == "reason" else c.alias(n) for n, c in selected]
        return df.select(*self._constants(batch_id), *columns).toArrow()

    def _quarantine_fused(
        self, df: DataFrame, batch_id: int, states: BatchStates, update: ScopeUpdate, *, bad: bool = True
    ) -> Any:
        """Collect bad (unless ``bad=False``) and late rows (raw payload + reason) as an Arrow
        table, in a job of their own: the error path only."""
        has_bad = bad and bool(states.counters.get("bad_rows"))
        if not self.quarantine or not (has_bad or update.late):
            return None
        cols = set(df.columns)
        if not has_bad and update.late and self.event_time:
            late_only = self._window_key().isin(self._window_keys_of(update.late)) & ~self._bad(cols)
            _, selected = self._quarantine_selection(df, late_only)
            return self._quarantine_rows(df, batch_id, late_only, selected)
        late = None
        if update.late and self.event_time:
            late = self._window_key().isin(self._window_keys_of(update.late)) & ~self._bad(cols)
        cond, selected = self._quarantine_selection(df, late)
        if cond is None:
            return None
        return self._quarantine_rows(df, batch_id, cond, selected)

    # -- alerts, commit, emit -----------------------------------------------------------
    def _apply_alert_policy(self, report: BatchReport) -> BatchReport:
        if self.alert_policy is None:
            return report
        alerts, new_state = self.alert_policy.evaluate(report, self.policy_state)
        self.policy_state = new_state
        return replace(report, alerts=tuple(a.to_dict() for a in alerts), policy_state=dict(new_state))

    def _commit(
        self, report: BatchReport, quarantine_rows: Any, closed: Sequence[tuple[Window, Mapping[str, State]]]
    ) -> None:
        from streamdq.state.records import records_for_batch

        assert self.store is not None
        # a batch without rows changed no running state: only the windows it closed are sent
        # (the store keeps every other key's latest; it would only compare their bytes)
        moved = bool(report.counters.get("input_rows", 0))
        windows = self.scopes.windows.items() if moved else ()
        records = records_for_batch(
            report,
            total=self.scopes.total if moved else {},
            open_windows={Window(s, s + self.window_length): states for s, states in windows},
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
        if self._last_committed is None or report.batch_id > self._last_committed:
            self._last_committed = report.batch_id
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
