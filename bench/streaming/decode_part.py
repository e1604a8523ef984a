"""Decoded source frame vs Spark's plain reader (issue 15: ``decode_x_plain_50k``).

The same ``rows`` JSON lines in one file (bench/engine/data.py's ``generate``, the schema of
bench/streaming/run.py), two readers, each ending in one ``toArrow()`` (what the small-batch path
does with a microbatch):

* plain: ``spark.read.schema(SCHEMA).json(path)`` (Spark's JSON reader, typed columns only);
* decoded: ``spark.read.text(path)`` + :func:`streamdq.connectors.sources.decode.decode_json`
  (typed columns plus the error, raw payload and drift columns) as a user gets it (``auto``:
  the single-pass JVM decoder, a Catalyst expression, when the session has streamdq's jar;
  ``decode_jvm`` says 1 when it did), and ``decoded_spark``: the same with ``decoder="spark"``
  (Spark's built-ins only). The file source's frame is this one plus its file-name column
  (connectors/sources/files.py reads ``readStream.text`` and calls the same ``decode_json``);
  the frame is built inside the timed call (a batch read builds it per query, a stream once);
* decoded_read: the decoded frame as the small-batch path's one job reads it: every column,
  but the raw payload only where the row is bad (the quarantine's copy); the raw text is
  still read and decoded for every row, only not carried to the driver
  (``decode_read_x_plain_50k``);
* Kafka's form of the same rows: the payloads as a BINARY column (what the Kafka source gives),
  ``kafka_plain`` = ``from_json`` of the payload into the schema (Spark's own decode of a Kafka
  value), ``kafka_decoded`` = ``decode_json`` of it.

Interleaved (the readers in order, then reversed, ...) ``repeats`` times after one warm-up of each;
medians of wall time; ``*_cpu_x_plain_50k`` are the same ratios in CPU seconds of the Spark JVM
(less sensitive to other processes on a busy machine than wall time). Puts
``decode_plain_ms_50k``, ``decode_ms_50k``, ``decode_x_plain_50k``, ``decode_cpu_x_plain_50k``,
``decode_spark_x_plain_50k``, ``decode_kafka_x_plain_50k``, ``decode_jvm`` and ``load_avg`` into
``results``, and the built-in decoder's floor: ``decode_typed_x_plain_50k`` (the typed parse with
a corrupt-record column alone) and ``decode_typed_keys_x_plain_50k`` (plus the key scan). The
suffix names 50k whatever ``rows`` is, so that run.py's keys stay stable.

Run alone: ``python bench/streaming/decode_part.py [--rows N] [--repeats N]``; last line
``RESULT streaming_decode key=value ...``.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import pathlib
import shutil
import statistics
import sys
import tempfile
import time
from typing import Any

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

HERE = pathlib.Path(__file__).resolve().parent
ENGINE = HERE.parent / "engine"


def _load(name: str, path: pathlib.Path) -> Any:
    """A module loaded by path (bench folders are not on sys.path: their run.py would shadow)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


# bench/streaming/run.py's SCHEMA_DDL (not imported: run.py builds its whole suite on import).
SCHEMA_DDL = (
    "id BIGINT, user_id BIGINT, email STRING, country STRING, device STRING, status INT, "
    "amount DOUBLE, score DOUBLE, quantity INT, ts TIMESTAMP, discount DOUBLE, name STRING"
)


def write_json_lines(spark: Any, rows: int, path: pathlib.Path) -> pathlib.Path:
    """``rows`` generated order events as one JSON-lines file at ``path``; returns the file."""
    from pyspark.sql import functions as F

    generate = _load("bench_engine_data", ENGINE / "data.py").generate
    staging = path.with_name(path.name + "-staging")
    generate(spark, rows, partitions=2).orderBy(F.col("id")).coalesce(1).write.json(str(staging))
    part = next(staging.glob("part-*.json"))
    part.rename(path)
    shutil.rmtree(staging, ignore_errors=True)
    return path


def _time_ms(fn: Any) -> float:
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1000.0


