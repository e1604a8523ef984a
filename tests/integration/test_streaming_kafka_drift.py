"""Schema drift through Kafka, end to end: real broker -> ``streamdq.stream(spark, cfg)`` -> Delta.

Records with an unknown field (a new column), a missing optional field, a missing required
field, a mistyped field (a type change) and an undecodable payload are produced to a topic on
the embedded broker; the running streaming job (processing-time trigger, Python Kafka source)
counts them per microbatch as UnknownFieldRows / MissingFieldRows / TypeErrorRows /
BadRecords, the bad ones land in the quarantine table (real Delta) once each with their raw
payload and reason, the good ones (drift included) are validated, and the query keeps running:
good records produced afterwards are processed too.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from kafka import KafkaProducer
from streamdq.connectors.broker import EmbeddedBroker

pytestmark = [pytest.mark.integration]

SCHEMA = "order_id STRING, ts TIMESTAMP, amount DOUBLE"


def _good(i: int) -> str:
    return json.dumps({"order_id": f"g{i}", "ts": f"2024-01-01T00:00:{i:02d}Z", "amount": float(i)})


UNKNOWN = json.dumps(  # two new fields in one record: one row with unknown fields; still a good row
    {"order_id": "u1", "ts": "2024-01-01T00:00:20Z", "amount": 5.0, "coupon": "X", "channel": "web"}
)
MISSING_OPTIONAL = json.dumps({"order_id": "m1", "ts": "2024-01-01T00:00:21Z"})  # good, amount missing
MISSING_REQUIRED = json.dumps({"ts": "2024-01-01T00:00:22Z", "amount": 7.0})  # bad: no order_id
MISTYPED = json.dumps({"order_id": "y1", "ts": "2024-01-01T00:00:23Z", "amount": "12.5"})  # bad
UNDECODABLE = '{"order_id": "x1", "ts": '  # bad, no drift facts
FIRST = [_good(1), _good(2), _good(3), UNKNOWN, MISSING_OPTIONAL, MISSING_REQUIRED, MISTYPED, UNDECODABLE]
LATER = [_good(i) for i in range(40, 46)]


def _produce(servers: str, topic: str, values: list[str]) -> None:
    producer = KafkaProducer(bootstrap_servers=servers, linger_ms=5)
    for i, v in enumerate(values):
        producer.send(topic, key=str(i).encode(), value=v.encode(), partition=i % 2)
    producer.flush()
    producer.close()


def _wait_for(cond: Callable[[], bool], timeout: float, query: Any) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if query.exception() is not None:
            raise AssertionError(f"query died: {query.exception()}")
        assert query.isActive, "the query stopped"
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.5)


def _start(spark: Any, cfg: dict, attempts: int = 3) -> tuple[Any, Any]:
    """Start the query; restart it from its checkpoint if Spark's Python source runner could not
    start (Spark gives the worker a fixed 10 s to connect back, which a loaded 2-core machine
    can miss) -- what an operator or a supervisor would do. Any other failure is raised."""
    import streamdq

    for attempt in range(attempts):
        runner = streamdq.stream(spark, cfg)
        query = runner.start()
        deadline = time.monotonic() + 60
        while query.isActive and query.lastProgress is None and time.monotonic() < deadline:
            time.sleep(0.5)
        error = query.exception()
        if error is None or "failed to connect back" not in str(error) or attempt == attempts - 1:
            return runner, query
        runner.stop()
    raise AssertionError("unreachable")


def _batch_sum(store: Any, name: str) -> float:
    table = store.history("orders", name, scope="batch")
    return sum(v for v in table.column("value").to_pylist() if v is not None)


def _last_total(store: Any, name: str, instance: str | None = None) -> float | None:
    if store.table("metrics") is None:
        return None
    table = store.history("orders", name, scope="total", instance=instance)
    rows = sorted(zip(table.column("batch_id").to_pylist(), table.column("value").to_pylist(), strict=True))
    return rows[-1][1] if rows else None


def test_schema_drift_through_kafka_is_counted_quarantined_and_the_stream_keeps_running(
    spark: Any, kafka_broker: EmbeddedBroker, topic_name: str, tmp_path: Path
) -> None:
    kafka_broker.create_topic(topic_name, partitions=2)
    servers = kafka_broker.bootstrap_servers
    _produce(servers, topic_name, FIRST)
    cfg = {
        "dataset": "orders",
        "source": {
            "type": "kafka",
            "bootstrap_servers": servers,
            "topic": topic_name,
            "format": "json",
            "schema": SCHEMA,
            "required": ["order_id"],
        },
        "event_time": "ts",
        "window": "1 minute",
        "trigger": "1 second",
        "checkpoint": str(tmp_path / "chk"),
        "state": {"path": str(tmp_path / "state")},
        "checks": [
            {
                "description": "orders",
                "level": "error",
                "constraints": [
                    {"has_size": {"assertion": ">= 0", "scope": "total"}},
                    {"has_completeness": {"column": "amount", "assertion": ">= 0", "scope": "total"}},
                ],
            }
        ],
        "sinks": [{"type": "jsonl", "path": str(tmp_path / "reports.jsonl")}],
    }
    runner, query = _start(spark, cfg)
    store = runner.store
    try:
        _wait_for(lambda: _last_total(store, "Size") == 5, 240, query)
        assert _batch_sum(store, "InputRows") == 8
        assert _batch_sum(store, "BadRecords") == 3  # missing required, mistyped, undecodable
        assert _batch_sum(store, "UnknownFieldRows") == 1  # rows, not fields (coupon + channel)
        assert _batch_sum(store, "MissingFieldRows") == 2  # amount (good row), order_id (bad row)
        assert _batch_sum(store, "TypeErrorRows") == 1
        # drifted-but-good rows are validated: 3 good + unknown-field row + missing-amount row
        assert _last_total(store, "Completeness", "amount") == pytest.approx(4 / 5)

        quarantine = store.table("quarantine")
        assert quarantine is not None, "no quarantine table was written"
        rows = quarantine.to_pyarrow_table().to_pylist()
        by_raw = {r["raw"]: r["reason"] for r in rows}
        assert sorted(r["raw"] for r in rows) == sorted([MISSING_REQUIRED, MISTYPED, UNDECODABLE]), rows
        assert by_raw[MISSING_REQUIRED] == "missing required field order_id"
        assert by_raw[MISTYPED] == "field amount: expected DOUBLE got '12.5'"
        assert by_raw[UNDECODABLE] == "undecodable JSON"
        # each quarantined row says where it came from: topic, partition, offset
        assert {r["topic"] for r in rows} == {topic_name}
        # record i went to partition i % 2 at offset i // 2 (see _produce)
        where = {r["raw"]: (r["partition"], r["offset"]) for r in rows}
        assert where == {v: (FIRST.index(v) % 2, FIRST.index(v) // 2) for v in by_raw}
        assert all(json.loads(r["source"])["topic"] == topic_name for r in rows)
        assert by_raw[MISSING_REQUIRED] and all(r["batch_id"] is not None for r in rows)

        # the stream is still running: later good records are processed
        assert query.isActive and query.exception() is None
        _produce(servers, topic_name, LATER)
        _wait_for(lambda: _last_total(store, "Size") == 5 + len(LATER), 240, query)
        assert _batch_sum(store, "InputRows") == 8 + len(LATER)
        assert _batch_sum(store, "BadRecords") == 3
        assert _batch_sum(store, "UnknownFieldRows") == 1
        assert _batch_sum(store, "MissingFieldRows") == 2
        assert _batch_sum(store, "TypeErrorRows") == 1
        assert len(store.table("quarantine").to_pyarrow_table()) == 3  # nothing new quarantined
        assert query.isActive and query.exception() is None
    finally:
        runner.stop()
