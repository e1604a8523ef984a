"""Streaming benchmark (issue 3): the validator inside a real Structured Streaming query.

Parts (``--parts``, default all):

* ``incremental``: after 1, 10, 50, 100 microbatches of ``--batch-rows`` rows, the time to get
  the total-scope metrics of the standard suite (bench/engine) by merging the newest batch's
  states into the running total and computing metrics from states (what the streaming handler
  does every batch), beside the time to recompute them with one ``analyze`` over all data so
  far. The incremental line must stay flat; the batch line grows with the data.
  Also ``state bytes``: ``len(State.to_bytes())`` of every analyzer's total state after the
  last batch (per column for single-column analyzers), grouped by analyzer family.
* ``overhead``: per-microbatch cost of the streamdq handler (standard suite, 1-hour windows,
  Delta state store, jsonl sink) on a JSON file source fed one file per trigger
  (``availableNow``, ``maxFilesPerTrigger=1``), for empty files and for 1,000-row files, beside
  the same source and trigger with a no-op ``foreachBatch`` (Spark's own trigger overhead)
  and with a hand-written fused ``agg`` of the same metrics (the fastest hand-made
  validator). Medians of ``durationMs.triggerExecution`` over the batches after the first, of
  ``--rounds`` runs per consumer in ABBA order (A B C, C B A) so that a change of the machine's
  load during the run hits every consumer alike.
* ``files`` / ``kafka``: sustained rows/s of the hand-written validator and of streamdq over ``--stream-rows`` rows in batches of ``--stream-batch`` rows, from JSON files
  and from a topic (2 partitions) on the embedded Kafka broker (Python Kafka source), both with
  ``availableNow``. Steady state leaves out the first batch (Python worker start-up). Also the
  share of the trigger time spent inside streamdq's handler, split into compute (Spark jobs of
  the fused pass, driver merge/judge) and commit (Delta state store).

Ratios are against baselines measured in the same run, on the same source and trigger. Last
line: ``RESULT streaming key=value ...``.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

ENGINE = Path(__file__).resolve().parents[1] / "engine"


def _engine_module(name: str) -> Any:
    """A module of bench/engine loaded by path: that folder is not put on sys.path (its file
    names, e.g. profile.py or run.py, would shadow other modules)."""
    spec = importlib.util.spec_from_file_location(f"bench_engine_{name}", ENGINE / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _standard_checks() -> list[Any]:
    """bench/engine/run.py's standard suite."""
    checks: list[Any] = _ENGINE_RUN.standard_checks()
    return checks


from pyspark.sql import DataFrame  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402

from streamdq.engine.analysis import analyze, metrics_from_states  # noqa: E402
from streamdq.spark import get_spark  # noqa: E402

_DATA = _engine_module("data")
generate = _DATA.generate
_ENGINE_RUN = _engine_module("run")  # its standard suite and hand-written fused scan

SCHEMA_DDL = (
    "id BIGINT, user_id BIGINT, email STRING, country STRING, device STRING, status INT, "
    "amount DOUBLE, score DOUBLE, quantity INT, ts TIMESTAMP, discount DOUBLE, name STRING"
)
CONSUMERS = ("noop", "fused", "streamdq")


