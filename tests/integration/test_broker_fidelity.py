"""Kafka-protocol fidelity of the embedded broker candidates (noida-db, tansu), via kafka-python.

Each behaviour the source, the alert sink and the demo rely on is checked against both
binaries. The default broker (``EmbeddedBroker()``, noida) must pass everything; tansu's known
deviations are strict xfails, so this file fails the day tansu fixes them (then revisit
docs/kafka.md). Findings are written up in docs/kafka.md.
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from streamdq.connectors.broker import EmbeddedBroker, broker_binary

from tests.conftest import require_integration

PARTITIONS = 3
PER_PARTITION = 20

# known deviations (see docs/kafka.md)
NOIDA_QUIRKS = {
    "acked_survive_stop": "noida acknowledges a record before it is durable: a SIGTERM while a producer "
    "sends loses the newest acknowledged records (1-9 at ~800 records/s)",
}
TANSU_QUIRKS = {
    "acked_survive_stop": "tansu here only has memory:// storage; a stop loses every record",
    "end_offsets": "tansu answers ListOffsets(latest) with the last record batch's base offset + 1, not the log end",
    "seek_to_end": "seek_to_end uses ListOffsets(latest), so it lands before the last records",
    "restart": "tansu here only has memory:// storage; a restart loses all topics and records",
}


@pytest.fixture(scope="module", params=["noida", "tansu"])
def broker(request: pytest.FixtureRequest) -> Iterator[EmbeddedBroker]:
    kind = request.param
    if broker_binary(kind) is None:
        require_integration(f"{kind} broker", "binary not installed")
    b = EmbeddedBroker(kind)
    try:
        b.start()
    except Exception as e:
        b.close()
        require_integration(f"{kind} broker", str(e))
    yield b
    b.close()


def quirk(broker: EmbeddedBroker, name: str, request: pytest.FixtureRequest) -> None:
    quirks = {"tansu": TANSU_QUIRKS, "noida": NOIDA_QUIRKS}[broker.kind]
    if name in quirks:
        request.applymarker(pytest.mark.xfail(reason=quirks[name], strict=True))


def produce(
    broker: EmbeddedBroker, topic: str, n_per_partition: int, tag: str = ""
) -> list[tuple[int, bytes]]:
    """Send ``n_per_partition`` records to each partition (explicitly), flush; (partition, value) list."""
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap_servers, linger_ms=5)
    sent = []
    for i in range(n_per_partition):
        for p in range(PARTITIONS):
            value = f"{tag}{p}-{i}".encode()
            producer.send(topic, key=f"k{i}".encode(), value=value, partition=p)
            sent.append((p, value))
    producer.flush()
    producer.close()
    return sent


def consume_assigned(
    broker: EmbeddedBroker, topic: str, expect: int, seek: str = "beginning", timeout: float = 15.0
) -> list:
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap_servers, enable_auto_commit=False)
    tps = [TopicPartition(topic, p) for p in range(PARTITIONS)]
    consumer.assign(tps)
    if seek == "beginning":
        consumer.seek_to_beginning()
    got: list = []
    deadline = time.monotonic() + timeout
    while len(got) < expect and time.monotonic() < deadline:
        for recs in consumer.poll(timeout_ms=300).values():
            got += recs
    consumer.close()
    return got


@pytest.fixture
def topic(broker: EmbeddedBroker) -> str:
    name = f"fid-{uuid.uuid4().hex[:8]}"
    broker.create_topic(name, partitions=PARTITIONS)
    return name


def test_topic_has_requested_partitions(broker: EmbeddedBroker, topic: str) -> None:
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap_servers)
    try:
        assert consumer.partitions_for_topic(topic) == set(range(PARTITIONS))
    finally:
        consumer.close()


def test_produce_consume_keeps_partition_order_offsets_keys(broker: EmbeddedBroker, topic: str) -> None:
    produce(broker, topic, PER_PARTITION)
    got = consume_assigned(broker, topic, PARTITIONS * PER_PARTITION)
    assert len(got) == PARTITIONS * PER_PARTITION
    for p in range(PARTITIONS):
        recs = [r for r in got if r.partition == p]
        assert [r.offset for r in recs] == list(range(PER_PARTITION))
        assert [r.value for r in recs] == [f"{p}-{i}".encode() for i in range(PER_PARTITION)]
        assert [r.key for r in recs] == [f"k{i}".encode() for i in range(PER_PARTITION)]
        assert all(r.timestamp and abs(r.timestamp / 1000 - time.time()) < 120 for r in recs)


def test_beginning_offsets(broker: EmbeddedBroker, topic: str) -> None:
    produce(broker, topic, 5)
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap_servers)
    try:
        tps = [TopicPartition(topic, p) for p in range(PARTITIONS)]
        assert consumer.beginning_offsets(tps) == dict.fromkeys(tps, 0)
    finally:
        consumer.close()


def test_end_offsets_count_records(
    broker: EmbeddedBroker, topic: str, request: pytest.FixtureRequest
) -> None:
    quirk(broker, "end_offsets", request)
    produce(broker, topic, 7)
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap_servers)
    try:
        tps = [TopicPartition(topic, p) for p in range(PARTITIONS)]
        assert consumer.end_offsets(tps) == dict.fromkeys(tps, 7)
    finally:
        consumer.close()


def test_seek_to_end_then_read_only_new_records(
    broker: EmbeddedBroker, topic: str, request: pytest.FixtureRequest
) -> None:
    quirk(broker, "seek_to_end", request)
    produce(broker, topic, 4, tag="old")
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap_servers, enable_auto_commit=False)
    tps = [TopicPartition(topic, p) for p in range(PARTITIONS)]
    consumer.assign(tps)
    consumer.seek_to_end()
    positions = {tp: consumer.position(tp) for tp in tps}
    produce(broker, topic, 3, tag="new")
    got: list = []
    deadline = time.monotonic() + 15
    while len(got) < 3 * PARTITIONS and time.monotonic() < deadline:
        for recs in consumer.poll(timeout_ms=300).values():
            got += recs
    consumer.close()
    assert sorted(r.value for r in got) == sorted(v for _, v in produce_values("new", 3))
    assert all(r.value.startswith(b"new") for r in got), positions


def produce_values(tag: str, n: int) -> list[tuple[int, bytes]]:
    return [(p, f"{tag}{p}-{i}".encode()) for i in range(n) for p in range(PARTITIONS)]


def test_seek_to_explicit_offset(broker: EmbeddedBroker, topic: str) -> None:
    produce(broker, topic, 10)
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap_servers, enable_auto_commit=False)
    tp = TopicPartition(topic, 1)
    consumer.assign([tp])
    consumer.seek(tp, 6)
    got: list = []
    deadline = time.monotonic() + 15
    while len(got) < 4 and time.monotonic() < deadline:
        got += consumer.poll(timeout_ms=300).get(tp, [])
    consumer.close()
    assert [r.offset for r in got] == [6, 7, 8, 9]
    assert [r.value for r in got] == [f"1-{i}".encode() for i in range(6, 10)]


def test_consumer_group_commit_and_resume(broker: EmbeddedBroker, topic: str) -> None:
    produce(broker, topic, 10)
    group = f"g-{uuid.uuid4().hex[:6]}"
    settings = dict(
        bootstrap_servers=broker.bootstrap_servers,
        group_id=group,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        session_timeout_ms=6000,
        heartbeat_interval_ms=1000,
    )
    first = KafkaConsumer(topic, **settings)
    seen: list = []
    deadline = time.monotonic() + 30
    while len(seen) < 15 and time.monotonic() < deadline:
        for recs in first.poll(timeout_ms=300, max_records=15 - len(seen)).values():
            seen += recs
    assert len(seen) == 15
    first.commit()
    committed = {p: first.committed(TopicPartition(topic, p)) for p in range(PARTITIONS)}
    first.close()
    assert sum(c or 0 for c in committed.values()) == 15

    second = KafkaConsumer(topic, **settings)
    rest: list = []
    deadline = time.monotonic() + 30
    while len(rest) < 15 and time.monotonic() < deadline:
        for recs in second.poll(timeout_ms=300).values():
            rest += recs
    second.close()
    values = [r.value for r in seen + rest]
    assert len(values) == 30 and len(set(values)) == 30  # each record exactly once across the two


def test_restart_keeps_topics_records_and_port(
    broker: EmbeddedBroker, topic: str, request: pytest.FixtureRequest
) -> None:
    quirk(broker, "restart", request)
    produce(broker, topic, 5)
    before = broker.bootstrap_servers
    broker.restart()
    assert broker.bootstrap_servers == before
    got = consume_assigned(broker, topic, 5 * PARTITIONS)
    assert sorted(r.value for r in got) == sorted(v for _, v in produce_values("", 5))
    produce(broker, topic, 1, tag="after")  # and it accepts writes after the restart
    got = consume_assigned(broker, topic, 6 * PARTITIONS)
    assert len(got) == 6 * PARTITIONS


def test_stop_is_idempotent_and_frees_port(broker: EmbeddedBroker) -> None:
    other = EmbeddedBroker(broker.kind)
    other.start()
    port = other.port
    other.stop()
    assert not other.last_stop_forced  # it honoured SIGTERM: nothing unflushed was killed
    other.stop()
    assert not other.running
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", port))  # the port is free again
    other.close()


def test_a_broker_that_ignores_sigterm_is_killed_and_says_so(
    tmp_path: Path, capfd: pytest.CaptureFixture
) -> None:
    """stop() falls back to SIGKILL after its timeout and records it (records may be lost)."""
    import subprocess

    stubborn = EmbeddedBroker("noida", data_dir=tmp_path)
    stubborn._proc = subprocess.Popen(["bash", "-c", "trap '' TERM; sleep 60"], start_new_session=True)
    time.sleep(0.3)  # the trap is set
    stubborn.stop(timeout=1.0)
    assert stubborn.last_stop_forced
    assert "ignored SIGTERM" in capfd.readouterr().err


def test_acknowledged_records_survive_a_stop_during_production(
    broker: EmbeddedBroker, request: pytest.FixtureRequest
) -> None:
    """A record the broker acknowledged (acks=all) is still there after a stop (SIGTERM) that
    arrives while a producer is sending, as with Apache Kafka's controlled shutdown."""
    import threading

    quirk(broker, "acked_survive_stop", request)
    name = f"dur-{uuid.uuid4().hex[:8]}"
    broker.create_topic(name, partitions=1)
    acked: list[int] = []
    done = threading.Event()

    def send() -> None:
        producer = KafkaProducer(
            bootstrap_servers=broker.bootstrap_servers, acks="all", retries=0, max_block_ms=3000
        )
        while not done.is_set():
            try:
                acked.append(producer.send(name, b"x").get(timeout=3).offset)
            except Exception:  # the broker went away
                break
        with contextlib.suppress(Exception):
            producer.close(timeout=1)

    lost = 0
    for _ in range(5):
        acked.clear()
        done.clear()
        sender = threading.Thread(target=send)
        sender.start()
        time.sleep(1.0)
        broker.stop()
        done.set()
        sender.join()
        broker.start()
        consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap_servers)
        tp = TopicPartition(name, 0)
        end = consumer.end_offsets([tp])[tp]
        consumer.close()
        assert acked, "nothing was acknowledged before the stop"
        lost += max(0, max(acked) + 1 - end)
        if lost:
            break
    assert lost == 0, f"{lost} acknowledged records were gone after the restarts"
