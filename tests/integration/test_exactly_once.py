"""Exactly once across crashes: SIGKILL the streaming job at random moments while the generator
produces into a real Kafka-protocol broker, restart it from the checkpoint each time, and compare
with a batch analysis over the very same records.

After the last restart has drained the topic:
* total metrics (counts, null counts, sums, min/max, exact distinct counts) equal those of a
  batch ``analyze`` over every good record in the topic;
* each closed window's final metrics equal a batch analysis over that window's records;
* the metrics table has no duplicate (batch, scope, window, metric) row;
* quarantine holds each bad record exactly once.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

pytestmark = [pytest.mark.integration, pytest.mark.slow]

TOPIC = "eo_orders"
WINDOW_SECONDS = 20

CHECKS = {
    "checks": [
        {
            "description": "exactly once",
            "level": "error",
            "constraints": [
                {"has_size": {"assertion": ">= 0", "scope": "total"}},
                {"has_completeness": {"column": "amount", "assertion": ">= 0", "scope": "total"}},
                {"has_sum": {"column": "amount", "assertion": ">= 0", "scope": "total"}},
                {"has_min": {"column": "amount", "assertion": ">= -1e300", "scope": "total"}},
                {"has_max": {"column": "amount", "assertion": ">= -1e300", "scope": "total"}},
                {"has_distinctness": {"columns": ["order_id"], "assertion": ">= 0", "scope": "total"}},
                {"has_size": {"assertion": ">= 0", "scope": "window"}},
                {"has_completeness": {"column": "amount", "assertion": ">= 0", "scope": "window"}},
                {"has_sum": {"column": "amount", "assertion": ">= 0", "scope": "window"}},
                {"has_distinctness": {"columns": ["order_id"], "assertion": ">= 0", "scope": "window"}},
            ],
        }
    ]
}


def _config(tmp: Path, bootstrap: str) -> Path:
    from streamdq.connectors.sources.generator import GENERATOR_REQUIRED, GENERATOR_SCHEMA_DDL

    (tmp / "checks.yaml").write_text(yaml.safe_dump(CHECKS))
    cfg = {
        "dataset": "orders",
        "source": {
            "type": "kafka",
            "bootstrap_servers": bootstrap,
            "topic": TOPIC,
            "starting_offsets": "earliest",
            "max_records_per_trigger": 1500,
            "format": "json",
            "schema": GENERATOR_SCHEMA_DDL,
            "required": list(GENERATOR_REQUIRED),
        },
        "event_time": "ts",
        "window": f"{WINDOW_SECONDS} seconds",
        "watermark": "5 seconds",
        "trigger": "2 seconds",
        "checkpoint": str(tmp / "chk"),
        "state": {"path": str(tmp / "state")},
        "checks_file": str(tmp / "checks.yaml"),
        "sinks": [{"type": "jsonl", "path": str(tmp / "reports.jsonl")}],
    }
    path = tmp / "run.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def _start_job(config: Path, log: Path) -> subprocess.Popen[bytes]:
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable)
    with open(log, "ab") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "streamdq.cli", "run", str(config)],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
        )


def topic_records(bootstrap: str, topic: str = TOPIC) -> list[bytes]:
    """Every record value of ``topic``, read from the beginning to its current end."""
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, consumer_timeout_ms=5000)
    parts = [TopicPartition(topic, p) for p in consumer.partitions_for_topic(topic) or []]
    consumer.assign(parts)
    consumer.seek_to_beginning(*parts)
    end = consumer.end_offsets(parts)
    values: list[bytes] = []
    while any(consumer.position(p) < end[p] for p in parts):
        for records in consumer.poll(timeout_ms=2000).values():
            values.extend(r.value for r in records)
    consumer.close()
    return values


def _wait_drained(store, query_total: int, deadline: float) -> None:
    from streamdq.state.delta_store import DeltaStateStore

    assert isinstance(store, DeltaStateStore)
    while time.monotonic() < deadline:
        seen = store.history("orders", "InputRows", scope="batch")
        if seen.num_rows and sum(v for v in seen.column("value").to_pylist() if v) >= query_total:
            return
        time.sleep(3)
    raise AssertionError("the job did not drain the topic in time")


def test_kill_and_restart_three_times_equals_batch(tmp_path, kafka_broker, spark):
    from streamdq.connectors.sources.decode import decode_json
    from streamdq.connectors.sources.generator import (
        GENERATOR_REQUIRED,
        GENERATOR_SCHEMA_DDL,
        GeneratorConfig,
        Incident,
    )
    from streamdq.connectors.sources.generator_producer import KafkaGeneratorProducer
    from streamdq.state.delta_store import DeltaStateStore

    from streamdq.analyzers import Completeness, Distinctness, Maximum, Minimum, Size, Sum
    from streamdq.engine.analysis import analyze

    kafka_broker.create_topic(TOPIC, partitions=2)
    config = _config(tmp_path, kafka_broker.bootstrap_servers)
    log = tmp_path / "job.log"
    incidents = (
        Incident(kind="null_burst", start=5, duration=10),
        Incident(kind="schema_drift", start=20, duration=10, drift="type_change"),  # bad records
    )
    gen = GeneratorConfig(seed=11, rows_per_second=60, incidents=incidents)
    producer = KafkaGeneratorProducer(kafka_broker.bootstrap_servers, TOPIC, gen).start()
    rng = random.Random(20261122)
    kills = 0
    try:
        for _ in range(3):
            job = _start_job(config, log)
            time.sleep(rng.uniform(25, 45))
            job.send_signal(signal.SIGKILL)
            job.wait(30)
            kills += 1
        producer.stop()
        values = topic_records(kafka_broker.bootstrap_servers)
        job = _start_job(config, log)
        try:
            store = DeltaStateStore(str(tmp_path / "state"))
            _wait_drained(store, len(values), time.monotonic() + 240)
            time.sleep(2)
        finally:
            job.send_signal(signal.SIGTERM)
            job.wait(60)
    finally:
        producer.stop()
    assert kills == 3

    # the same records, decoded by the same decoder, analysed in one batch
    raw = spark.createDataFrame([(v,) for v in values], "value binary")
    decoded = decode_json(raw, GENERATOR_SCHEMA_DDL, required=list(GENERATOR_REQUIRED)).cache()
    good = decoded.filter("_streamdq_error IS NULL")
    bad_count = decoded.filter("_streamdq_error IS NOT NULL").count()
    analyzers = [
        Size(),
        Completeness("amount"),
        Sum("amount"),
        Minimum("amount"),
        Maximum("amount"),
        Distinctness(("order_id",)),
    ]
    expected = analyze(good, analyzers)

    store = DeltaStateStore(str(tmp_path / "state"))
    last = store.last_committed_batch(_query_id(tmp_path))
    assert last is not None
    report = store.report(_query_id(tmp_path), last)
    assert report is not None
    total = {(m.metric.name, m.metric.instance): m.metric for m in report.metrics if m.scope == "total"}
    for a in analyzers:
        got = total[(a.NAME, a.instance)]
        want = expected.metric(a)
        assert got.value == pytest.approx(want.value, rel=1e-9), (a, got, want)

    # every closed window's final metrics equal a batch analysis over its records
    closed = 0
    qid = _query_id(tmp_path)
    for batch_id in range(last + 1):
        rep = store.report(qid, batch_id)
        assert rep is not None, f"batch {batch_id} has no committed report"
        for window in rep.closed_windows:
            finals = {
                (m.metric.name, m.metric.instance): m.metric
                for m in rep.metrics
                if m.scope == "window" and m.window == window
            }
            lo, hi = window.start.replace(tzinfo=None), window.end.replace(tzinfo=None)
            rows = good.filter((good.ts >= lo) & (good.ts < hi))
            want = analyze(rows, [Size(), Sum("amount")])
            assert finals[("Size", "*")].value == want.metric(Size()).value, window
            assert finals[("Sum", "amount")].value == pytest.approx(
                want.metric(Sum("amount")).value, rel=1e-9
            )
            closed += 1
            if closed >= 4:
                break
    assert closed > 0, "no window was closed"

    # no duplicate metric rows, each bad record quarantined once
    metrics = store.table("metrics").to_pyarrow_table().to_pylist()
    keys = [
        (m["batch_id"], m["scope"], m["window_start"], m["name"], m["instance"], m["analyzer_key"])
        for m in metrics
    ]
    assert len(keys) == len(set(keys))
    quarantine = store.table("quarantine")
    q_rows = quarantine.to_pyarrow_table().to_pylist() if quarantine is not None else []
    assert len(q_rows) == bad_count
    assert len({r["raw"] for r in q_rows}) == bad_count


def _query_id(tmp: Path) -> str:
    meta = (tmp / "chk" / "metadata").read_text().splitlines()[0]
    return str(json.loads(meta)["id"])
