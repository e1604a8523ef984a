"""The Sink contract and the two helpers every delivering sink uses.

A sink runs in the driver. The streaming handler calls ``emit(report, alerts)`` once per
batch after the batch was committed, and ``close()`` at shutdown. Contract:

- ``emit`` never raises for a delivery problem and never blocks on the network: a sink
  that cannot reach its target hands the work to a background thread that retries with
  exponential backoff (``BackgroundRetrier``), so the stream neither waits nor dies.
- ``emit`` is idempotent on ``(report.query_id, report.batch_id)``: a replayed batch is
  not delivered twice by the same sink process (``SeenBatches``); sinks that persist
  (JSON lines, the Kafka journal) also de-duplicate across restarts.
- ``close`` stops background threads after a bounded grace period (pending work of the
  Kafka sink stays in its journal for the next start).
"""

from __future__ import annotations

import collections
import logging
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

from streamdq.alerts.alert import Alert
from streamdq.alerts.throttle import AlertThrottle as AlertThrottle  # re-export: the per-sink valve
from streamdq.errors import StreamdqError
from streamdq.report import BatchReport

log = logging.getLogger("streamdq.sinks")

T = TypeVar("T")

SEVERITY_RANK = {"Warning": 1, "Error": 2}


@runtime_checkable
class Sink(Protocol):
    """Delivers each batch's report and alerts somewhere (see the module docstring)."""

    name: str

    def emit(self, report: BatchReport, alerts: list[Alert]) -> None: ...

    def close(self) -> None: ...


class PermanentDeliveryError(StreamdqError):
    """Raised by a delivery function for an item that no retry can deliver (e.g. HTTP 400)."""


class SeenBatches:
    """A bounded memory of ``(query_id, batch_id)`` pairs already emitted (oldest forgotten first)."""

    def __init__(self, capacity: int = 10_000) -> None:
        self._capacity = capacity
        self._seen: collections.OrderedDict[tuple[str, int], None] = collections.OrderedDict()
        self._lock = threading.Lock()

    def first_time(self, query_id: str, batch_id: int) -> bool:
        """True the first time a pair is offered, False afterwards."""
        key = (query_id, int(batch_id))
        with self._lock:
            if key in self._seen:
                return False
            self._seen[key] = None
            while len(self._seen) > self._capacity:
                self._seen.popitem(last=False)
            return True

    def add(self, query_id: str, batch_id: int) -> None:
        self.first_time(query_id, batch_id)


def filter_alerts(
    alerts: Iterable[Alert], *, min_severity: str | None = None, kinds: Iterable[str] | None = None
) -> list[Alert]:
    """Alerts at or above ``min_severity`` and of the given kinds (None: all)."""
    floor = SEVERITY_RANK.get(min_severity or "Warning", 1)
    allowed = set(kinds) if kinds is not None else None
    return [
        a
        for a in alerts
        if SEVERITY_RANK.get(a.severity, 2) >= floor and (allowed is None or a.kind in allowed)
    ]


def backoff_delays(initial: float, maximum: float) -> Iterable[float]:
    """Exponential backoff: initial, 2*initial, ... capped at maximum, forever."""
    delay = initial
    while True:
        yield delay
        delay = min(maximum, delay * 2)


class BackgroundRetrier(Generic[T]):
    """A daemon thread that delivers queued items in order, retrying each with backoff.

    ``submit`` never blocks: the queue is bounded (``max_queue``); when full, the oldest
    item is dropped and counted in ``dropped``. ``deliver(item)`` raising
    ``PermanentDeliveryError`` drops the item (counted in ``failed``); any other exception
    is retried after ``initial_backoff * 2**n`` seconds (capped at ``max_backoff``), up to
    ``max_attempts`` (None: until delivered or closed).
    """

    def __init__(
        self,
        name: str,
        deliver: Callable[[T], None],
        *,
        max_queue: int = 1000,
        initial_backoff: float = 0.5,
        max_backoff: float = 30.0,
        max_attempts: int | None = None,
    ) -> None:
        self.name = name
        self._deliver = deliver
        self._max_queue = max_queue
        self._initial = initial_backoff
        self._max_backoff = max_backoff
        self._max_attempts = max_attempts
        self._queue: collections.deque[T] = collections.deque()
        self._cond = threading.Condition()
        self._busy = False
        self._closed = False
        self.delivered = 0
        self.dropped = 0
        self.failed = 0
        self.attempts = 0
        self.last_error: str | None = None
        self._thread = threading.Thread(target=self._run, name=f"streamdq-sink-{name}", daemon=True)
        self._thread.start()

    def submit(self, item: T) -> None:
        with self._cond:
            if self._closed:
                self.dropped += 1
                return
            self._queue.append(item)
            while len(self._queue) > self._max_queue:
                self._queue.popleft()
                self.dropped += 1
                log.warning("sink %s: queue full (%d), dropped the oldest item", self.name, self._max_queue)
            self._cond.notify_all()

    @property
    def pending(self) -> int:
        with self._cond:
            return len(self._queue) + (1 if self._busy else 0)

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until the queue is empty and nothing is in flight; False on timeout."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._queue or self._busy:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(min(left, 0.1))
            return True

    def close(self, timeout: float = 5.0) -> None:
        """Give pending items ``timeout`` seconds, then stop the thread (the rest is dropped)."""
        self.flush(timeout)
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        self._thread.join(timeout=max(1.0, timeout))

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._queue and not self._closed:
                    self._cond.wait()
                if self._closed:
                    return
                item = self._queue.popleft()
                self._busy = True
            try:
                self._deliver_with_retries(item)
            finally:
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()

    def _deliver_with_retries(self, item: T) -> None:
        delays = iter(backoff_delays(self._initial, self._max_backoff))
        attempt = 0
        while True:
            attempt += 1
            self.attempts += 1
            try:
                self._deliver(item)
                self.delivered += 1
                return
            except PermanentDeliveryError as exc:
                self.failed += 1
                self.last_error = str(exc)
                log.error("sink %s: dropped an item that cannot be delivered: %s", self.name, exc)
                return
            except Exception as exc:  # noqa: BLE001 - any delivery problem is retried
                self.last_error = f"{type(exc).__name__}: {exc}"
                if self._max_attempts is not None and attempt >= self._max_attempts:
                    self.failed += 1
                    log.error("sink %s: giving up after %d attempts: %s", self.name, attempt, exc)
                    return
                delay = next(delays)
                log.warning("sink %s: delivery failed (%s), retry in %.1fs", self.name, exc, delay)
                with self._cond:
                    if self._closed:
                        return
                    self._cond.wait(delay)
                    if self._closed:
                        return


def describe(obj: Any) -> str:
    """Short ``Type(name)`` text for logs."""
    return f"{type(obj).__name__}({getattr(obj, 'name', '')})"