def incremental(spark: Any, args: argparse.Namespace, results: dict[str, float]) -> None:
    """Incremental vs batch total metrics after 1..100 microbatches; state bytes per family."""
    checkpoints = [int(x) for x in args.checkpoints.split(",")]
    n_batches = max(checkpoints)
    analyzers: list[Any] = []
    for check in _standard_checks():
        analyzers.extend(check.required_analyzers())
    analyzers = list(dict.fromkeys(analyzers))
    data = generate(spark, args.batch_rows * n_batches, partitions=2).cache()
    data.count()

    total: dict[Any, Any] = {}
    for b in range(1, n_batches + 1):
        batch = data.filter((data.id >= (b - 1) * args.batch_rows) & (data.id < b * args.batch_rows))
        states = analyze(batch, analyzers).states
        t0 = time.perf_counter()
        for a, s in states.items():
            total[a] = total[a].merge(s) if a in total else s
        metrics_from_states(analyzers, total, {})
        incr = time.perf_counter() - t0
        if b in checkpoints:
            so_far = data.filter(data.id < b * args.batch_rows)
            t0 = time.perf_counter()
            analyze(so_far, analyzers)
            full = time.perf_counter() - t0
            results[f"incr_ms_{b}"] = incr * 1000
            results[f"batch_ms_{b}"] = full * 1000
            print(
                f"after {b:4d} batches ({b * args.batch_rows} rows): incremental {incr * 1000:8.2f} ms, "
                f"batch recompute {full * 1000:8.1f} ms",
                flush=True,
            )

    sizes: dict[str, list[int]] = defaultdict(list)
    for a, s in total.items():
        sizes[type(a).__name__].append(len(s.to_bytes()))
    print("state bytes per analyzer family (per column / instance) after the last batch:")
    for family, vals in sorted(sizes.items()):
        print(f"  {family:24s} {max(vals):8d} bytes (x{len(vals)})")
    print(f"  total per window/scope: {sum(sum(v) for v in sizes.values())} bytes")
    results["state_bytes_total"] = sum(sum(v) for v in sizes.values())
    data.unpersist()


# -- the streaming parts -----------------------------------------------------------------------
FUSED_ROWS: dict[int, int] = {}  # batch id -> rows the hand-written validator counted


def hand_fused(df: DataFrame, batch_id: int) -> None:
    """The hand-written validator: one fused ``agg`` of the suite's scan metrics plus the
    ``id`` uniqueness group-by (bench/engine's baseline: its ``fused_scan`` and grouping)."""
    row = _ENGINE_RUN.fused_scan(df)
    FUSED_ROWS[batch_id] = int(row[0])
    df.groupBy("id").count().agg(F.sum(F.when(F.col("count") == 1, 1).otherwise(0)), F.sum("count")).collect()


def noop(df: DataFrame, batch_id: int) -> None:
    """Spark's own cost of a trigger: plan the batch, commit offsets; the data is never read."""


def run_config(source: dict[str, Any], work: Path, name: str) -> dict[str, Any]:
    from streamdq.checks.spec import suite_to_dict

    return {
        "dataset": "orders",
        "source": source,
        "event_time": "ts",
        "window": "1 hour",
        "trigger": "available_now",
        "checkpoint": str(work / f"chk-{name}"),
        "state": {"path": str(work / f"state-{name}")},
        "checks": suite_to_dict(_standard_checks())["checks"],
        "sinks": [{"type": "jsonl", "path": str(work / f"reports-{name}.jsonl")}],
    }


def _start(start: Callable[[], Any], attempts: int = 3) -> Any:
    """Start a query; start it again if Spark's Python source runner missed its fixed 10 s to
    connect back (a loaded 2-core machine); any other failure is raised."""
    for attempt in range(attempts):
        query = start()
        while query.isActive and query.lastProgress is None:
            time.sleep(0.2)
        error = query.exception()
        if error is None or "failed to connect back" not in str(error) or attempt == attempts - 1:
            return query
        print("  (python source runner did not connect back in time; restarting the query)", flush=True)
    raise AssertionError("unreachable")


