"""The always-on job: source -> decode -> ``foreachBatch(BatchHandler)``.

``stream(spark, config).start()`` returns the running ``StreamingQuery``. The query id
(stable across restarts from the same checkpoint, unlike the run id) is the state
store's application id, so a batch Spark replays after a crash is recognised and not
counted twice. Everything is wired here: checks, state store, sinks, alert policy; the
rooms themselves never import each other (DESIGN.md section 2).
"""

from __future__ import annotations

import json
import logging
import os
import threading
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.streaming import StreamingQuery

from streamdq.engine.config import RunConfig, load_run_config, parse_duration
from streamdq.engine.handler import BatchHandler
from streamdq.engine.judge import BatchJudge
from streamdq.engine.monitor import build_monitors
from streamdq.errors import ConfigError

log = logging.getLogger(__name__)


def build_checks(config: RunConfig) -> list[Any]:
    """Compile the config's checks spec (validated; errors name the file and path)."""
    from streamdq.checks.spec import checks_from_list

    return list(checks_from_list(config.checks, file=config.checks_origin))


def checkpoint_query_id(checkpoint: str) -> str | None:
    """The query id Spark recorded in ``<checkpoint>/metadata`` (None before the first start)."""
    path = Path(checkpoint) / "metadata"
    try:
        return str(json.loads(path.read_text().splitlines()[0])["id"])
    except (OSError, ValueError, KeyError, IndexError):
        return None


class _DeferredHandler:
    """foreachBatch target that builds the real handler once the query id is known."""

    def __init__(self, runner: StreamRunner) -> None:
        self.runner = runner
        self.ready = threading.Event()
        self.handler: BatchHandler | None = None

    def __call__(self, df: DataFrame, batch_id: int) -> None:
        if not self.ready.wait(timeout=120):
            raise RuntimeError("streamdq: the query id was not set within 120 s of the first batch")
        assert self.handler is not None
        self.handler(df, batch_id)


class StreamRunner:
    """Builds and starts the streaming query for one run config."""

    def __init__(self, spark: SparkSession, config: RunConfig | dict[str, Any] | str) -> None:
        self.spark = spark
        self.config = config if isinstance(config, RunConfig) else load_run_config(config)
        self.checks = build_checks(self.config)
        self.monitors = build_monitors(self.config, self.checks)
        self.store = self._build_store()
        self.sinks = self._build_sinks()
        self.alert_policy = self._build_policy()
        self.query: StreamingQuery | None = None
        self.handler: BatchHandler | None = None

    # -- wiring -----------------------------------------------------------------------
    def _build_store(self) -> Any:
        if not self.config.state.path:
            return None
        from streamdq.state.delta_store import DeltaStateStore

        return DeltaStateStore(
            self.config.state.path,
            storage_options=self.config.state.storage_options or None,
            log_retention_hours=self.config.state.log_retention_hours,
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
        from streamdq.alerts.policy import AlertPolicy

        try:
            return AlertPolicy.from_spec(self.config.alerts, where="alerts")
        except ConfigError as exc:
            raise exc.with_file(self.config.file) if self.config.file else exc from None

    def source_frame(self) -> DataFrame:
        from streamdq.connectors.sources import read_source

        return read_source(self.spark, self.config.source)

    def make_handler(self, query_id: str) -> BatchHandler:
        cfg = self.config
        return BatchHandler(
            dataset=cfg.dataset,
            query_id=query_id,
            judge=BatchJudge(self.checks, dataset=cfg.dataset),
            window_seconds=cfg.window_seconds,
            watermark_seconds=cfg.watermark_seconds,
            event_time=cfg.event_time,
            store=self.store,
            sinks=self.sinks,
            alert_policy=self.alert_policy,
            quarantine=cfg.quarantine,
            max_groups=cfg.max_groups,
            small_batch_rows=cfg.small_batch_rows,
            rows_cap=_rows_cap(cfg.source),
            maintenance_every=cfg.state.maintenance_every,
            retention_hours=cfg.state.retention_hours,
            monitors=self.monitors,
        )

    # -- lifecycle ----------------------------------------------------------------------
    def start(self) -> StreamingQuery:
        """Start the query; returns Spark's StreamingQuery (stop it with ``stop()``)."""
        cfg = self.config
        deferred = _DeferredHandler(self)
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
        deferred.handler = self.handler
        deferred.ready.set()
        self._heartbeat().start()
        return query

    def _heartbeat(self) -> Any:
        """The query's heartbeat to the sinks (``heartbeat.py``): one per runner, it follows the
        query across restarts and tells an idle feed from a stalled job."""
        beat = getattr(self, "_beat", None)
        if beat is None:
            from streamdq.engine.heartbeat import QueryHeartbeat

            beat = self._beat = QueryHeartbeat(self.config.dataset, lambda: self.query, self.sinks)
        return beat

    def stop(self) -> None:
        if self.query is not None and self.query.isActive:
            self.query.stop()
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


def stream(spark: SparkSession, config: RunConfig | dict[str, Any] | str) -> StreamRunner:
    """``streamdq.stream(spark, "run.yaml").start()`` returns the StreamingQuery."""
    return StreamRunner(spark, config)
