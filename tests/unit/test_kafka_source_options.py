"""Kafka source option handling that needs no broker: spec validation, starting offsets,
consumer settings, and how a per-trigger limit is spread over partitions."""

from __future__ import annotations

import pickle
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st
from streamdq.connectors.sources.kafka import (
    _validate,
    native_kafka_available,
    native_options,
    read_kafka_raw,
)
from streamdq.connectors.sources.kafka_datasource import (
    KafkaPartitionRange,
    KafkaStreamReader,
    consumer_config,
    parse_starting_offsets,
    split_ranges,
    spread_limit,
)

from streamdq.errors import ConfigError

BASE = {"bootstrap_servers": "127.0.0.1:9092", "topic": "orders"}


@pytest.mark.parametrize("key", ["bootstrap_servers", "topic"])
def test_missing_required_key_names_it(key: str) -> None:
    spec = {k: v for k, v in BASE.items() if k != key}
    with pytest.raises(ConfigError, match=f"source.{key}"):
        _validate(spec)


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("starting_offsets", "yesterday"),
        ("max_records_per_trigger", 0),
        ("max_records_per_trigger", "10"),
        ("implementation", "jvm"),
        ("min_partitions", 0),
        ("min_partitions", True),
        ("kafka_options", ["a"]),
    ],
)
def test_bad_values_name_the_key(key: str, value: object) -> None:
    with pytest.raises(ConfigError, match=f"source.{key}"):
        _validate({**BASE, key: value})


def test_starting_offsets_dict_becomes_json_and_topic_list_joins() -> None:
    s = _validate({**BASE, "topic": ["a", "b"], "starting_offsets": {"a": {0: 5}}})
    assert s.topic_text == "a,b" and s.topics == ("a", "b")
    assert parse_starting_offsets(s.to_options()["starting_offsets"]) == {"a": {"0": 5}}


def test_parse_starting_offsets() -> None:
    assert parse_starting_offsets(None) == "earliest"
    assert parse_starting_offsets(" LATEST ") == "latest"
    assert parse_starting_offsets('{"t": {"0": 3, "1": -2}}') == {"t": {"0": 3, "1": -2}}
    with pytest.raises(ValueError, match="starting_offsets"):
        parse_starting_offsets('{"t": {"x": 3}}')
    with pytest.raises(ValueError, match="starting_offsets"):
        parse_starting_offsets('["t"]')


def test_consumer_config_never_uses_a_group_and_maps_dotted_options() -> None:
    cfg = consumer_config(
        {
            "bootstrap_servers": "h1:1, h2:2",
            "kafka_options": '{"security.protocol": "SSL", "kafka.client.id": "x", "group.id": "g"}',
        }
    )
    assert cfg["bootstrap_servers"] == ["h1:1", "h2:2"]
    assert cfg["security_protocol"] == "SSL" and cfg["client_id"] == "x"
    assert cfg["group_id"] is None and cfg["enable_auto_commit"] is False
    with pytest.raises(ValueError, match="kafka_options"):
        consumer_config({"bootstrap_servers": "h:1", "kafka_options": "not json"})


def test_spread_limit_is_proportional_and_exact() -> None:
    start = {"t": {"0": 0, "1": 100, "2": 5}}
    end = {"t": {"0": 80, "1": 120, "2": 5}}  # backlog 80, 20, 0
    capped = spread_limit(start, end, 10)
    assert capped == {"t": {"0": 8, "1": 102, "2": 5}}
    assert spread_limit(start, end, 1000) == end


@given(
    backlog=st.lists(st.integers(0, 500), min_size=1, max_size=6),
    starts=st.lists(st.integers(0, 1000), min_size=6, max_size=6),
    limit=st.integers(1, 700),
)
def test_spread_limit_never_exceeds_budget_or_backlog(
    backlog: list[int], starts: list[int], limit: int
) -> None:
    start = {"t": {str(i): starts[i] for i in range(len(backlog))}}
    end = {"t": {str(i): starts[i] + b for i, b in enumerate(backlog)}}
    capped = spread_limit(start, end, limit)
    taken = [capped["t"][str(i)] - starts[i] for i in range(len(backlog))]
    assert all(0 <= t <= b for t, b in zip(taken, backlog, strict=True))
    assert sum(taken) == min(limit, sum(backlog))  # uses the whole budget when there is backlog


