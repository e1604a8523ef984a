"""read_kafka_raw against the real embedded broker: exactly once across restarts, starting
offsets, per-trigger limits, and a broker outage the query survives.

Timeouts are generous upper bounds (a loaded 2-core machine); each test takes ~5-30 s when idle.
Batches are collected per batch id (a replayed batch id overwrites its earlier delivery, as an
idempotent sink would), then compared with exactly what was produced.
"""

from __future__ import annotations

import importlib.util
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from kafka import KafkaProducer
from streamdq.connectors.broker import EmbeddedBroker
from streamdq.connectors.sources.kafka import read_kafka_batch, read_kafka_raw
from streamdq.connectors.sources.kafka_clients import CONFLUENT, KAFKA_PYTHON

from tests.conftest import require_integration

pytestmark = pytest.mark.integration
CLIENTS = [
    KAFKA_PYTHON,
    pytest.param(
        CONFLUENT,
        marks=pytest.mark.skipif(
            importlib.util.find_spec("confluent_kafka") is None, reason="confluent-kafka not installed"
        ),
    ),
]


class Collector:
    """foreachBatch target: {batch_id: [(topic, partition, offset, key, value)]}."""

    def __init__(self) -> None:
        self.batches: dict[int, list[tuple]] = {}
        self.replayed: list[int] = []

    def __call__(self, df: Any, batch_id: int) -> None:
        rows = [(r.topic, r.partition, r.offset, r.key, r.value) for r in df.collect()]
        if batch_id in self.batches:
            self.replayed.append(batch_id)
            assert sorted(self.batches[batch_id]) == sorted(rows), (
                "a replayed batch must hold the same records"
            )
        self.batches[batch_id] = rows

    @property
    def values(self) -> list[bytes]:
        return [r[4] for rows in self.batches.values() for r in rows]

    def nonempty_sizes(self) -> list[int]:
        return [len(rows) for _, rows in sorted(self.batches.items()) if rows]


def produce(servers: str, topic: str, values: list[str], partitions: int = 3) -> None:
    producer = KafkaProducer(bootstrap_servers=servers, linger_ms=5)
    for i, v in enumerate(values):
        producer.send(topic, key=str(i).encode(), value=v.encode(), partition=i % partitions)
    producer.flush()
    producer.close()


def start(spark: Any, spec: dict, sink: Callable, checkpoint: Path) -> Any:
    df = read_kafka_raw(spark, spec)
    return (
        df.writeStream.foreachBatch(sink)
        .option("checkpointLocation", str(checkpoint))
        .trigger(processingTime="1 second")
        .start()
    )


def wait_for(cond: Callable[[], bool], timeout: float, query: Any = None) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if query is not None and query.exception() is not None:
            raise AssertionError(f"query died: {query.exception()}")
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.25)


def test_schema_is_sparks_kafka_schema(spark: Any, kafka_broker: EmbeddedBroker, topic_name: str) -> None:
    kafka_broker.create_topic(topic_name, partitions=1)
    df = read_kafka_raw(spark, {"bootstrap_servers": kafka_broker.bootstrap_servers, "topic": topic_name})
    assert df.isStreaming
    assert df.schema.simpleString() == (
        "struct<key:binary,value:binary,topic:string,partition:int,offset:bigint,"
        "timestamp:timestamp,timestampType:int>"
    )


@pytest.mark.parametrize("client", CLIENTS)
def test_exactly_once_across_stop_and_restart_from_checkpoint(
    spark: Any, kafka_broker: EmbeddedBroker, topic_name: str, tmp_path: Path, client: str
) -> None:
    kafka_broker.create_topic(topic_name, partitions=3)
    servers = kafka_broker.bootstrap_servers
    spec = {
        "bootstrap_servers": servers,
        "topic": topic_name,
        "max_records_per_trigger": 15,
        "client": client,
    }
    first = [f"a{i}" for i in range(60)]
    produce(servers, topic_name, first)
    sink = Collector()
    q = start(spark, spec, sink, tmp_path / "ck")
    wait_for(lambda: len(sink.values) >= 15, 180, q)
    q.stop()  # stopped mid-stream: records of the first run are still unread
    assert len(sink.values) < len(first)

    second = [f"b{i}" for i in range(30)]
    produce(servers, topic_name, second)
    q = start(spark, spec, sink, tmp_path / "ck")
    q.processAllAvailable()
    q.stop()
    assert sorted(sink.values) == sorted(v.encode() for v in first + second)
    offsets = [(t, p, o) for rows in sink.batches.values() for (t, p, o, _, _) in rows]
    assert len(offsets) == len(set(offsets)) == 90


