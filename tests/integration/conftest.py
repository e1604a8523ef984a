"""Integration fixtures: a real Kafka-protocol broker on a free loopback port.

``kafka_broker`` (session scope) starts :class:`streamdq.connectors.broker.EmbeddedBroker`
(default kind: noida-db, see docs/kafka.md) once per test session and stops it afterwards.
If no broker binary can start, the test is skipped locally and FAILS under ``CI=true``
(``require_integration``). Tests should create their own uniquely named topics.
``run_to_end(runner, timeout)`` runs a streaming runner's ``available_now`` query to its end.
``start_streamdq_run(config, log, env)`` starts a ``streamdq run`` subprocess (the kill tests).
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from streamdq.connectors.broker import BrokerUnavailable, EmbeddedBroker

from tests.conftest import require_integration


@pytest.fixture(scope="session")
def kafka_broker() -> Iterator[EmbeddedBroker]:
    broker = EmbeddedBroker()
    try:
        broker.start()
    except (BrokerUnavailable, ValueError) as e:
        broker.close()
        require_integration("kafka broker", str(e))
    try:
        yield broker
    finally:
        broker.close()


@pytest.fixture
def topic_name() -> str:
    """A fresh topic name, unique per test (topics are never shared between tests)."""
    return f"t-{uuid.uuid4().hex[:10]}"


def run_to_end(runner: Any, timeout: float) -> Any:
    """Start ``runner``'s query (an ``available_now`` trigger), wait up to ``timeout`` seconds
    for it to finish, assert it did not fail, and stop the runner; returns the query."""
    query = runner.start()
    try:
        query.awaitTermination(timeout)
        assert query.exception() is None
    finally:
        runner.stop()
    return query


def start_streamdq_run(
    config: Path, log: Path, env: Mapping[str, str | None] = {}
) -> subprocess.Popen[bytes]:
    """Start ``streamdq run config`` in a subprocess with this interpreter (Spark's Python
    workers too), its stdout and stderr appended to ``log``. ``env`` overrides the environment:
    a value of None unsets the variable."""
    full = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable)
    for name, value in env.items():
        if value is None:
            full.pop(name, None)
        else:
            full[name] = value
    with open(log, "ab") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "streamdq.cli", "run", str(config)],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=full,
        )