def test_reader_and_ranges_are_picklable_and_ranges_skip_empty_partitions() -> None:
    reader = KafkaStreamReader({**BASE, "max_records_per_trigger": "5"})
    clone = pickle.loads(pickle.dumps(reader))
    parts = clone.partitions({"orders": {"0": 3, "1": 4}}, {"orders": {"0": 9, "1": 4, "2": 2}})
    assert [(r.topic, r.partition, r.start, r.end) for r in parts if isinstance(r, KafkaPartitionRange)] == [
        ("orders", 0, 3, 9),
        ("orders", 2, 0, 2),
    ]
    assert pickle.loads(pickle.dumps(parts[0])).end == 9


def test_min_partitions_cuts_busy_partitions_into_contiguous_pieces() -> None:
    reader = KafkaStreamReader({**BASE, "min_partitions": "4"})
    parts = reader.partitions({"orders": {"0": 0, "1": 10}}, {"orders": {"0": 300, "1": 110}})
    got = [(r.partition, r.start, r.end) for r in parts if isinstance(r, KafkaPartitionRange)]
    # 300 of 400 records in partition 0: three pieces; partition 1: one
    assert got == [(0, 0, 100), (0, 100, 200), (0, 200, 300), (1, 10, 110)]
    tiny = [KafkaPartitionRange("t", 0, 5, 7)]
    assert [(r.start, r.end) for r in split_ranges(tiny, 8)] == [(5, 6), (6, 7)]  # >= 1 record each
    assert split_ranges(tiny, None) == tiny and split_ranges(tiny, 1) == tiny
    assert len(KafkaStreamReader(BASE).partitions({}, {"orders": {"0": 300}})) == 1  # default: one


def test_native_options_map_spec_keys_to_sparks_kafka_options() -> None:
    s = _validate({**BASE, "max_records_per_trigger": 500, "kafka_options": {"security.protocol": "SSL"}})
    assert native_options(replace(s, min_partitions=4))["minPartitions"] == "4"
    assert native_options(s) == {
        "kafka.bootstrap.servers": "127.0.0.1:9092",
        "subscribe": "orders",
        "startingOffsets": "earliest",
        "failOnDataLoss": "false",
        "maxOffsetsPerTrigger": "500",
        "kafka.security.protocol": "SSL",
    }


def test_without_the_kafka_jar_auto_uses_python_and_native_fails_fast(spark) -> None:
    assert not native_kafka_available(spark)  # no spark-sql-kafka jar on this machine
    with pytest.raises(ConfigError, match="source.implementation"):
        read_kafka_raw(spark, {**BASE, "implementation": "native"})
    df = read_kafka_raw(spark, {**BASE, "implementation": "python"})  # lazy: no broker contacted yet
    assert df.isStreaming and df.columns[:2] == ["key", "value"]


@pytest.mark.parametrize("client", ["kafka-python", "confluent-kafka"])
@pytest.mark.parametrize("listening", [False, True], ids=["refused", "silent"])
def test_latest_offset_returns_start_quickly_when_the_broker_is_unreachable(
    listening: bool, client: str
) -> None:
    import socket
    import time

    from pyspark.sql.streaming.datasource import ReadAllAvailable

    with socket.socket() as srv:
        srv.bind(("127.0.0.1", 0))
        if listening:
            srv.listen()  # accepts connections, never answers a request
        servers = f"127.0.0.1:{srv.getsockname()[1]}"
        if client == "confluent-kafka":
            pytest.importorskip("confluent_kafka")
        reader = KafkaStreamReader(
            {"bootstrap_servers": servers, "topic": "t", "offset_timeout_s": "1", "client": client}
        )
        start = {"t": {"0": 42, "1": 7}}
        t0 = time.monotonic()
        for _ in range(3):
            assert reader.latestOffset(start, ReadAllAvailable()) == start
        assert time.monotonic() - t0 < 15
        assert reader.reportLatestOffset() is None