def test_starting_offsets_latest_reads_only_new_records(
    spark: Any, kafka_broker: EmbeddedBroker, topic_name: str, tmp_path: Path
) -> None:
    kafka_broker.create_topic(topic_name, partitions=3)
    servers = kafka_broker.bootstrap_servers
    produce(servers, topic_name, [f"old{i}" for i in range(12)])
    sink = Collector()
    spec = {"bootstrap_servers": servers, "topic": topic_name, "starting_offsets": "latest"}
    q = start(spark, spec, sink, tmp_path / "ck")
    q.processAllAvailable()  # resolves the initial (latest) offsets
    produce(servers, topic_name, [f"new{i}" for i in range(9)])
    q.processAllAvailable()
    q.stop()
    assert sorted(sink.values) == sorted(f"new{i}".encode() for i in range(9))


def test_starting_offsets_earliest_and_json(
    spark: Any, kafka_broker: EmbeddedBroker, topic_name: str, tmp_path: Path
) -> None:
    kafka_broker.create_topic(topic_name, partitions=3)
    servers = kafka_broker.bootstrap_servers
    produce(servers, topic_name, [f"v{i}" for i in range(30)])  # 10 per partition
    earliest = Collector()
    q = start(spark, {"bootstrap_servers": servers, "topic": topic_name}, earliest, tmp_path / "ck1")
    q.processAllAvailable()
    q.stop()
    assert len(earliest.values) == 30

    sink = Collector()
    # partition 0 from offset 7, partition 1 from earliest (-2), partition 2 from latest (-1)
    offsets = json.dumps({topic_name: {"0": 7, "1": -2, "2": -1}})
    spec = {"bootstrap_servers": servers, "topic": topic_name, "starting_offsets": offsets}
    q = start(spark, spec, sink, tmp_path / "ck2")
    q.processAllAvailable()
    q.stop()
    got = sorted((p, o) for rows in sink.batches.values() for (_, p, o, _, _) in rows)
    assert got == [(0, o) for o in range(7, 10)] + [(1, o) for o in range(10)]


def test_max_records_per_trigger_limits_batch_size(
    spark: Any, kafka_broker: EmbeddedBroker, topic_name: str, tmp_path: Path
) -> None:
    kafka_broker.create_topic(topic_name, partitions=3)
    servers = kafka_broker.bootstrap_servers
    produce(servers, topic_name, [f"v{i}" for i in range(50)])
    sink = Collector()
    spec = {"bootstrap_servers": servers, "topic": topic_name, "max_records_per_trigger": 20}
    q = start(spark, spec, sink, tmp_path / "ck")
    q.processAllAvailable()
    q.stop()
    assert sink.nonempty_sizes() == [20, 20, 10]
    assert len(set(sink.values)) == 50


def test_query_survives_broker_outage_and_resumes(spark: Any, topic_name: str, tmp_path: Path) -> None:
    broker = EmbeddedBroker()
    try:
        broker.start()
    except Exception as e:
        broker.close()
        require_integration("kafka broker", str(e))
    try:
        assert broker.persistent
        broker.create_topic(topic_name, partitions=2)
        servers = broker.bootstrap_servers
        produce(servers, topic_name, [f"before{i}" for i in range(10)], partitions=2)
        sink = Collector()
        spec = {"bootstrap_servers": servers, "topic": topic_name, "offset_timeout_s": 2}
        q = start(spark, spec, sink, tmp_path / "ck")
        wait_for(lambda: len(sink.values) == 10, 180, q)
        broker.stop()
        time.sleep(6)  # several triggers while the broker is gone
        assert q.isActive and q.exception() is None
        broker.start()
        produce(servers, topic_name, [f"after{i}" for i in range(10)], partitions=2)
        wait_for(lambda: len(sink.values) >= 20, 180, q)
        q.stop()
        expected = [f"before{i}" for i in range(10)] + [f"after{i}" for i in range(10)]
        assert sorted(sink.values) == sorted(v.encode() for v in expected)
    finally:
        broker.close()


