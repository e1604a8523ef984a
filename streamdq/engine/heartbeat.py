"""QueryHeartbeat: polls the running streaming query and hands its liveness to the sinks.

A daemon thread started with the query (``StreamRunner.start``). Every ``interval`` seconds
it reads ``StreamingQuery.isActive`` and ``StreamingQuery.status`` (Spark's own view: is a
trigger running, is data available) of whatever query the runner currently holds (the
supervisor may restart it) and calls ``query_status(QueryStatus)`` on every sink that has
that method (the Prometheus exporter: ``streamdq_query_heartbeat_timestamp_seconds`` and
``streamdq_query_waiting_for_data``). A poll that fails (the query's JVM side gone) counts as
not active; a sink that raises is logged and skipped. It never touches the data and never
blocks the stream.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from streamdq.query_status import QueryStatus

log = logging.getLogger(__name__)


class QueryHeartbeat:
    def __init__(
        self,
        dataset: str,
        query: Callable[[], Any],
        sinks: Sequence[Any],
        *,
        interval: float = 10.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.dataset = dataset
        self._query = query
        self._sinks = [s for s in sinks if callable(getattr(s, "query_status", None))]
        self.interval = interval
        self._clock = clock
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def poll(self) -> QueryStatus:
        """The current query's status (not active when there is none or it cannot be read)."""
        query = self._query()
        active, waiting, message = False, False, "no query"
        if query is not None:
            try:
                active = bool(query.isActive)
                status = query.status if active else {}
                message = str(status.get("message", "")) if active else "stopped"
                waiting = active and not status.get("isTriggerActive") and not status.get("isDataAvailable")
            except Exception as exc:  # noqa: BLE001 - the query's JVM side is gone
                active, waiting, message = False, False, f"unreadable: {exc}"
        return QueryStatus(self.dataset, self._clock(), active, bool(waiting), message)

    def beat(self) -> QueryStatus:
        """One poll, handed to the sinks."""
        status = self.poll()
        for sink in self._sinks:
            try:
                sink.query_status(status)
            except Exception:
                log.exception("sink %s failed to take the query status", type(sink).__name__)
        return status

    def start(self) -> None:
        if not self._sinks or (self._thread is not None and self._thread.is_alive()):
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="streamdq-heartbeat", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            self.beat()
            self._stop.wait(self.interval)

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=self.interval + 5)
            self._thread = None
