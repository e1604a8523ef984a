"""librdkafka's reconnect lines during a broker outage: one line, then muted (librdkafka_log.py).

A real confluent-kafka consumer (librdkafka) configured by ``librdkafka_config`` polls a port
nobody listens on, as during a broker outage: librdkafka tries to connect several times a second
and logs every failure; the source's logger lets the first one through and mutes the rest."""

from __future__ import annotations

import logging
import time

import pytest
from streamdq.connectors.broker import free_port
from streamdq.connectors.sources.kafka_clients import librdkafka_config
from streamdq.connectors.sources.librdkafka_log import LOGGER_NAME, OutageMute


class _Keep(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def test_an_unreachable_broker_is_logged_once_not_at_every_reconnect():
    confluent_kafka = pytest.importorskip("confluent_kafka")
    logger = logging.getLogger(LOGGER_NAME)
    keep = _Keep()
    logger.addHandler(keep)
    mute = next(f for f in librdkafka_config({"bootstrap_servers": "x:1"})["logger"].filters)
    assert isinstance(mute, OutageMute)
    before = mute.muted
    consumer = confluent_kafka.Consumer(librdkafka_config({"bootstrap_servers": f"127.0.0.1:{free_port()}"}))
    try:
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline:
            consumer.poll(0.2)
    finally:
        consumer.close()
        logger.removeHandler(keep)
    muted = mute.muted - before
    assert muted >= 5, keep.lines  # librdkafka did log its reconnects ...
    assert len(keep.lines) <= 1, keep.lines  # ... and one line got through (0 if an earlier test's did)
    if keep.lines:
        assert "Connection refused" in keep.lines[0] and "muted for 60 s" in keep.lines[0]


def test_the_first_line_after_the_mute_says_how_many_were_muted_and_others_pass():
    now = [0.0]
    mute = OutageMute(mute_seconds=60, clock=lambda: now[0])

    def line(text: str) -> logging.LogRecord:
        return logging.LogRecord(LOGGER_NAME, logging.ERROR, "", 0, "%s [%s] %s", ("FAIL", "c#1", text), None)

    refused = "b/bootstrap: Connect to ipv4#127.0.0.1:9 failed: Connection refused"
    assert mute.filter(line(refused))
    assert [mute.filter(line(refused)) for _ in range(3)] == [False] * 3
    ssl = line("b/bootstrap: SSL handshake failed: certificate verify failed")
    assert mute.filter(ssl) and ssl.getMessage().endswith("certificate verify failed")
    now[0] = 61.0
    again = line(refused)
    assert mute.filter(again) and "3 such lines muted before this one" in again.getMessage()