def test_trigger_available_now_reads_the_backlog_then_stops(
    spark: Any, kafka_broker: EmbeddedBroker, topic_name: str, tmp_path: Path
) -> None:
    kafka_broker.create_topic(topic_name, partitions=3)
    servers = kafka_broker.bootstrap_servers
    produce(servers, topic_name, [f"v{i}" for i in range(30)])
    spec = {"bootstrap_servers": servers, "topic": topic_name, "max_records_per_trigger": 12}
    sink = Collector()

    def run_available_now() -> None:
        q = (
            read_kafka_raw(spark, spec)
            .writeStream.foreachBatch(sink)
            .option("checkpointLocation", str(tmp_path / "ck"))
            .trigger(availableNow=True)
            .start()
        )
        assert q.awaitTermination(180), "an AvailableNow query must stop by itself"
        assert q.exception() is None

    run_available_now()
    assert sink.nonempty_sizes() == [12, 12, 6]
    produce(servers, topic_name, [f"w{i}" for i in range(6)])
    run_available_now()  # same checkpoint: only the new records
    assert sink.nonempty_sizes() == [12, 12, 6, 6]
    assert sorted(sink.values) == sorted(
        [f"v{i}".encode() for i in range(30)] + [f"w{i}".encode() for i in range(6)]
    )


def test_partitions_added_while_running_are_read_from_earliest(
    spark: Any, kafka_broker: EmbeddedBroker, topic_name: str, tmp_path: Path
) -> None:
    from kafka import KafkaAdminClient
    from kafka.admin import NewPartitions

    kafka_broker.create_topic(topic_name, partitions=1)
    servers = kafka_broker.bootstrap_servers
    produce(servers, topic_name, [f"one{i}" for i in range(5)], partitions=1)
    sink = Collector()
    q = start(spark, {"bootstrap_servers": servers, "topic": topic_name}, sink, tmp_path / "ck")
    q.processAllAvailable()
    assert len(sink.values) == 5
    admin = KafkaAdminClient(bootstrap_servers=servers)
    admin.create_partitions({topic_name: NewPartitions(total_count=3)})
    admin.close()
    produce(servers, topic_name, [f"three{i}" for i in range(9)], partitions=3)
    wait_for(lambda: len(sink.values) >= 14, 180, q)
    q.processAllAvailable()
    q.stop()
    assert sorted(sink.values) == sorted(
        [f"one{i}".encode() for i in range(5)] + [f"three{i}".encode() for i in range(9)]
    )
    assert {p for rows in sink.batches.values() for (_, p, _, _, _) in rows} == {0, 1, 2}


def test_topic_created_after_the_query_started_is_read_from_earliest(
    spark: Any, kafka_broker: EmbeddedBroker, topic_name: str, tmp_path: Path
) -> None:
    servers = kafka_broker.bootstrap_servers
    sink = Collector()
    q = start(spark, {"bootstrap_servers": servers, "topic": topic_name}, sink, tmp_path / "ck")
    time.sleep(3)  # a few empty triggers on a topic that does not exist yet
    assert q.isActive and q.exception() is None
    kafka_broker.create_topic(topic_name, partitions=2)
    produce(servers, topic_name, [f"v{i}" for i in range(8)], partitions=2)
    wait_for(lambda: len(sink.values) >= 8, 180, q)
    q.stop()
    assert sorted(sink.values) == sorted(f"v{i}".encode() for i in range(8))


