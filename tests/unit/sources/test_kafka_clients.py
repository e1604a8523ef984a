"""The Kafka source's client choice (``source.client``), librdkafka settings, the Arrow conversion
of confluent-kafka messages and the per-worker consumer pool; no broker needed."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from streamdq.connectors.sources import kafka_clients
from streamdq.connectors.sources.kafka import _validate
from streamdq.connectors.sources.kafka_clients import (
    CONFLUENT,
    KAFKA_PYTHON,
    ConsumerPool,
    _clean_prefix,
    librdkafka_config,
    messages_to_batch,
    resolve_client,
)
from streamdq.connectors.sources.kafka_datasource import KafkaStreamReader, arrow_schema, consumer_config
from streamdq.connectors.sources.spec import validate_source_spec

from streamdq.errors import ConfigError

BASE = {"bootstrap_servers": "127.0.0.1:9092", "topic": "orders"}


def test_client_key_is_validated_at_config_time_naming_the_key() -> None:
    for good in ("auto", "kafka-python", "confluent-kafka"):
        assert _validate({**BASE, "client": good}).client == good
    with pytest.raises(ConfigError, match=r"source\.client.*'librdkafka'") as exc:
        _validate({**BASE, "client": "librdkafka"})
    assert "confluent-kafka" in str(exc.value.fix)
    # the run config's validation accepts the key (and names it with the config's path)
    validate_source_spec({"type": "kafka", **BASE, "format": "raw", "client": "kafka-python"})
    with pytest.raises(ConfigError, match=r"in\.client"):
        validate_source_spec({"type": "kafka", **BASE, "format": "raw", "client": 3}, where="in")


def test_confluent_asked_for_but_missing_fails_at_config_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kafka_clients.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ConfigError, match=r"source\.client.*not installed") as exc:
        _validate({**BASE, "client": "confluent-kafka"})
    assert "kafka-fast" in str(exc.value.fix)
    assert _validate({**BASE, "client": "auto"}).client == "auto"  # auto falls back
    assert resolve_client("auto") == KAFKA_PYTHON
    with pytest.raises(ValueError, match="not installed"):
        resolve_client(CONFLUENT)


def test_auto_prefers_confluent_when_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kafka_clients, "confluent_available", lambda: True)
    assert resolve_client(None) == CONFLUENT
    assert resolve_client(" AUTO ") == CONFLUENT
    assert resolve_client("kafka-python") == KAFKA_PYTHON
    with pytest.raises(ValueError, match="unknown client"):
        resolve_client("rdkafka")
    reader = KafkaStreamReader({**BASE, "client": "kafka-python"})
    assert reader.client == KAFKA_PYTHON
    assert KafkaStreamReader(BASE).client == CONFLUENT


def test_librdkafka_config_maps_kafka_python_names_and_owns_offsets() -> None:
    cfg = consumer_config(
        {
            "bootstrap_servers": "h1:1,h2:2",
            "kafka_options": (
                '{"security.protocol": "SASL_SSL", "sasl_plain_username": "u", "ssl_cafile": "/ca.pem",'
                ' "fetch.max.bytes": 1000, "group.id": "g", "enable.partition.eof": false,'
                ' "api_version": [2, 8], "queued.max.messages.kbytes": 4096}'
            ),
        }
    )
    conf = librdkafka_config(cfg)
    assert conf["bootstrap.servers"] == "h1:1,h2:2"
    assert conf["security.protocol"] == "SASL_SSL"
    assert conf["sasl.username"] == "u" and conf["ssl.ca.location"] == "/ca.pem"
    assert conf["fetch.max.bytes"] == 1000
    assert conf["queued.max.messages.kbytes"] == 4096  # user settings win over the reader's defaults
    assert "api.version" not in conf and "api_version" not in conf
    assert librdkafka_config({**cfg, "log_level": 6})["log_level"] == 6  # librdkafka's own underscore
    # offsets live in Spark's checkpoint: the reader's own settings cannot be overridden
    assert conf["group.id"] == "streamdq-kafka-source"
    assert conf["enable.auto.commit"] is False and conf["enable.auto.offset.store"] is False
    assert conf["enable.partition.eof"] is True
    assert conf["auto.offset.reset"] == "earliest"


class FakeError:
    def __init__(self, code: int) -> None:
        self._code = code

    def code(self) -> int:
        return self._code


class FakeMessage:
    def __init__(
        self,
        offset: int,
        value: bytes | None = b"v",
        key: bytes | None = None,
        ts: tuple[int, int] = (1, 0),
        error: Any = None,
    ) -> None:
        self._offset, self._value, self._key, self._ts, self._error = offset, value, key, ts, error

    def offset(self) -> int:
        return self._offset

    def value(self) -> bytes | None:
        return self._value

    def key(self) -> bytes | None:
        return self._key

    def timestamp(self) -> tuple[int, int]:
        return self._ts

    def error(self) -> Any:
        return self._error


def test_messages_to_batch_has_sparks_kafka_schema_and_timestamp_types() -> None:
    ms = [
        FakeMessage(7, b'{"a":1}', b"k", (1, 1_700_000_000_123)),  # CreateTime
        FakeMessage(8, None, None, (2, 1_700_000_000_456)),  # LogAppendTime
        FakeMessage(9, b"x", None, (0, -1)),  # no timestamp
    ]
    batch = messages_to_batch(ms, "orders", 3, arrow_schema())
    assert batch.schema == arrow_schema()
    rows = batch.to_pylist()
    assert [r["offset"] for r in rows] == [7, 8, 9]
    assert [r["value"] for r in rows] == [b'{"a":1}', None, b"x"]
    assert [r["key"] for r in rows] == [b"k", None, None]
    assert {r["topic"] for r in rows} == {"orders"} and {r["partition"] for r in rows} == {3}
    assert rows[0]["timestamp"] == dt.datetime(2023, 11, 14, 22, 13, 20, 123000, tzinfo=dt.UTC)
    assert rows[2]["timestamp"] is None
    assert [r["timestampType"] for r in rows] == [0, 1, 0]  # Spark's ids: 0 CreateTime, 1 LogAppendTime


def test_clean_prefix_only_accepts_contiguous_records_from_the_position() -> None:
    run = [FakeMessage(o) for o in range(10, 15)]
    assert _clean_prefix(run, 10, 100) == 5
    assert _clean_prefix(run + [FakeMessage(15, error=FakeError(-191))], 10, 100) == 5  # EOF after
    assert _clean_prefix(run, 10, 14) == 0  # crosses the range end
    assert _clean_prefix(run, 9, 100) == 0  # a gap at the start (records gone)
    assert _clean_prefix([FakeMessage(o) for o in (10, 11, 13)], 10, 100) == 0  # a gap inside
    assert _clean_prefix([FakeMessage(10, error=FakeError(1))] + run, 10, 100) == 0
    assert _clean_prefix([], 10, 100) == 0


class FakeConsumer:
    created: list[FakeConsumer] = []

    def __init__(self, conf: dict) -> None:
        self.conf = conf
        self.assigned: list[tuple[str, int, int]] = []
        self.assignment: list[tuple[str, int, int]] = []
        self.closed = False
        FakeConsumer.created.append(self)

    def assign(self, tps: list[Any]) -> None:
        self.assignment = [(tp.topic, tp.partition, tp.offset) for tp in tps]
        self.assigned += self.assignment

    def unassign(self) -> None:
        self.assignment = []

    def close(self) -> None:
        self.closed = True


@pytest.fixture
def fake_consumers(monkeypatch: pytest.MonkeyPatch) -> type[FakeConsumer]:
    import confluent_kafka

    FakeConsumer.created = []
    monkeypatch.setattr(confluent_kafka, "Consumer", FakeConsumer)
    return FakeConsumer


def test_pool_reuses_a_consumer_assigned_at_each_range_start_and_idle_unassigned(
    fake_consumers: type[FakeConsumer],
) -> None:
    """A pooled consumer is unassigned while idle: an assigned one keeps fetching at the log end
    for as long as the worker lives (after its query stopped too), and against a broker that
    answers empty fetches at once that starved the next query's Python processes of CPU."""
    pool = ConsumerPool()
    conf = {"bootstrap.servers": "h:1"}
    key, c1 = pool.acquire(conf, "t", 0, 0)
    assert c1.assignment == [("t", 0, 0)]
    pool.release(key, c1)
    assert c1.assignment == [] and not c1.closed  # idle in the pool: fetches nothing
    key2, c2 = pool.acquire(conf, "t", 0, 100)  # the next microbatch: same consumer, exact start
    assert c2 is c1 and c1.assignment == [("t", 0, 100)]
    pool.release(key2, c2)
    _, c3 = pool.acquire(conf, "t", 0, 50)  # a replayed range: assigned at its start
    assert c3 is c1 and c1.assignment == [("t", 0, 50)]
    _, other = pool.acquire(conf, "t", 1, 0)  # another partition: its own consumer
    _, other_conf = pool.acquire({"bootstrap.servers": "h:2"}, "t", 0, 0)
    assert len({id(c1), id(other), id(other_conf)}) == 3
    assert len(pool) == 0  # all three are in use


