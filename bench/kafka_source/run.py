"""Throughput of the pure-Python Kafka source (no validator), on the embedded broker.

Measures, in one run on the same topic of JSON order events (~90 bytes each, 2 partitions):

* ``produce_rows_s``: kafka-python producer into the embedded broker (setup cost, for context);
* ``raw_read_rows_s``: ``read_range`` alone (kafka-python consumer + Arrow batches), one
  partition, no Spark: the ceiling of one read task;
* ``spark_rows_s``: the Spark streaming query over ``read_kafka_raw`` with
  ``max_records_per_trigger`` = N/5 and ``foreachBatch(count)``, steady state (batches after the
  first, whose time includes Python worker start-up, reported separately as ``first_batch_s``);
* ``latest_offset_ms``: median driver-side ``latestOffset`` time per trigger (broker lookups).

Usage: ``make bench-kafka_source [BENCH_ARGS="--rows 100000"]``. Last line: ``RESULT kafka_source ...``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=60000)
    args = ap.parse_args()
    n = args.rows

    from kafka import KafkaProducer
    from streamdq.connectors.broker import EmbeddedBroker
    from streamdq.connectors.sources.kafka import read_kafka_raw
    from streamdq.connectors.sources.kafka_datasource import KafkaPartitionRange, consumer_config, read_range

    from streamdq.spark import get_spark

    work = tempfile.mkdtemp(prefix="bench-kafka-")
    with EmbeddedBroker() as broker:
        broker.create_topic("orders", partitions=2)
        producer = KafkaProducer(
            bootstrap_servers=broker.bootstrap_servers, linger_ms=20, batch_size=256 * 1024
        )
        t = time.perf_counter()
        for i in range(n):
            value = {"order_id": f"o{i}", "ts": "2026-11-22T10:00:00Z", "amount": i * 0.5, "country": "DE"}
            producer.send("orders", value=json.dumps(value).encode(), partition=i % 2)
        producer.flush()
        producer.close()
        produce_rate = n / (time.perf_counter() - t)
        print(f"produced {n} rows: {produce_rate:.0f} rows/s", flush=True)

        cfg = consumer_config({"bootstrap_servers": broker.bootstrap_servers})
        half = n // 2
        t = time.perf_counter()
        got = sum(b.num_rows for b in read_range(cfg, KafkaPartitionRange("orders", 0, 0, half)))
        raw_rate = got / (time.perf_counter() - t)
        print(f"read_range alone: {got} rows, {raw_rate:.0f} rows/s", flush=True)

        spark = get_spark(shuffle_partitions=2)
        spec = {
            "bootstrap_servers": broker.bootstrap_servers,
            "topic": "orders",
            "max_records_per_trigger": n // 5,
        }
        counted: list[tuple[int, int, float]] = []

        def handler(df, batch_id):  # type: ignore[no-untyped-def]
            t0 = time.perf_counter()
            counted.append((batch_id, df.count(), time.perf_counter() - t0))

        q = (
            read_kafka_raw(spark, spec)
            .writeStream.foreachBatch(handler)
            .option("checkpointLocation", os.path.join(work, "ck"))
            .trigger(processingTime="1 second")
            .start()
        )
        q.processAllAvailable()
        progress = [p for p in q.recentProgress if p["numInputRows"]]
        q.stop()
        total = sum(c for _, c, _ in counted)
        assert total == n, f"source delivered {total} rows, expected {n}"
        first = progress[0]["durationMs"]["triggerExecution"] / 1000
        steady = progress[1:]
        steady_rows = sum(p["numInputRows"] for p in steady)
        steady_s = sum(p["durationMs"]["triggerExecution"] for p in steady) / 1000
        spark_rate = steady_rows / steady_s if steady_s else float("nan")
        latest_ms = statistics.median(p["durationMs"].get("latestOffset", 0) for p in progress)
        for p in progress:
            print(f"batch {p['batchId']}: {p['numInputRows']} rows, durationMs={p['durationMs']}", flush=True)
    shutil.rmtree(work, ignore_errors=True)
    load = os.getloadavg()[0]
    print(
        f"RESULT kafka_source rows={n} produce_rows_s={produce_rate:.0f} raw_read_rows_s={raw_rate:.0f} "
        f"spark_rows_s={spark_rate:.0f} first_batch_s={first:.1f} latest_offset_ms={latest_ms:.0f} "
        f"load_avg={load:.1f}"
    )


if __name__ == "__main__":
    main()