@pytest.mark.parametrize("client", CLIENTS)
def test_records_deleted_before_a_range_are_skipped_not_fatal(
    kafka_broker: EmbeddedBroker, topic_name: str, client: str
) -> None:
    from kafka import KafkaAdminClient, TopicPartition
    from streamdq.connectors.sources.kafka_datasource import (
        KafkaPartitionRange,
        KafkaStreamReader,
        consumer_config,
        read_range_with,
    )

    kafka_broker.create_topic(topic_name, partitions=1)
    servers = kafka_broker.bootstrap_servers
    produce(servers, topic_name, [f"v{i}" for i in range(10)], partitions=1)
    admin = KafkaAdminClient(bootstrap_servers=servers)
    admin.delete_records({TopicPartition(topic_name, 0): 6})  # retention removed offsets 0..5
    admin.close()

    rows = [
        row
        for batch in read_range_with(
            client, consumer_config({"bootstrap_servers": servers}), KafkaPartitionRange(topic_name, 0, 2, 10)
        )
        for row in batch.to_pylist()
    ]
    assert [r["offset"] for r in rows] == [6, 7, 8, 9]
    assert [r["value"] for r in rows] == [f"v{i}".encode() for i in range(6, 10)]

    # an explicit starting offset below the retained range is clamped to the earliest record
    reader = KafkaStreamReader(
        {
            "bootstrap_servers": servers,
            "topic": topic_name,
            "starting_offsets": json.dumps({topic_name: {"0": 2}}),
        }
    )
    assert reader.initialOffset() == {topic_name: {"0": 6}}


@pytest.mark.parametrize("client", CLIENTS)
def test_a_read_task_waiting_for_missing_records_says_so_then_gives_up(
    kafka_broker: EmbeddedBroker,
    topic_name: str,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    client: str,
) -> None:
    """A range beyond the partition's end (records the broker no longer exposes) is a visible wait:
    a warning per WAIT_REPORT_S naming the range and offset, then an error after read_timeout."""
    import logging

    from streamdq.connectors.sources import kafka_clients
    from streamdq.connectors.sources.kafka_datasource import (
        KafkaPartitionRange,
        consumer_config,
        read_range_with,
    )

    kafka_broker.create_topic(topic_name, partitions=1)
    servers = kafka_broker.bootstrap_servers
    produce(servers, topic_name, [f"v{i}" for i in range(3)], partitions=1)
    monkeypatch.setattr(kafka_clients, "WAIT_REPORT_S", 0.5)  # the read tasks' watchdog lives there
    rows = []
    config, missing = (
        consumer_config({"bootstrap_servers": servers}),
        KafkaPartitionRange(topic_name, 0, 0, 5),
    )
    with (
        caplog.at_level(logging.WARNING, logger="streamdq.connectors.kafka"),
        pytest.raises(RuntimeError, match=r"no progress reading .* \(stuck at offset 3\)"),
    ):
        for batch in read_range_with(client, config, missing, 3.0):
            rows += batch.to_pylist()
    assert [r["offset"] for r in rows] == [0, 1, 2]
    waits = [r.getMessage() for r in caplog.records if "has waited" in r.getMessage()]
    assert waits, "the wait for offsets 3..4 was silent"
    assert all("at offset 3" in m and topic_name in m for m in waits)


def test_both_clients_read_the_same_records_in_a_batch_read(
    spark: Any, kafka_broker: EmbeddedBroker, topic_name: str
) -> None:
    """read_kafka_batch (spark.read) with either client: the same rows, keys, timestamps and types;
    ending_offsets is exclusive and partitions absent from it end at latest."""
    pytest.importorskip("confluent_kafka")
    kafka_broker.create_topic(topic_name, partitions=2)
    servers = kafka_broker.bootstrap_servers
    produce(servers, topic_name, [f"v{i}" for i in range(40)], partitions=2)  # keys "0".."39"
    cols = ["key", "value", "topic", "partition", "offset", "timestamp", "timestampType"]
    got = {}
    for client in (KAFKA_PYTHON, CONFLUENT):
        spec = {"bootstrap_servers": servers, "topic": topic_name, "client": client}
        df = read_kafka_batch(spark, spec, ending_offsets={topic_name: {"0": 15}})
        assert not df.isStreaming
        got[client] = sorted(tuple(r) for r in df.select(*cols).collect())
    assert got[KAFKA_PYTHON] == got[CONFLUENT]
    rows = got[CONFLUENT]
    assert sorted((p, o) for _, _, _, p, o, _, _ in rows) == [(0, o) for o in range(15)] + [
        (1, o) for o in range(20)
    ]
    assert all(r[0] is not None and r[5] is not None and r[6] == 0 for r in rows)


