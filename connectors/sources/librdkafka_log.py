"""librdkafka's log lines, with a broker outage said once instead of several times a second.

The confluent-kafka reader hands librdkafka's log to Python logging (the logger
``streamdq.connectors.kafka.librdkafka``, errors only). While a broker is away, librdkafka
logs a ``FAIL``/``ERROR`` line for every reconnect attempt of every consumer: about 14 lines a
second per consumer, 576 lines in a 30 s outage of the end-to-end test. The Kafka source says
"broker unreachable" and "broker reachable again" itself, once per outage
(``kafka_datasource.py``).

``librdkafka_logger()`` returns that logger with an ``OutageMute`` filter attached (once per
process; it runs in Spark's Python workers, where the consumers live). The filter lets the first
connection-failure line through with a note, mutes the next ones for ``mute_seconds`` (60 s)
and counts them; the first one after that says how many were muted. Other lines (an SSL or
SASL error, an unknown topic) pass untouched. Example::

    >>> mute = OutageMute(mute_seconds=60, clock=lambda: 0.0)
    >>> line = "[thrd:b/bootstrap]: b/bootstrap: Connect to ipv4#127.0.0.1:9 failed: Connection refused"
    >>> rec = logging.LogRecord("x", 40, "", 0, "%s [%s] %s", ("FAIL", "c#1", line), None)
    >>> mute.filter(rec), mute.filter(rec), mute.muted
    (True, False, 1)
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

LOGGER_NAME = "streamdq.connectors.kafka.librdkafka"

# substrings of librdkafka's messages about a broker that cannot be reached
UNREACHABLE = (
    "Connect to ",
    "Connection refused",
    "Disconnected",
    "transport failure",
    "brokers are down",
    "Receive failed",
    "Send failed",
    "connection reset",
    "timed out",
)


class OutageMute(logging.Filter):
    """Passes one connection-failure line per ``mute_seconds``; see the module docstring."""

    def __init__(self, mute_seconds: float = 60.0, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.mute_seconds = mute_seconds
        self._clock = clock
        self._lock = threading.Lock()
        self._until: float | None = None
        self.muted = 0

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        if not any(s in text for s in UNREACHABLE):
            return True
        now = self._clock()
        with self._lock:
            if self._until is not None and now < self._until:
                self.muted += 1
                return False
            muted, self.muted = self.muted, 0
            self._until = now + self.mute_seconds
        note = f"; {muted} such lines muted before this one" if muted else ""
        record.msg = "%s (broker unreachable: like lines are muted for %.0f s%s)"
        record.args = (text, self.mute_seconds, note)
        return True


_LOCK = threading.Lock()


def librdkafka_logger() -> logging.Logger:
    """The logger librdkafka writes to, with one ``OutageMute`` attached (idempotent)."""
    logger = logging.getLogger(LOGGER_NAME)
    with _LOCK:
        if not any(isinstance(f, OutageMute) for f in logger.filters):
            logger.addFilter(OutageMute())
    return logger