def run_consumer(spark: Any, config: dict[str, Any], consumer: str, timeout: float = 1800) -> dict[str, Any]:
    """Run one availableNow query to the end; its per-batch progress (and streamdq timings)."""
    from streamdq.engine.streaming import stream

    runner = stream(spark, config)

    def start() -> Any:
        shutil.rmtree(config["checkpoint"], ignore_errors=True)
        if consumer == "streamdq":
            return runner.start()
        fn = noop if consumer == "noop" else hand_fused
        return (
            runner.source_frame()
            .writeStream.foreachBatch(fn)
            .option("checkpointLocation", config["checkpoint"])
            .trigger(availableNow=True)
            .start()
        )

    t0 = time.perf_counter()
    query = _start(start)
    query.awaitTermination(timeout)
    wall = time.perf_counter() - t0
    try:
        if query.exception() is not None:
            raise RuntimeError(f"{consumer} query failed: {query.exception()}")
        progress = [p for p in query.recentProgress if "addBatch" in p["durationMs"]]
    finally:
        runner.stop()
    timings: dict[int, dict[str, float]] = {}
    rows: dict[int, int] = {}
    reports = Path(config["sinks"][0]["path"])
    if consumer == "streamdq" and reports.exists():
        from streamdq.connectors.sinks.jsonl import read_lines

        for line in read_lines(reports):
            timings[int(line["batch_id"])] = line["report"]["timings"]
            rows[int(line["batch_id"])] = int(line["report"]["counters"]["input_rows"])
    elif consumer == "fused":
        rows = dict(FUSED_ROWS)
    FUSED_ROWS.clear()
    # numInputRows counts every scan of the batch (a consumer may scan twice): use the
    # consumer's own row count per batch instead
    return {"progress": progress, "timings": timings, "rows": rows, "wall": wall}


def _steady(run: dict[str, Any]) -> list[dict[str, Any]]:
    steady: list[dict[str, Any]] = run["progress"][1:] or run["progress"]
    return steady


def _median_ms(runs: list[dict[str, Any]], key: str = "triggerExecution") -> float:
    """Median per-batch duration over the steady batches of all rounds."""
    return float(statistics.median(p["durationMs"].get(key, 0) for r in runs for p in _steady(r)))


def _rows_per_s(runs: list[dict[str, Any]]) -> float:
    rows = sum(r["rows"][int(p["batchId"])] for r in runs for p in _steady(r))
    seconds = sum(p["durationMs"]["triggerExecution"] for r in runs for p in _steady(r)) / 1000
    return rows / seconds if seconds else float("nan")


def _handler_share(runs: list[dict[str, Any]]) -> dict[str, float]:
    """Shares of the steady trigger time: in the handler, its compute and its commit."""
    trigger_s = sum(p["durationMs"]["triggerExecution"] for r in runs for p in _steady(r)) / 1000
    t = [r["timings"].get(int(p["batchId"]), {}) for r in runs for p in _steady(r)]
    handler = sum(x.get("total", 0.0) for x in t)
    commit = sum(x.get("commit", 0.0) for x in t)
    compute = sum(x.get("compute", 0.0) for x in t)
    return {
        "handler": handler / trigger_s,
        "compute": compute / trigger_s,
        "commit": commit / trigger_s,
        "commit_ms": 1000 * statistics.median(x.get("commit", 0.0) for x in t),
        "compute_ms": 1000 * statistics.median(x.get("compute", 0.0) for x in t),
    }


def _rounds(consumers: tuple[str, ...], rounds: int) -> list[str]:
    """ABBA order (A B C, C B A, ...): a load change during the run hits every consumer alike."""
    order: list[str] = []
    for r in range(rounds):
        order += list(consumers if r % 2 == 0 else reversed(consumers))
    return order


def _json_files(spark: Any, rows: int, files: int, inbox: Path, work: Path, first_id: int = 0) -> None:
    """``files`` JSON-lines files of ``rows // files`` rows each (ids from ``first_id``), in order."""
    staging = work / f"staging-{first_id}"
    data = generate(spark, first_id + rows, partitions=2).filter(F.col("id") >= first_id)
    data.repartitionByRange(files, "id").sortWithinPartitions("id").write.json(str(staging))
    parts = sorted(staging.glob("part-*.json"), key=lambda p: int(p.name.split("-")[1]))
    inbox.mkdir(parents=True, exist_ok=True)
    for i, part in enumerate(parts):
        part.rename(inbox / f"{first_id:09d}-{i:05d}.json")
    shutil.rmtree(staging, ignore_errors=True)