def test_pooled_confluent_consumers_continue_and_replay_exact_ranges(
    kafka_broker: EmbeddedBroker, topic_name: str
) -> None:
    """A read task reuses its worker's consumer for the partition: a continuing range reads on
    without a seek, a replayed (earlier) range is re-read exactly, a range ending at the log end
    finishes; every range gives exactly its offsets."""
    pytest.importorskip("confluent_kafka")
    from streamdq.connectors.sources.kafka_clients import POOL, read_range_confluent
    from streamdq.connectors.sources.kafka_datasource import KafkaPartitionRange, consumer_config

    kafka_broker.create_topic(topic_name, partitions=1)
    servers = kafka_broker.bootstrap_servers
    produce(servers, topic_name, [f"v{i}" for i in range(300)], partitions=1)
    cfg = consumer_config({"bootstrap_servers": servers})
    POOL.close_all()
    for start, end in [(0, 100), (100, 180), (50, 120), (120, 300), (299, 300), (0, 300)]:
        rows = [
            r
            for b in read_range_confluent(cfg, KafkaPartitionRange(topic_name, 0, start, end), 30.0)
            for r in b.to_pylist()
        ]
        assert [r["offset"] for r in rows] == list(range(start, end)), (start, end)
        assert [r["value"] for r in rows] == [f"v{i}".encode() for i in range(start, end)]
        assert len(POOL) == 1  # one consumer, kept for the next range
    POOL.close_all()


def test_idle_pooled_confluent_consumers_fetch_nothing(kafka_broker: EmbeddedBroker, topic_name: str) -> None:
    """Consumers waiting in the pool (e.g. of a query that stopped) cost no CPU. Kept assigned
    they fetched at the log end without pause (the embedded broker answers an empty fetch at
    once): 3 of them burnt ~1.1 cores in this process plus the broker's, and on a 2-core machine
    the next query's streaming source process then failed to connect back to Spark in time."""
    pytest.importorskip("confluent_kafka")
    import resource

    from streamdq.connectors.sources.kafka_clients import POOL, read_range_confluent
    from streamdq.connectors.sources.kafka_datasource import KafkaPartitionRange, consumer_config

    kafka_broker.create_topic(topic_name, partitions=3)
    servers = kafka_broker.bootstrap_servers
    produce(servers, topic_name, [f"v{i}" for i in range(30)])
    cfg = consumer_config({"bootstrap_servers": servers})
    POOL.close_all()
    try:
        for p in range(3):  # each range ends at the log end, as a caught-up microbatch does
            list(read_range_confluent(cfg, KafkaPartitionRange(topic_name, p, 0, 10), 30.0))
        assert len(POOL) == 3
        assert all(e.consumer.assignment() == [] for e in POOL._idle.values())

        def cpu() -> float:
            r = resource.getrusage(resource.RUSAGE_SELF)
            return r.ru_utime + r.ru_stime

        time.sleep(0.5)
        before = cpu()
        time.sleep(3.0)
        assert cpu() - before < 0.6, "idle pooled consumers are busy (fetching while idle?)"
    finally:
        POOL.close_all()


@pytest.mark.parametrize("client", CLIENTS)
def test_min_partitions_reads_one_partition_in_several_tasks_exactly_once(
    spark: Any, kafka_broker: EmbeddedBroker, topic_name: str, client: str
) -> None:
    kafka_broker.create_topic(topic_name, partitions=1)
    servers = kafka_broker.bootstrap_servers
    produce(servers, topic_name, [f"v{i}" for i in range(100)], partitions=1)
    spec = {"bootstrap_servers": servers, "topic": topic_name, "client": client, "min_partitions": 4}
    df = read_kafka_batch(spark, spec)
    assert df.rdd.getNumPartitions() == 4
    rows = df.select("offset", "value").collect()
    assert sorted(r.offset for r in rows) == list(range(100))
    assert sorted(r.value for r in rows) == sorted(f"v{i}".encode() for i in range(100))
