"""The always-on job: source -> decode -> ``foreachBatch(BatchHandler)``.

``stream(spark, config).start()`` returns the running ``StreamingQuery``. The query id
(stable across restarts from the same checkpoint, unlike the run id) is the state
store's application id, so a batch Spark replays after a crash is recognised and not
counted twice. Everything is wired here: checks, state store, sinks, alert policy; the
rooms themselves never import each other (DESIGN.md section 2).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.streaming import StreamingQuery

from streamdq.engine.checkpoint_log import checkpoint_query_id, local_path, rewind
from streamdq.engine.config import (
    RunConfig,
    SupervisionConfig,
    load_run_config,
    parse_duration,
    supervision_config,
)
from streamdq.engine.faults import fault_marker, raise_if_marked
from streamdq.engine.handler import BatchHandler
from streamdq.engine.judge import BatchJudge
from streamdq.engine.monitor import build_monitors
from streamdq.engine.pipeline import PipelinedBatchFailed
from streamdq.spark import prewarm_python_workers, prewarm_setting, set_jvm_log_level
from streamdq.supervision import SupervisorStatus

if TYPE_CHECKING:
    from streamdq.engine.supervisor import Outcome

log = logging.getLogger(__name__)


def build_checks(config: RunConfig) -> list[Any]:
    """The config's checks, as its parse compiled them (``RunConfig.checks_spec``)."""
    return list(config.checks_spec.checks)


def build_measures(config: RunConfig, schema: Any = None) -> Any:
    """The config's measures in their forms (``MeasureRunner``; ``schema``: the source's declared
    schema, which decides numeric and integral columns; by default the parse's ``source_schema``)."""
    from streamdq.engine.measures import MeasureRunner

    return MeasureRunner(
        list(config.checks_spec.measures), schema if schema is not None else config.source_schema
    )


# how long a stop waits for the batch still in the handler (its commit, its sinks)
STOP_WAIT_SECONDS = 120.0


class _DeferredHandler:
    """foreachBatch target that builds the real handler once the query id is known.

    Also the supervisor's eyes inside the query: it counts the batches completed, records the
    batch id (and error) of a handler that raised, and hands a batch the runner was told is
    poison to the handler's poison path (``BatchHandler.handle(..., poison=...)``)."""

    def __init__(self, runner: StreamRunner) -> None:
        self.runner = runner
        self.ready = threading.Event()
        self.handler: BatchHandler | None = None
        self.completed = 0
        self.failed: tuple[int, BaseException] | None = None
        self.tail_failure: PipelinedBatchFailed | None = None  # a pipelined tail failed at the stop
        self.fault_marker = fault_marker()
        self._idle = threading.Event()  # set while no batch is in the handler
        self._idle.set()

    def wait_idle(self, timeout: float) -> bool:
        """Wait until no batch is in the handler, its pipelined tail (judge, commit, emit)
        included; False if one still is after ``timeout`` s. A tail that failed is recorded as
        the failed batch (``failed``, ``tail_failure``): Spark's commit log may hold that batch,
        the state store does not, and the next start rewinds the checkpoint to run it again."""
        started = time.monotonic()
        if not self._idle.wait(timeout):
            return False
        handler = self.handler
        if handler is None:
            return True
        try:
            handler.finish_pending(max(0.0, timeout - (time.monotonic() - started)))
        except TimeoutError:
            return False
        except PipelinedBatchFailed as exc:
            log.error("streamdq: %s", exc)
            self.failed = (exc.batch_id, exc.cause)
            self.tail_failure = exc
        return True

    def __call__(self, df: DataFrame, batch_id: int) -> None:
        self._idle.clear()
        try:
            self._handle(df, batch_id)
        finally:
            self._idle.set()

    def _handle(self, df: DataFrame, batch_id: int) -> None:
        if not self.ready.wait(timeout=120):
            raise RuntimeError("streamdq: the query id was not set within 120 s of the first batch")
        assert self.handler is not None
        batch_id = int(batch_id)
        try:
            poison = self.runner.poison.get(batch_id)
            if poison is not None:
                self.handler.handle(df, batch_id, poison=poison)
            else:
                if self.fault_marker is not None:
                    raise_if_marked(df, batch_id, self.fault_marker)
                self.handler(df, batch_id)
        except PipelinedBatchFailed as exc:  # the batch before's tail: that batch is the one failed
            self.failed = (exc.batch_id, exc.cause)
            raise
        except BaseException as exc:
            self.failed = (batch_id, exc)
            raise
        self.completed += 1