def test_pool_never_hands_a_forked_child_its_parents_consumers(
    fake_consumers: type[FakeConsumer], monkeypatch: pytest.MonkeyPatch
) -> None:
    pool = ConsumerPool()
    key, c1 = pool.acquire({"x": 1}, "t", 0, 0)
    pool.release(key, c1)
    monkeypatch.setattr(kafka_clients.os, "getpid", lambda: -1)  # as in a forked child
    _, c2 = pool.acquire({"x": 1}, "t", 0, 0)
    assert c2 is not c1 and not c1.closed  # the parent's consumer is neither used nor closed here
    pool.close_all()
    assert not c1.closed


def test_reader_stop_drops_its_lookup_client() -> None:
    reader = KafkaStreamReader({**BASE, "client": "kafka-python"})
    reader._admin = object()
    reader.stop()
    assert reader._admin is None


def test_pool_closes_idle_and_surplus_consumers(
    fake_consumers: type[FakeConsumer], monkeypatch: pytest.MonkeyPatch
) -> None:
    pool = ConsumerPool()
    monkeypatch.setattr(kafka_clients, "POOL_MAX", 2)
    held = [pool.acquire({"x": 1}, "t", p, 0) for p in range(3)]
    for key, c in held:
        pool.release(key, c)
    assert len(pool) == 2 and held[0][1].closed  # least recently used closed first
    pool.close_all()
    assert held[1][1].closed and held[2][1].closed and len(pool) == 0
    clock = [1000.0]
    monkeypatch.setattr(kafka_clients.time, "monotonic", lambda: clock[0])
    key, c = pool.acquire({"x": 1}, "t", 9, 0)
    pool.release(key, c)
    clock[0] += kafka_clients.POOL_IDLE_S + 1
    pool.acquire({"x": 1}, "t", 8, 0)  # any acquire closes consumers idle too long
    assert c.closed and len(pool) == 0
    pool.close_all()


def test_reader_pickles_without_its_lookup_client() -> None:
    import pickle

    reader = KafkaStreamReader({**BASE, "client": "kafka-python"})
    reader._admin = lambda: None  # stands for a live client: not picklable
    clone = pickle.loads(pickle.dumps(reader))
    assert clone._admin is None and clone.topics == ["orders"]