def file_source(inbox: Path, files_per_trigger: int) -> dict[str, Any]:
    return {
        "type": "files",
        "path": str(inbox),
        "format": "json",
        "schema": SCHEMA_DDL,
        "max_files_per_trigger": files_per_trigger,
    }


def overhead(spark: Any, args: argparse.Namespace, work: Path, results: dict[str, float]) -> None:
    """Per-microbatch cost: empty and 1k-row batches, no-op vs hand-written vs streamdq."""
    empty_in, rows_in = work / "in-empty", work / "in-1k"
    empty_in.mkdir(parents=True)
    for i in range(args.overhead_batches):
        (empty_in / f"{i:05d}.json").touch()
    _json_files(spark, 1000 * args.overhead_batches, args.overhead_batches, rows_in, work)
    print(
        f"overhead: {args.overhead_batches} batches per run, {args.rounds} rounds (ABBA),"
        " medians of the steady batches (ms)",
        flush=True,
    )
    for label, inbox in (("empty", empty_in), ("1k", rows_in)):
        runs: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for i, consumer in enumerate(_rounds(CONSUMERS, args.rounds)):
            cfg = run_config(file_source(inbox, 1), work, f"ovh-{label}-{consumer}-{i}")
            runs[consumer].append(run_consumer(spark, cfg, consumer))
        medians: dict[str, float] = {}
        for consumer in CONSUMERS:
            medians[consumer] = _median_ms(runs[consumer])
            add = _median_ms(runs[consumer], "addBatch")
            extra = ""
            if consumer == "streamdq":
                share = _handler_share(runs[consumer])
                extra = (
                    f"  (handler compute {share['compute_ms']:.0f} ms, commit {share['commit_ms']:.0f} ms)"
                )
                results[f"ovh_{label}_commit_ms"] = share["commit_ms"]
            print(
                f"  {label:5s} {consumer:8s} trigger {medians[consumer]:7.0f}  addBatch {add:7.0f}"
                f"  batches {sum(len(r['progress']) for r in runs[consumer])}{extra}",
                flush=True,
            )
            results[f"ovh_{label}_{consumer}_ms"] = medians[consumer]
        results[f"ovh_{label}_handler_ms"] = medians["streamdq"] - medians["noop"]
        results[f"ovh_{label}_x_noop"] = medians["streamdq"] / medians["noop"]
        results[f"ovh_{label}_x_fused"] = medians["streamdq"] / medians["fused"]


