"""Generator -> real Kafka-protocol broker -> read_source(kafka, json): good rows typed and equal to
what was generated, bad payloads carried with reason and raw text, Kafka metadata passed through;
and the paced KafkaGeneratorProducer producing the same records in real time."""

from __future__ import annotations

import json
import time

import pytest
from kafka import KafkaConsumer, KafkaProducer
from streamdq.connectors.sources import ERROR_COL, RAW_COL, TYPE_ERRORS_COL, read_source
from streamdq.connectors.sources.generator import (
    GENERATOR_SCHEMA_DDL,
    GeneratorConfig,
    Incident,
    generate,
    make_record,
)
from streamdq.connectors.sources.generator_producer import KafkaGeneratorProducer

pytestmark = pytest.mark.integration

BAD = [b"not json", b'{"order_id":"x1","ts":"2026-01-01T00:00:00Z","amount":"ten"}', b'{"amount":1}']


def test_generated_stream_through_kafka_is_decoded(spark, kafka_broker, topic_name, tmp_path):
    kafka_broker.create_topic(topic_name, partitions=2)
    cfg = GeneratorConfig(
        seed=5,
        rows_per_second=100,
        start_ms=1_800_000_000_000,
        incidents=(Incident(kind="null_burst", start=1, duration=1, fraction=1.0),),
    )
    producer = KafkaGeneratorProducer(kafka_broker.bootstrap_servers, topic_name, cfg)
    assert producer.produce_range(0, 300) == 300
    producer.stop()
    raw = KafkaProducer(bootstrap_servers=kafka_broker.bootstrap_servers)
    for payload in BAD:
        raw.send(topic_name, value=payload, partition=0)
    raw.flush()
    raw.close()

    spec = {
        "type": "kafka",
        "bootstrap_servers": kafka_broker.bootstrap_servers,
        "topic": topic_name,
        "starting_offsets": "earliest",
        "format": "json",
        "schema": GENERATOR_SCHEMA_DDL,
        "required": ["order_id", "ts"],
        "implementation": "python",
    }
    rows: list = []
    q = (
        read_source(spark, spec)
        .writeStream.foreachBatch(lambda df, _b: rows.extend(df.collect()))
        .option("checkpointLocation", str(tmp_path / "chk"))
        .start()
    )
    try:
        deadline = time.monotonic() + 240
        while len(rows) < 303 and time.monotonic() < deadline:
            q.processAllAvailable()
            time.sleep(0.5)
    finally:
        q.stop()
    assert len(rows) == 303
    good = [r for r in rows if r[ERROR_COL] is None]
    expected = {rec["order_id"]: rec for _, rec in generate(cfg, 0, 300)}
    assert {r["order_id"] for r in good} == set(expected)
    for r in good:
        assert r["amount"] == expected[r["order_id"]]["amount"]
        assert r["_streamdq_kafka_topic"] == topic_name and r["_streamdq_kafka_offset"] is not None
    assert sum(r["amount"] is None for r in good) == 100  # the null burst: second 1..2 at 100 rows/s
    bad = {r[RAW_COL]: r for r in rows if r[ERROR_COL] is not None}
    assert bad["not json"][ERROR_COL] == "undecodable JSON"
    assert bad[BAD[1].decode()][ERROR_COL] == "field amount: expected DOUBLE got 'ten'"
    assert bad[BAD[1].decode()][TYPE_ERRORS_COL] == ["amount"]
    assert (
        bad['{"amount":1}'][ERROR_COL] == "missing required field ts; missing required field order_id"
    )  # schema order


def test_paced_producer_sends_due_records_in_order(kafka_broker, topic_name):
    kafka_broker.create_topic(topic_name, partitions=1)
    cfg = GeneratorConfig(seed=9, rows_per_second=50)  # starts now
    producer = KafkaGeneratorProducer(kafka_broker.bootstrap_servers, topic_name, cfg, tick_seconds=0.05)
    sent = producer.run_for(2.0)
    assert 60 <= sent <= 140 and producer.errors == 0
    consumer = KafkaConsumer(
        topic_name,
        bootstrap_servers=kafka_broker.bootstrap_servers,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        consumer_timeout_ms=5000,
    )
    got = [json.loads(m.value) for m in consumer]
    consumer.close()
    assert len(got) == sent
    assert got == [make_record(cfg, i) for i in range(sent)]
    assert all(m["order_id"] == make_record(cfg, i)["order_id"] for i, m in enumerate(got))
