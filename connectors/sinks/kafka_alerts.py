"""Kafka alert sink: alerts to a topic via a persisted outbox, delivered in the background.

Runs in the driver. ``emit`` writes the batch's alerts into an ``AlertJournal`` (SQLite
under ``state_dir``) and wakes a background thread; it never talks to the broker, so a
dead broker never blocks or kills the stream. The thread sends pending alerts in order
with kafka-python (``acks=all``, retries, one request in flight so retries keep order),
key = ``dataset/constraint_id`` (all alerts of one constraint land in one partition, in
order), value = the alert JSON (schema ``streamdq.alert/v1``), and marks each alert
delivered in the journal once the broker acknowledged it. While the broker is away it
retries with exponential backoff (``initial_backoff`` .. ``max_backoff`` seconds).

Guarantees: an alert is journaled once per ``alert_id`` (replayed batches add nothing; an
acknowledged alert is never sent again); undelivered alerts survive a restart of the job
and are delivered when the sink starts again; the outbox is bounded (``max_buffer``
undelivered alerts, oldest dropped and counted beyond). A crash between the broker's
acknowledgement and the journal update can resend that one alert: consumers de-duplicate
by ``alert_id`` (at-least-once delivery, exactly-once effect).

A broker that loses records it acknowledged (stopped while acknowledging, an unclean leader
election, a restored log) hands their offsets out again: when an alert is acknowledged at an
offset the journal already holds for an earlier alert of that partition, the earlier alert(s)
are queued again and sent after it (``AlertJournal.mark_delivered``; counted in
``journal.lost``, one warning each time). A lost alert is only noticed when a later alert of
its partition is acknowledged.
"""

from __future__ import annotations

import contextlib
import logging
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from streamdq.connectors.sinks.base import backoff_delays, filter_alerts
from streamdq.connectors.sinks.journal import AlertJournal
from streamdq.connectors.sinks.local_dir import require_local

from streamdq.alerts.alert import Alert
from streamdq.report import BatchReport

log = logging.getLogger("streamdq.sinks.kafka")