def throughput(
    spark: Any, args: argparse.Namespace, work: Path, results: dict[str, float], kind: str
) -> None:
    """Sustained rows/s from the file source or from the Kafka source, hand-written vs streamdq."""
    rows, per_batch = args.stream_rows, args.stream_batch
    if kind == "files":
        files = max(1, rows // args.file_rows)
        inbox = work / "in-stream"
        _json_files(spark, rows, files, inbox, work)
        source = file_source(inbox, max(1, per_batch // args.file_rows))
        _throughput_runs(spark, work, results, kind, source, rows, args.rounds)
        return
    from streamdq.connectors.broker import EmbeddedBroker

    with EmbeddedBroker() as broker:
        broker.create_topic("orders", partitions=2)
        t = time.perf_counter()
        _produce(spark, broker.bootstrap_servers, rows)
        print(f"kafka: produced {rows} rows in {time.perf_counter() - t:.1f} s", flush=True)
        source = {
            "type": "kafka",
            "bootstrap_servers": broker.bootstrap_servers,
            "topic": "orders",
            "format": "json",
            "schema": SCHEMA_DDL,
            "max_records_per_trigger": per_batch,
        }
        _throughput_runs(spark, work, results, kind, source, rows, args.rounds)


def _produce(spark: Any, servers: str, rows: int) -> None:
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=servers, linger_ms=20, batch_size=256 * 1024)
    values = generate(spark, rows, partitions=2).select(F.to_json(F.struct("*")).alias("v"))
    for i, row in enumerate(values.toLocalIterator()):
        producer.send("orders", value=row.v.encode(), partition=i % 2)
    producer.flush()
    producer.close()


def _throughput_runs(
    spark: Any,
    work: Path,
    results: dict[str, float],
    kind: str,
    source: dict[str, Any],
    rows: int,
    rounds: int,
) -> None:
    runs: dict[str, list[dict[str, Any]]] = defaultdict(list)
    # a no-op never reads the rows: no rows/s to compare with
    for i, consumer in enumerate(_rounds(("fused", "streamdq"), rounds)):
        cfg = run_config(source, work, f"{kind}-{consumer}-{i}")
        run = run_consumer(spark, cfg, consumer)
        delivered = sum(run["rows"].values())
        assert delivered == rows, f"{kind}/{consumer}: {delivered} rows delivered, expected {rows}"
        first = run["progress"][0]["durationMs"]["triggerExecution"] / 1000
        print(
            f"    {kind} {consumer}: {_rows_per_s([run]):.0f} rows/s steady ({len(run['progress'])} batches,"
            f" wall {run['wall']:.1f} s, first batch {first:.1f} s)",
            flush=True,
        )
        runs[consumer].append(run)
    rates: dict[str, float] = {}
    for consumer, done in runs.items():
        rates[consumer] = _rows_per_s(done)
        line = f"  {kind:5s} {consumer:8s} {rates[consumer]:9.0f} rows/s steady, {rounds} rounds"
        if consumer == "streamdq":
            share = _handler_share(done)
            line += (
                f"; handler {100 * share['handler']:.0f}% of trigger time"
                f" (compute {100 * share['compute']:.0f}%, commit {100 * share['commit']:.0f}%)"
            )
            results[f"{kind}_handler_share"] = share["handler"]
            results[f"{kind}_commit_share"] = share["commit"]
        print(line, flush=True)
        results[f"{kind}_{consumer}_rows_s"] = rates[consumer]
    results[f"{kind}_x_fused"] = rates["streamdq"] / rates["fused"]


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--parts", default="incremental,overhead,files,kafka")
    p.add_argument("--batch-rows", type=int, default=2000, help="incremental: rows per microbatch")
    p.add_argument("--checkpoints", default="1,10,50,100", help="incremental: batch counts measured")
    p.add_argument("--overhead-batches", type=int, default=6, help="overhead: batches per run")
    p.add_argument("--stream-rows", type=int, default=80_000, help="files/kafka: rows in total")
    p.add_argument("--stream-batch", type=int, default=20_000, help="files/kafka: rows per microbatch")
    p.add_argument("--file-rows", type=int, default=5_000, help="files: rows per file")
    p.add_argument("--rounds", type=int, default=2, help="runs per consumer, in ABBA order")
    args = p.parse_args()
    parts = [x.strip() for x in args.parts.split(",") if x.strip()]

    spark = get_spark(shuffle_partitions=2)
    spark.sparkContext.setLogLevel("ERROR")
    results: dict[str, float] = {}
    work = Path(tempfile.mkdtemp(prefix="bench-streaming-"))
    started = time.perf_counter()
    try:
        if "incremental" in parts:
            incremental(spark, args, results)
        if "overhead" in parts:
            overhead(spark, args, work, results)
        for kind in ("files", "kafka"):
            if kind in parts:
                throughput(spark, args, work, results, kind)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    results["load_avg"] = os.getloadavg()[0]
    results["wall_s"] = time.perf_counter() - started
    print("RESULT streaming " + " ".join(f"{k}={v:.2f}" for k, v in results.items()))


if __name__ == "__main__":
    main()