def decode_vs_plain(
    spark: Any, work: pathlib.Path, results: dict[str, float], rows: int = 50_000, repeats: int = 5
) -> None:
    """Median ms of one ``toArrow()`` of the plain reader and of the decoded frame (see module doc)."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import DataType, StringType, StructField, StructType
    from streamdq.connectors.sources.decode import decode_json

    work.mkdir(parents=True, exist_ok=True)
    path = write_json_lines(spark, rows, work / f"decode-{rows}.json")

    def plain() -> int:
        return int(spark.read.schema(SCHEMA_DDL).json(str(path)).toArrow().num_rows)

    def decoded() -> int:
        return int(decode_json(spark.read.text(str(path)), SCHEMA_DDL).toArrow().num_rows)

    def decoded_read() -> int:
        # the decoded frame as the validator's one job reads it: the raw payload of bad rows only
        # (for the quarantine), every other column for every row
        from streamdq import metadata_columns as M

        df = decode_json(spark.read.text(str(path)), SCHEMA_DDL)
        cols = [F.col(c) for c in df.columns if c != M.RAW]
        raw = F.when(F.col(M.ERROR).isNotNull(), F.col(M.RAW)).alias(M.RAW)
        return int(df.select(*cols, raw).toArrow().num_rows)

    def decoded_spark() -> int:
        df = spark.read.text(str(path))
        return int(decode_json(df, SCHEMA_DDL, decoder="spark").toArrow().num_rows)

    def binary() -> Any:
        return spark.read.text(str(path)).select(F.col("value").cast("binary").alias("value"))

    def kafka_plain() -> int:
        parsed = binary().select(F.from_json(F.col("value").cast("string"), SCHEMA_DDL).alias("t"))
        return int(parsed.select("t.*").toArrow().num_rows)

    def kafka_decoded() -> int:
        return int(decode_json(binary(), SCHEMA_DDL).toArrow().num_rows)

    # The decoder's floor, part by part (each ends in the same typed columns' toArrow): the
    # typed parse that knows a record which did not convert (a corrupt-record column), and that
    # parse plus the key scan that finds unknown and missing fields.
    struct = DataType.fromDDL(SCHEMA_DDL)
    typed_schema = StructType([*struct.fields, StructField("_c", StringType(), True)])
    opts = {"mode": "PERMISSIVE", "columnNameOfCorruptRecord": "_c"}
    names = struct.fieldNames()

    def typed() -> int:
        t = spark.read.text(str(path)).select(F.from_json("value", typed_schema, opts).alias("t"))
        return int(t.select(*[F.col("t").getField(n) for n in names], "t._c").toArrow().num_rows)

    def typed_keys() -> int:
        t = spark.read.text(str(path)).select(
            F.from_json("value", typed_schema, opts).alias("t"), F.json_object_keys("value").alias("k")
        )
        return int(t.select(*[F.col("t").getField(n) for n in names], "t._c", "k").toArrow().num_rows)

    from streamdq.connectors.sources import decode_jvm

    results["decode_jvm"] = float(decode_jvm.available(spark))
    fns = (plain, decoded, decoded_read, decoded_spark, typed, typed_keys, kafka_plain, kafka_decoded)
    for fn in fns:  # warm-up: JIT, file cache
        n = fn()
        assert n == rows, (fn.__name__, n, rows)
    cpu = _jvm_cpu_seconds(spark)
    times: dict[str, list[float]] = {fn.__name__: [] for fn in fns}
    cpus: dict[str, list[float]] = {fn.__name__: [] for fn in fns}
    for r in range(repeats):
        order = fns if r % 2 == 0 else tuple(reversed(fns))
        for fn in order:
            c0 = cpu()
            ms = _time_ms(fn)
            times[fn.__name__].append(ms)
            cpus[fn.__name__].append(cpu() - c0)
            print(f"decode rows={rows} repeat={r} {fn.__name__}_ms={ms:.0f}", flush=True)

    def x(name: str, base: str = "plain") -> float:
        return statistics.median(times[name]) / statistics.median(times[base])

    def x_cpu(name: str, base: str = "plain") -> float:
        return statistics.median(cpus[name]) / max(statistics.median(cpus[base]), 1e-9)

    plain_ms = statistics.median(times["plain"])
    decoded_ms = statistics.median(times["decoded"])
    results["decode_plain_ms_50k"] = plain_ms
    results["decode_ms_50k"] = decoded_ms
    results["decode_x_plain_50k"] = x("decoded")
    results["decode_cpu_x_plain_50k"] = x_cpu("decoded")
    results["decode_read_x_plain_50k"] = x("decoded_read")
    results["decode_read_cpu_x_plain_50k"] = x_cpu("decoded_read")
    results["decode_spark_x_plain_50k"] = x("decoded_spark")
    results["decode_spark_cpu_x_plain_50k"] = x_cpu("decoded_spark")
    results["decode_kafka_x_plain_50k"] = x("kafka_decoded", "kafka_plain")
    results["decode_kafka_cpu_x_plain_50k"] = x_cpu("kafka_decoded", "kafka_plain")
    results["decode_typed_x_plain_50k"] = x("typed")
    results["decode_typed_keys_x_plain_50k"] = x("typed_keys")
    results["load_avg"] = os.getloadavg()[0]
    print(
        "decode "
        + " ".join(f"{k}={v:.2f}" for k, v in results.items() if k.startswith("decode"))
        + f" load_avg={results['load_avg']:.2f}",
        flush=True,
    )


def _jvm_cpu_seconds(spark: Any) -> Any:
    """A function giving the Spark JVM's CPU seconds so far (user + system, from /proc)."""
    pid = int(spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid())
    tick = os.sysconf("SC_CLK_TCK")

    def seconds() -> float:
        fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / tick

    return seconds


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--rows", type=int, default=50_000)
    p.add_argument("--repeats", type=int, default=5)
    args = p.parse_args()
    from streamdq.spark import get_spark

    spark = get_spark(shuffle_partitions=2)
    results: dict[str, float] = {}
    work = pathlib.Path(tempfile.mkdtemp(prefix="bench-decode-"))
    try:
        decode_vs_plain(spark, work, results, rows=args.rows, repeats=args.repeats)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("RESULT streaming_decode " + " ".join(f"{k}={v:.2f}" for k, v in results.items()))


if __name__ == "__main__":
    main()
