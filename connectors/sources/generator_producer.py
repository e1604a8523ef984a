"""Produce the generated stream into a Kafka topic (kafka-python), paced in real time.

``KafkaGeneratorProducer`` sends record ``i`` of a :class:`GeneratorConfig` stream when the wall
clock reaches its nominal time (``start + i / rows_per_second``), keyed by ``order_id``, as
compact JSON. Incidents come from the config (e.g. ``rolling_incidents(every=180)`` for an
incident every three minutes). Records are a pure function of the index, so a restarted producer
with the same config and ``start_ms`` resumes the same stream from ``resume_from``.

Where it runs: a daemon thread in the calling process (``start()``/``stop()``), or synchronously
(``produce_range``). A broker that is unreachable does not kill it: sends are retried by
kafka-python (its default retries, ``reconnect_backoff_ms``); failures are counted in ``errors`` and the
last one kept in ``last_error``. Standard Kafka protocol only, so it works against Apache Kafka.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping
from typing import Any

from streamdq.connectors.sources.generator import GeneratorConfig, make_record, now_ms, to_json_bytes

log = logging.getLogger(__name__)


class KafkaGeneratorProducer:
    """Paced producer of a generated stream into ``topic`` (see the module docstring)."""

    def __init__(
        self,
        bootstrap_servers: str,
        topic: str,
        config: GeneratorConfig | None = None,
        producer_config: Mapping[str, Any] | None = None,
        resume_from: int = 0,
        tick_seconds: float = 0.1,
    ) -> None:
        self.bootstrap_servers = bootstrap_servers
        self.topic = topic
        self.config = config or GeneratorConfig()
        self.producer_config = dict(producer_config or {})
        self.next_index = resume_from
        self.tick_seconds = tick_seconds
        self.sent = 0
        self.dropped = 0  # records removed by a volume_drop incident
        self.errors = 0
        self.last_error: BaseException | None = None
        self._producer: Any = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def _kafka(self) -> Any:
        if self._producer is None:
            from kafka import KafkaProducer

            settings: dict[str, Any] = {
                "bootstrap_servers": self.bootstrap_servers,
                "linger_ms": 20,
                "reconnect_backoff_ms": 200,
                "reconnect_backoff_max_ms": 5000,
            }
            settings.update(self.producer_config)
            self._producer = KafkaProducer(**settings)
        return self._producer

    def _on_error(self, exc: BaseException) -> None:
        self.errors += 1
        self.last_error = exc
        log.warning("generator producer: send to %s failed: %s", self.topic, exc)

    def produce_range(self, start_index: int, end_index: int, flush: bool = True) -> int:
        """Send records ``[start_index, end_index)`` now (no pacing); returns how many were sent."""
        producer = self._kafka()
        n = 0
        for i in range(start_index, end_index):
            rec = make_record(self.config, i)
            if rec is None:
                self.dropped += 1
                continue
            key = str(rec.get("order_id", i)).encode()
            producer.send(self.topic, key=key, value=to_json_bytes(rec)).add_errback(self._on_error)
            n += 1
        if flush:
            producer.flush()
        self.sent += n
        return n

    def due_index(self, at_ms: int | None = None) -> int:
        """One past the last index whose nominal time has come."""
        return self.config.index_at((now_ms() if at_ms is None else at_ms) + 1)

    def step(self) -> int:
        """Send everything that is due; returns how many records were sent."""
        with self._lock:
            due = self.due_index()
            if due <= self.next_index:
                return 0
            n = self.produce_range(self.next_index, due, flush=False)
            self.next_index = due
            return n

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.step()
            except Exception as exc:  # never let the producer thread die of a broker hiccup
                self._on_error(exc)
                self._stop.wait(1.0)
            self._stop.wait(self.tick_seconds)

    def start(self) -> KafkaGeneratorProducer:
        """Start producing in a daemon thread. Returns self."""
        if self._thread is None or not self._thread.is_alive():
            self._stop.clear()
            self._thread = threading.Thread(
                target=self._loop, name=f"streamdq-generator-{self.topic}", daemon=True
            )
            self._thread.start()
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the thread, flush and close the Kafka producer."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None
        if self._producer is not None:
            try:
                self._producer.flush(timeout=timeout)
                self._producer.close(timeout=timeout)
            finally:
                self._producer = None

    def run_for(self, seconds: float) -> int:
        """Produce in real time for ``seconds`` (blocking); returns the number of records sent."""
        before = self.sent
        self.start()
        time.sleep(seconds)
        self.stop()
        return self.sent - before

    def __enter__(self) -> KafkaGeneratorProducer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
