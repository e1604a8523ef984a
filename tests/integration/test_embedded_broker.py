"""EmbeddedBroker lifecycle: failures are explained, temp data is cleaned, state is reported."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time

import pytest
from streamdq.connectors.broker import BrokerUnavailable, EmbeddedBroker, available_kinds

from tests.conftest import require_integration

pytestmark = pytest.mark.integration


def test_unknown_kind_is_rejected() -> None:
    with pytest.raises(ValueError, match="unknown broker kind 'zookeeper'"):
        EmbeddedBroker("zookeeper")


def test_port_in_use_raises_broker_unavailable_with_log_tail() -> None:
    if not available_kinds():
        require_integration("kafka broker", "no broker binary installed")
    with socket.socket() as blocker:
        blocker.bind(("127.0.0.1", 0))
        blocker.listen()
        port = blocker.getsockname()[1]
        broker = EmbeddedBroker(port=port, startup_timeout=5)
        with pytest.raises(BrokerUnavailable) as info:
            broker.start()
        assert not broker.running
        message = str(info.value)  # names the broker and carries its own log (noida: "already in use")
        assert broker.kind in message
        assert "in use" in message or broker.bootstrap_servers in message
        broker.close()


def test_context_manager_runs_then_cleans_its_temp_dir() -> None:
    if not available_kinds():
        require_integration("kafka broker", "no broker binary installed")
    with EmbeddedBroker() as broker:
        assert broker.running and broker.pid is not None
        data_dir = broker.data_dir
        assert data_dir.exists()
        with socket.create_connection((broker.host, broker.port), timeout=2):
            pass
    assert not broker.running
    assert not data_dir.exists()


def test_given_data_dir_is_kept_and_reused(tmp_path) -> None:
    if "noida" not in available_kinds():
        require_integration("noida broker", "noida-db not installed")
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition

    with EmbeddedBroker("noida", data_dir=tmp_path / "kafka") as first:
        first.create_topic("keep", partitions=1)
        producer = KafkaProducer(bootstrap_servers=first.bootstrap_servers)
        producer.send("keep", b"x").get(timeout=10)
        producer.close()
    assert (tmp_path / "kafka").exists()
    with EmbeddedBroker("noida", data_dir=tmp_path / "kafka") as second:  # a new port, same data
        consumer = KafkaConsumer(bootstrap_servers=second.bootstrap_servers)
        try:
            assert consumer.end_offsets([TopicPartition("keep", 0)]) == {TopicPartition("keep", 0): 1}
        finally:
            consumer.close()


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status") as f:
            return any(line.startswith("State:") and "Z" in line for line in f)  # a zombie is dead
    except FileNotFoundError:
        return True


def test_broker_dies_with_a_sigkilled_starter() -> None:
    if not available_kinds() or not sys.platform.startswith("linux"):
        require_integration("kafka broker on linux", "no broker binary installed or not Linux")
    code = (
        "import time\n"
        "from streamdq.connectors.broker import EmbeddedBroker\n"
        "b = EmbeddedBroker().start()\n"
        "print(b.pid, b.port, flush=True)\n"
        "time.sleep(120)\n"
    )
    starter = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert starter.stdout is not None
        broker_pid, port = (int(x) for x in starter.stdout.readline().split())
        assert not _gone(broker_pid)
        os.kill(starter.pid, signal.SIGKILL)
        starter.wait(timeout=10)
        deadline = time.monotonic() + 15
        while not _gone(broker_pid):
            assert time.monotonic() < deadline, "broker outlived its SIGKILLed starter"
            time.sleep(0.2)
    finally:
        if starter.poll() is None:
            os.kill(starter.pid, signal.SIGKILL)
            starter.wait()
