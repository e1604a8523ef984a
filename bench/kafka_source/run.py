"""Throughput of the Python Kafka source (no validator) on the embedded broker, per client.

One run, one topic of ``--rows`` JSON order events (~90 bytes each) in ``--partitions``
partitions. Every figure is a median over ``--reps`` rounds; inside a round the candidates run
back to back in alternating order (ABBA), so load from other jobs hits them alike.

* ceiling (no Spark): ``<client>_ceiling_rows_s``: a plain consumer loop over the whole topic
  (assign + seek, records counted, nothing converted): the client's own wall;
  ``<client>_range_rows_s``: ``read_range`` of one partition (client + Arrow batches, what one
  read task does);
* ``<client>_spark_rows_s``: a streaming query over ``read_kafka_raw`` with ``client`` set,
  trigger AvailableNow, the whole topic in one microbatch, ``foreachBatch(df.toArrow())``: rows
  / trigger time; ``<client>_spark_x_ceiling`` = that / the client's ceiling;
  ``<client>_spark_5k_rows_s``: 5,000-row microbatches, default trigger (each trigger also
  looks up the offsets), rows / summed trigger time;
* decoded frame vs Spark's plain reader, batch reads of the same ``--rows`` payloads, time to
  ``toArrow()``: ``kafka_decode_ms`` (``read_kafka_batch`` + the JSON decoder, as ``read_source``
  builds it) vs ``plain_ms`` (``spark.read.schema(s).json(file)``), ratio ``kafka_decode_x_plain_50k``;
  to split the gap: ``kafka_raw_x_plain`` (the source alone, undecoded) and ``text_decode_x_plain``
  (the same decoder over ``spark.read.text(file)``: the decoder alone); ``pyarrow_json_ms``:
  pyarrow's JSON reader over the same payloads in this process (a floor for bulk decoding in the
  source itself, which could not give per-record reasons).

Usage: ``make bench-kafka_source [BENCH_ARGS="--rows 50000 --reps 3 --parts ceiling,spark,decode"]``. Last line:
``RESULT kafka_source key=value ...`` with ``load_avg`` (1-minute load average at the end).
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
from collections.abc import Callable
from typing import Any

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

SCHEMA = "order_id STRING, ts TIMESTAMP, amount DOUBLE, country STRING"


def payload(i: int) -> bytes:
    value = {"order_id": f"o{i}", "ts": "2026-11-22T10:00:00Z", "amount": i * 0.5, "country": "DE"}
    return json.dumps(value).encode()


def produce(servers: str, topic: str, n: int, partitions: int) -> float:
    """Produce ``n`` payloads round-robin over the partitions; rows/s."""
    t = time.perf_counter()
    try:
        import confluent_kafka as ck

        p = ck.Producer({"bootstrap.servers": servers, "linger.ms": 20})
        for i in range(n):
            p.produce(topic, value=payload(i), partition=i % partitions)
            if i % 10000 == 0:
                p.poll(0)
        p.flush()
    except ImportError:
        from kafka import KafkaProducer

        kp = KafkaProducer(bootstrap_servers=servers, linger_ms=20, batch_size=256 * 1024)
        for i in range(n):
            kp.send(topic, value=payload(i), partition=i % partitions)
        kp.flush()
        kp.close()
    return n / (time.perf_counter() - t)


def ceiling_kafka_python(servers: str, topic: str, n: int, partitions: int) -> float:
    from kafka import KafkaConsumer, TopicPartition

    c = KafkaConsumer(
        bootstrap_servers=servers, group_id=None, enable_auto_commit=False, fetch_max_wait_ms=100
    )
    c.partitions_for_topic(topic)  # connected, metadata known: the clock measures reading only
    tps = [TopicPartition(topic, p) for p in range(partitions)]
    c.assign(tps)
    for tp in tps:
        c.seek(tp, 0)
    t = time.perf_counter()
    got = 0
    while got < n:
        got += sum(len(v) for v in c.poll(timeout_ms=500, max_records=100000).values())
    rate = got / (time.perf_counter() - t)
    c.close()
    return rate


def ceiling_confluent(servers: str, topic: str, n: int, partitions: int) -> float:
    import confluent_kafka as ck

    c = ck.Consumer(
        {
            "bootstrap.servers": servers,
            "group.id": "bench",
            "enable.auto.commit": False,
            "fetch.wait.max.ms": 100,  # as the source's reader
        }
    )
    c.list_topics(topic, timeout=10)  # connected, metadata known: the clock measures reading only
    c.assign([ck.TopicPartition(topic, p, 0) for p in range(partitions)])
    t = time.perf_counter()
    got = 0
    while got < n:
        got += sum(1 for m in c.consume(num_messages=100000, timeout=0.5) if m.error() is None)
    rate = got / (time.perf_counter() - t)
    c.close()
    return rate


def abba(rounds: int, candidates: dict[str, Callable[[], float]]) -> dict[str, list[float]]:
    """Run every candidate once per round, order reversed every other round; {name: [values]}."""
    out: dict[str, list[float]] = {k: [] for k in candidates}
    names = list(candidates)
    for r in range(rounds):
        for name in names if r % 2 == 0 else reversed(names):
            out[name].append(candidates[name]())
    return out


def med(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def spark_query_rows_s(spark: Any, spec: dict, work: str, n: int) -> float:
    """Rows/s of one query over the topic, foreachBatch(toArrow): rows / summed trigger time.

    Without ``max_records_per_trigger`` the query is AvailableNow (one microbatch); with it, the
    default trigger (back to back), so every trigger also asks the broker for offsets."""
    from streamdq.connectors.sources.kafka import read_kafka_raw

    seen: list[int] = []
    ck = tempfile.mkdtemp(dir=work)
    writer = (
        read_kafka_raw(spark, spec)
        .writeStream.foreachBatch(lambda df, _b: seen.append(df.toArrow().num_rows))
        .option("checkpointLocation", ck)
    )
    if spec.get("max_records_per_trigger") is None:
        q = writer.trigger(availableNow=True).start()
        q.awaitTermination()
    else:
        q = writer.start()
        q.processAllAvailable()
        q.stop()
    progress = [p for p in q.recentProgress if p["numInputRows"]]
    phases = {k: med([p["durationMs"].get(k, 0) for p in progress]) for k in progress[0]["durationMs"]}
    print(f"  {spec.get('client')} {len(progress)} triggers, median ms per phase: {phases}", flush=True)
    assert sum(seen) == n, f"source delivered {sum(seen)} rows, expected {n}"
    shutil.rmtree(ck, ignore_errors=True)
    return n / (sum(p["durationMs"]["triggerExecution"] for p in progress) / 1000)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=50000)
    ap.add_argument("--partitions", type=int, default=2)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--parts", default="ceiling,spark,decode", help="comma-separated subset to run")
    args = ap.parse_args()
    parts_run = set(args.parts.split(","))
    n, parts = args.rows, args.partitions

    import pyarrow as pa
    import pyarrow.json as pajson
    from streamdq.connectors.broker import EmbeddedBroker
    from streamdq.connectors.sources import KAFKA_KEEP
    from streamdq.connectors.sources.decode import decode_json
    from streamdq.connectors.sources.kafka import read_kafka_batch
    from streamdq.connectors.sources.kafka_clients import CONFLUENT, KAFKA_PYTHON, confluent_available
    from streamdq.connectors.sources.kafka_datasource import (
        KafkaPartitionRange,
        consumer_config,
        read_range_with,
    )

    from streamdq.spark import get_spark

    clients = [KAFKA_PYTHON] + ([CONFLUENT] if confluent_available() else [])
    short = {KAFKA_PYTHON: "kafka_python", CONFLUENT: "confluent"}
    res: dict[str, float] = {"rows": n, "partitions": parts}
    work = tempfile.mkdtemp(prefix="bench-kafka-")
    with EmbeddedBroker() as broker:
        servers = broker.bootstrap_servers
        broker.create_topic("orders", partitions=parts)
        res["produce_rows_s"] = produce(servers, "orders", n, parts)
        print(f"produced {n} rows: {res['produce_rows_s']:.0f} rows/s", flush=True)

        # -- ceilings, no Spark
        cfg = consumer_config({"bootstrap_servers": servers})
        per_part = (n + parts - 1) // parts  # partition 0 holds ceil(n / parts) records

        def range_rate(client: str) -> float:
            t = time.perf_counter()
            got = sum(
                b.num_rows
                for b in read_range_with(client, cfg, KafkaPartitionRange("orders", 0, 0, per_part))
            )
            assert got == per_part, got
            return got / (time.perf_counter() - t)

        ceil_fns = {KAFKA_PYTHON: ceiling_kafka_python, CONFLUENT: ceiling_confluent}
        cands: dict[str, Callable[[], float]] = {}
        for c in clients if "ceiling" in parts_run else []:
            cands[f"{short[c]}_ceiling_rows_s"] = lambda c=c: ceil_fns[c](servers, "orders", n, parts)  # type: ignore[misc]
            cands[f"{short[c]}_range_rows_s"] = lambda c=c: range_rate(c)  # type: ignore[misc]
        for k, v in abba(args.reps, cands).items():
            res[k] = med(v)
            print(f"{k}: {[round(x) for x in v]}", flush=True)

        # -- the Spark source, per client
        spark = get_spark(shuffle_partitions=2)
        base = {"bootstrap_servers": servers, "topic": "orders"}
        if parts_run & {"spark", "decode"}:  # warm-up: Python workers
            spark_query_rows_s(spark, {**base, "client": KAFKA_PYTHON}, work, n)
        cands = {}
        for c in clients if "spark" in parts_run else []:
            cands[f"{short[c]}_spark_rows_s"] = lambda c=c: spark_query_rows_s(  # type: ignore[misc]
                spark, {**base, "client": c}, work, n
            )
            cands[f"{short[c]}_spark_5k_rows_s"] = lambda c=c: spark_query_rows_s(  # type: ignore[misc]
                spark, {**base, "client": c, "max_records_per_trigger": 5000}, work, n
            )
        for k, v in abba(args.reps, cands).items():
            res[k] = med(v)
            print(f"{k}: {[round(x) for x in v]}", flush=True)
        for c in clients if parts_run >= {"spark", "ceiling"} else []:
            res[f"{short[c]}_spark_x_ceiling"] = (
                res[f"{short[c]}_spark_rows_s"] / res[f"{short[c]}_ceiling_rows_s"]
            )
        if CONFLUENT in clients and "spark" in parts_run:
            res["confluent_x_kafka_python_spark"] = (
                res["confluent_spark_rows_s"] / res["kafka_python_spark_rows_s"]
            )

        if "decode" in parts_run:
            # -- decoded frame vs Spark's plain JSON reader, same payloads
            path = os.path.join(work, "payloads")
            os.makedirs(path)
            lines = b"\n".join(payload(i) for i in range(n)) + b"\n"
            with open(os.path.join(path, "part-0.json"), "wb") as fh:
                fh.write(lines)
            best = clients[-1]
            print(f"decoded frame read with client {best}", flush=True)
            spec = {**base, "client": best}

            def timed(build: Callable[[], Any]) -> Callable[[], float]:
                def run() -> float:
                    t = time.perf_counter()
                    table = build().toArrow()
                    assert table.num_rows == n, table.num_rows
                    return (time.perf_counter() - t) * 1000

                return run

            decoders = {
                "plain_ms": timed(lambda: spark.read.schema(SCHEMA).json(path)),
                "kafka_decode_ms": timed(
                    lambda: decode_json(read_kafka_batch(spark, spec), SCHEMA, keep=KAFKA_KEEP)
                ),
                "kafka_raw_ms": timed(lambda: read_kafka_batch(spark, spec)),
                "text_decode_ms": timed(lambda: decode_json(spark.read.text(path), SCHEMA)),
            }
            for f in decoders.values():  # warm-up (plans, JIT of the codegen paths)
                f()
            for k, v in abba(args.reps + 2, decoders).items():
                res[k] = med(v)
                print(f"{k}: {[round(x) for x in v]}", flush=True)
            t = time.perf_counter()
            parsed = pajson.read_json(pa.py_buffer(lines))
            res["pyarrow_json_ms"] = (time.perf_counter() - t) * 1000
            assert parsed.num_rows == n
            suffix = "50k" if n == 50000 else str(n)
            res[f"kafka_decode_x_plain_{suffix}"] = res["kafka_decode_ms"] / res["plain_ms"]
            res["kafka_raw_x_plain"] = res["kafka_raw_ms"] / res["plain_ms"]
            res["text_decode_x_plain"] = res["text_decode_ms"] / res["plain_ms"]
        if CONFLUENT in clients:  # this process's pooled consumers go before their broker does
            from streamdq.connectors.sources.kafka_clients import POOL

            POOL.close_all()
    shutil.rmtree(work, ignore_errors=True)
    res["load_avg"] = os.getloadavg()[0]
    print(
        "RESULT kafka_source "
        + " ".join(f"{k}={v:.0f}" if abs(v) >= 100 else f"{k}={v:.2f}" for k, v in res.items())
    )


if __name__ == "__main__":
    main()