def _loaded(config: RunConfig | dict[str, Any] | str | os.PathLike[str]) -> RunConfig:
    """The run config; a config FILE gets the whole pre-Spark check that ``streamdq run`` runs
    (schema, columns of checks and detectors, sinks, writable paths: every mistake at once, as
    ``ConfigErrors``). A dict is validated key by key (``load_run_config``)."""
    if isinstance(config, RunConfig):
        return config
    if isinstance(config, str | os.PathLike):
        from streamdq.engine.config_check import check_run_config

        return check_run_config(config).config
    return load_run_config(config)


class StreamRunner:
    """Builds and starts the streaming query for one run config."""

    def __init__(self, spark: SparkSession, config: RunConfig | dict[str, Any] | str) -> None:
        self.spark = spark
        self.config = _loaded(config)
        self.checks = build_checks(self.config)
        self.monitors = build_monitors(self.config, self.checks)
        self.measures = build_measures(self.config)
        self.store = self._build_store()
        self.sinks = self._build_sinks()
        self.alert_policy = self._build_policy()
        self.query: StreamingQuery | None = None
        self.handler: BatchHandler | None = None
        # batch id -> last error, for batches the supervisor declared poison
        self.poison: dict[int, str] = {}
        self._deferred: _DeferredHandler | None = None
        self._closed = False
        self._prewarmed = False  # Python workers started for the source (once per runner)

    # -- wiring -----------------------------------------------------------------------
    def _build_store(self) -> Any:
        if not self.config.state.path:
            return None
        from streamdq.state.delta_store import DeltaStateStore

        return DeltaStateStore(
            self.config.state.path,
            storage_options=self.config.state.storage_options or None,
            log_retention_hours=self.config.state.log_retention_hours,
            derived_delay=self.config.state.metrics_write_delay_seconds,
        )

    def _state_dir(self) -> str:
        """The driver-local directory of the sinks' files (outboxes): never an object-store URI."""
        from streamdq.connectors.sinks.local_dir import local_state_dir

        return local_state_dir(self.config.state.path, self.config.checkpoint, self.config.dataset)

    def _build_sinks(self) -> list[Any]:
        from streamdq.connectors.sinks import build_sinks

        os.makedirs(self._state_dir(), exist_ok=True)
        return list(build_sinks(self.config.sinks, dataset=self.config.dataset, state_dir=self._state_dir()))

    def _build_policy(self) -> Any:
        """The alert policy the run config's parse made (``RunConfig.policy``)."""
        return self.config.policy

    def _build_judge(self) -> BatchJudge:
        """Checks, the ``pass:`` policy and the history the expressions read (docs/measure-check-pass.md)."""
        from streamdq.engine.expression_history import ExpressionHistory

        cfg = self.config
        names = [f.measure.name for f in self.measures.forms]
        history = ExpressionHistory(self.store, cfg.dataset, self.checks, names)
        return BatchJudge(
            self.checks,
            dataset=cfg.dataset,
            pass_policy=cfg.checks_spec.pass_policy,
            history=history or None,
            measure_names=names,
        )

    def _prewarm(self) -> None:
        """Start Spark's Python workers in the background (importing the source's modules)
        while the query starts, when the source reads in Python workers (the generator, the
        Python Kafka source) and ``$STREAMDQ_PREWARM`` is unset; once per runner (a restart by
        the supervisor finds them warm). ``STREAMDQ_PREWARM=1`` pre-warmed with the session
        (``get_spark``), ``0`` never does."""
        if self._prewarmed or prewarm_setting() is not None:
            return
        self._prewarmed = True
        from streamdq.connectors.sources import python_worker_modules

        spec = self.config.source_spec
        if spec is None:
            return
        modules = python_worker_modules(self.spark, spec)
        if modules:
            prewarm_python_workers(self.spark, modules)

    def source_frame(self) -> DataFrame:
        from streamdq.connectors.sources import read_source

        # the source parsed at load, read as it is (a config built by hand is parsed here)
        spec = self.config.source_spec
        return read_source(self.spark, spec if spec is not None else self.config.source)

    def make_handler(self, query_id: str) -> BatchHandler:
        cfg = self.config
        return BatchHandler(
            dataset=cfg.dataset,
            query_id=query_id,
            judge=self._build_judge(),
            window_seconds=cfg.window_seconds,
            watermark_seconds=cfg.watermark_seconds,
            event_time=cfg.event_time,
            store=self.store,
            sinks=self.sinks,
            alert_policy=self.alert_policy,
            quarantine=cfg.quarantine,
            max_groups=cfg.max_groups,
            small_batch_rows=cfg.small_batch_rows,
            row_level_max_rows=cfg.row_level_quarantine_max_rows,
            rows_cap=_rows_cap(cfg.source),
            maintenance_every=cfg.state.maintenance_every,
            retention_hours=cfg.state.retention_hours,
            monitors=self.monitors,
            event_time_bounds=cfg.event_time_bounds,
            measures=self.measures,
            pipelined=self.pipelined,
        )

    # -- lifecycle ----------------------------------------------------------------------
    def start(self) -> StreamingQuery:
        """Start the query (again: from its checkpoint); returns Spark's StreamingQuery.

        Stop it with ``stop_query()`` (sinks stay open, for a restart) or ``stop()``."""
        cfg = self.config
        self._prewarm()
        self._rewind_checkpoint()
        deferred = _DeferredHandler(self)
        self._deferred = deferred
        writer = self.source_frame().writeStream.foreachBatch(deferred)
        writer = writer.option("checkpointLocation", cfg.checkpoint).queryName(cfg.query_label)
        if cfg.trigger == "once":
            writer = writer.trigger(once=True)
        elif cfg.trigger == "available_now":
            writer = writer.trigger(availableNow=True)
        else:
            writer = writer.trigger(processingTime=f"{parse_duration(cfg.trigger, 'trigger')} seconds")
        query = writer.start()
        self.query = query
        self.handler = self.make_handler(str(query.id))
        self._recover_store(str(query.id))
        deferred.handler = self.handler
        deferred.ready.set()
        self._heartbeat().start()
        return query

    def run_supervised(
        self,
        stop_requested: Callable[[], bool] = lambda: False,
        deadline: float | None = None,
        on_tick: Callable[[StreamingQuery], None] | None = None,
        say: Callable[[str], None] | None = None,
    ) -> Outcome:
        """Start the query and keep it running under the supervisor (``supervision:`` of the
        run config) until ``stop_requested()``, ``deadline`` (a ``time.monotonic()`` time), the
        query's end, or a failure not retried; then stop it and close the sinks.

        Returns the supervisor's :class:`~streamdq.engine.supervisor.Outcome` (exit code,
        message); never raises for a failed query."""
        from streamdq.engine.supervisor import Supervisor

        if not os.environ.get("STREAMDQ_SPARK_LOG_LEVEL"):
            # the supervisor reports each failure of the query in one line; Spark's own ERROR
            # log of it ("Query ... terminated with error" and its JVM stack trace) would repeat
            # it at length, for failures that are then restarted (set STREAMDQ_SPARK_LOG_LEVEL
            # to see Spark's logs)
            set_jvm_log_level(self.spark, "org.apache.spark.sql.execution.streaming", "OFF")
        try:
            return Supervisor(self, say=say).run(stop_requested, deadline, on_tick)
        finally:
            self.stop()

    # -- what the supervisor reads and tells ----------------------------------------------
    @property
    def batches_completed(self) -> int:
        """Batches the current query's handler completed (0 before a start)."""
        return self._deferred.completed if self._deferred is not None else 0

    @property
    def failed_batch(self) -> tuple[int, BaseException] | None:
        """(batch id, error) of the current query's last batch whose handler raised."""
        return self._deferred.failed if self._deferred is not None else None

    def mark_poison(self, batch_id: int, error: str) -> None:
        """At the next start, batch ``batch_id`` goes whole to quarantine (``poison batch: error``)."""
        self.poison[int(batch_id)] = error

    def publish_status(self, status: SupervisorStatus) -> None:
        """Hand the supervisor's state to every sink that takes it (``supervisor_status``)."""
        for sink in self.sinks:
            publish = getattr(sink, "supervisor_status", None)
            if publish is None:
                continue
            try:
                publish(status)
            except Exception:
                log.exception("sink %s failed to take the supervisor status", type(sink).__name__)

    def stop_query(self, wait: float = STOP_WAIT_SECONDS) -> None:
        """Stop the running query (if any) and wait up to ``wait`` s for a batch still in the
        handler: Spark's ``stop()`` returns once its stream thread ends, while the Python
        ``foreachBatch`` call may still be computing, committing or emitting; closing the sinks
        or stopping Spark under it printed errors and tracebacks after a normal stop. The
        sinks stay open."""
        query = self.query
        if query is None:
            return
        try:
            if query.isActive:
                query.stop()
        except Exception:  # a query whose JVM side is already gone: nothing left to stop
            log.debug("stopping the query failed", exc_info=True)
        deferred = self._deferred
        if deferred is not None and not deferred.wait_idle(wait):
            log.warning("streamdq: a batch was still in the handler %.0f s after the query stopped", wait)
            return
        self._settle_store()

    @property
    def pipelined(self) -> bool:
        """Whether batches are judged, committed and emitted while Spark plans the next
        (``state.pipelined_commit``; needs a state store and a checkpoint on the local disk,
        which the runner rewinds to the store before each start)."""
        cfg = self.config
        return bool(
            cfg.state.pipelined_commit and self.store is not None and local_path(cfg.checkpoint) is not None
        )

    @property
    def tail_failure(self) -> PipelinedBatchFailed | None:
        """The pipelined tail that failed when the current query stopped (None: none did)."""
        return self._deferred.tail_failure if self._deferred is not None else None

    def _rewind_checkpoint(self) -> None:
        """Before a start: if Spark's logs in the checkpoint are ahead of the state store (a
        pipelined commit cut short by a crash or a failure), rewind them so that Spark runs the
        missing batch again (``checkpoint_log.rewind``). Checked on every start, whatever
        ``pipelined_commit`` says now: the run that left the logs ahead may have had it on."""
        if self.store is None:
            return
        query_id = checkpoint_query_id(self.config.checkpoint)
        if query_id is None:
            return  # the first start: there is nothing to rewind
        deferred = self._deferred
        if deferred is not None and deferred.handler is not None:
            deferred.wait_idle(STOP_WAIT_SECONDS)  # the last query's tail, if still running
        self._settle_store()
        rewind(self.config.checkpoint, self.store.last_committed_batch(query_id))

    def _recover_store(self, query_id: str) -> None:
        """Before the first batch: the rows a crash cut short of the query's last committed
        batch are written from its stored report (its next commit would too; this covers a
        restart that brings no batch)."""
        if self.store is None:
            return
        try:
            self.store.recover(query_id)
        except Exception:  # the query's next commit tries again
            log.exception("streamdq: recovering the state store's last batch failed")

    def _settle_store(self) -> None:
        """Let the state store finish the last batch's background writes (its report-derived
        metrics and results rows), so that the rows are there once the runner has stopped."""
        if self.store is None:
            return
        try:
            self.store.settle()
        except Exception:  # the query's next commit writes them from the stored report
            log.exception("streamdq: finishing the state store's last writes failed")

    def _heartbeat(self) -> Any:
        """The query's heartbeat to the sinks (``heartbeat.py``): one per runner, it follows the
        query across restarts and tells an idle feed from a stalled job."""
        beat = getattr(self, "_beat", None)
        if beat is None:
            from streamdq.engine.heartbeat import QueryHeartbeat

            beat = self._beat = QueryHeartbeat(self.config.dataset, lambda: self.query, self.sinks)
        return beat

    def stop(self) -> None:
        """Stop the query and close the sinks (once; a second call only stops the query)."""
        self.stop_query()
        if self._closed:
            return
        self._closed = True
        self._heartbeat().stop()
        for sink in self.sinks:
            try:
                sink.close()
            except Exception:
                log.exception("closing sink %s failed", type(sink).__name__)


def _rows_cap(source: dict[str, Any]) -> int | None:
    """The most rows one microbatch of this source can hold, when its config caps it."""
    cap = source.get("max_records_per_trigger")
    return cap if isinstance(cap, int) and not isinstance(cap, bool) and cap > 0 else None


def stream(
    spark: SparkSession,
    config: RunConfig | dict[str, Any] | str,
    *,
    supervision: SupervisionConfig | dict[str, Any] | bool | None = None,
) -> StreamRunner:
    """``streamdq.stream(spark, "run.yaml").start()`` returns the StreamingQuery;
    ``.run_supervised()`` runs it under the supervisor until stopped. ``supervision`` (a
    ``supervision:`` mapping, ``False`` for none) replaces the run config's."""
    runner = StreamRunner(spark, config)
    if supervision is not None:
        if not isinstance(supervision, SupervisionConfig):
            supervision = supervision_config(supervision)
        runner.config = replace(runner.config, supervision=supervision)
    return runner