def journal_path(state_dir: str | Path, topic: str) -> Path:
    """Where the outbox of ``topic`` lives under the run's (driver-local) state directory; an
    object-store URI is refused (``local_dir.py``) rather than becoming a folder named ``s3a:``."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", topic)
    return Path(require_local(state_dir, "kafka alert sink outbox")) / "sinks" / f"kafka-alerts-{safe}.sqlite"


class KafkaAlertSink:
    @classmethod
    def _unit_test_params(cls, targets: Any) -> Iterator[dict[str, Any]]:
        """Specs for the conformance laws (streamdq.testing.sink_checks): the broker and topic of
        ``targets``."""
        servers, topic = targets.kafka_bootstrap, targets.kafka_topic
        yield {"type": "kafka", "bootstrap_servers": servers, "topic": topic}
        yield {
            "type": "kafka",
            "bootstrap_servers": [servers],
            "topic": topic,
            "max_buffer": 100,
            "producer": {"acks": "all"},
            "min_severity": "Warning",
            "kinds": ["violation", "anomaly"],
            "name": "alerts",
        }

    def __init__(
        self,
        bootstrap_servers: str | list[str],
        topic: str,
        *,
        state_dir: str | Path,
        name: str = "kafka",
        max_buffer: int = 100_000,
        min_severity: str | None = None,
        kinds: list[str] | None = None,
        initial_backoff: float = 0.5,
        max_backoff: float = 10.0,
        send_timeout_seconds: float = 15.0,
        close_timeout_seconds: float = 5.0,
        producer_config: dict[str, Any] | None = None,
    ) -> None:
        self.name = name
        self.bootstrap_servers = bootstrap_servers
        self.topic = topic
        self.min_severity, self.kinds = min_severity, kinds
        self.initial_backoff, self.max_backoff = initial_backoff, max_backoff
        self.send_timeout = send_timeout_seconds
        self.close_timeout = close_timeout_seconds
        self.producer_config = dict(producer_config or {})
        self.journal = AlertJournal(journal_path(state_dir, topic), max_pending=max_buffer)
        self.last_error: str | None = None
        self.sent = 0
        self._producer: Any = None
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"streamdq-sink-{name}", daemon=True)
        self._thread.start()

    # -- the stream side: never blocks on the network --------------------------------

    def emit(self, report: BatchReport, alerts: list[Alert]) -> None:
        chosen = filter_alerts(alerts, min_severity=self.min_severity, kinds=self.kinds)
        if not chosen:
            return
        try:
            self.journal.add([(a.alert_id, a.key, a.to_json()) for a in chosen])
        except Exception as exc:  # noqa: BLE001 - a full disk must not kill the stream
            log.error(
                "kafka sink %s: cannot journal %d alerts of batch %s: %s",
                self.name,
                len(chosen),
                report.batch_id,
                exc,
            )
            return
        self._wake.set()

    @property
    def pending(self) -> int:
        return self.journal.pending_count()

    def flush(self, timeout: float = 30.0) -> bool:
        """Wait until every journaled alert was acknowledged; False on timeout."""
        self._wake.set()
        deadline = threading.Event()
        waited = 0.0
        while self.pending:
            if waited >= timeout:
                return False
            deadline.wait(0.1)
            waited += 0.1
        return True

    def close(self) -> None:
        """Try to deliver what is pending for ``close_timeout`` seconds, then stop.

        Undelivered alerts stay in the journal and go out when the sink starts again."""
        if self._stop.is_set():
            return
        self.flush(self.close_timeout)
        self._stop.set()
        self._wake.set()
        self._thread.join(timeout=self.send_timeout + 5)
        self._close_producer()
        if not self._thread.is_alive():
            self.journal.close()

    # -- the delivery thread ---------------------------------------------------------

    def _ensure_producer(self) -> Any:
        if self._producer is None:
            from kafka import KafkaProducer

            config: dict[str, Any] = {
                "bootstrap_servers": self.bootstrap_servers,
                "acks": "all",
                "retries": 2**31 - 1,
                "max_in_flight_requests_per_connection": 1,
                "enable_idempotence": False,
                "request_timeout_ms": int(self.send_timeout * 1000),
                "delivery_timeout_ms": int(max(120.0, 4 * self.send_timeout) * 1000),
                "max_block_ms": int(self.send_timeout * 1000),
                "reconnect_backoff_max_ms": int(self.max_backoff * 1000),
                "client_id": f"streamdq-alerts-{self.name}",
            }
            config.update(self.producer_config)
            self._producer = KafkaProducer(**config)
        return self._producer

    def _close_producer(self) -> None:
        """Close the producer; records it could not send within a second are aborted (its
        sender thread is force-closed) so they cannot arrive after the journal resends them
        from a new sink: the journal, not the old producer, owns undelivered alerts."""
        producer, self._producer = self._producer, None
        if producer is None:
            return
        try:
            producer.close(timeout=1)
        except Exception:  # noqa: BLE001 - e.g. flush timed out with the broker away
            sender = getattr(producer, "_sender", None)
            with contextlib.suppress(Exception):
                if sender is not None:
                    sender.force_close()

    def _reap(self, inflight: dict[int, Any]) -> bool:
        """Record finished sends; True if one failed (its alert is resent later)."""
        failed = False
        for seq, future in list(inflight.items()):
            if not future.is_done:
                continue
            del inflight[seq]
            if future.succeeded():
                partition, offset = future.value.partition, future.value.offset
                lost = self.journal.mark_delivered(seq, partition, offset)
                self.sent += 1
                if lost:  # the broker handed out an offset again: it lost what it had acknowledged
                    log.warning(
                        "kafka sink %s: the broker acknowledged offset %d of %s[%d] again, so it lost %d "
                        "alert(s) it had acknowledged there or later; sending them again",
                        self.name,
                        offset,
                        self.topic,
                        partition,
                        lost,
                    )
            else:
                failed = True
                self.last_error = f"{type(future.exception).__name__}: {future.exception}"
        return failed

    def _run(self) -> None:
        """Send pending alerts, keep their futures until the broker answers.

        A record handed to the producer stays in flight (the producer retries it itself,
        acks=all) until its future resolves; only then is it marked delivered or, on
        failure, sent again. Never two live copies of one alert in this process."""
        delays = iter(backoff_delays(self.initial_backoff, self.max_backoff))
        inflight: dict[int, Any] = {}
        while not self._stop.is_set():
            try:
                failed = self._reap(inflight)
                batch = [e for e in self.journal.pending() if e.seq not in inflight]
            except Exception as exc:  # noqa: BLE001 - e.g. journal closed during shutdown
                self.last_error = f"journal: {exc}"
                return
            if not batch and not inflight and not failed:
                self._wake.wait(1.0)
                self._wake.clear()
                continue
            try:
                producer = self._ensure_producer()
                for entry in batch:
                    inflight[entry.seq] = producer.send(
                        self.topic, key=entry.key.encode(), value=entry.value.encode()
                    )
                producer.flush(timeout=self.send_timeout)
                if not self._reap(inflight) and not failed:
                    if not inflight:
                        self.journal.prune()
                        self.last_error = None
                        delays = iter(backoff_delays(self.initial_backoff, self.max_backoff))
                    continue
            except Exception as exc:  # noqa: BLE001 - any broker problem: back off and retry
                self.last_error = f"{type(exc).__name__}: {exc}"
            delay = next(delays)
            log.warning(
                "kafka sink %s: %s; %d alerts pending, retry in %.1fs",
                self.name,
                self.last_error,
                self.journal.pending_count(),
                delay,
            )
            self._stop.wait(delay)
