"""What SQL measures cost a microbatch: the streaming handler on static frames, in memory.

Configurations, each on the same frames (500 rows: the Arrow path; 20,000 rows with
``small_batch_rows=0``: the fused path), the median of ``--batches`` handled batches after one
warm-up:

* ``none``: the checks alone (one ``has_size``);
* ``compiled``: plus the seed's ``Null Count`` and a 4-aggregate ``map`` measure (they join the
  one pass: no job of their own);
* ``sql``: plus one measure that runs as Spark SQL (``count(distinct ...)``: one job per batch).

    .venv/bin/python bench/measures/run.py [--batches 7]

Last line: ``RESULT measures rows=... none_ms=... compiled_ms=... sql_ms=...`` per size.
"""

from __future__ import annotations

import argparse
import statistics
import time
from datetime import datetime, timedelta

from streamdq.state import InMemoryStateStore

from streamdq.checks.check import Check, Level
from streamdq.checks.measure import Measure
from streamdq.engine.handler import BatchHandler
from streamdq.engine.judge import BatchJudge
from streamdq.engine.measures import MeasureRunner
from streamdq.spark import get_spark

COMPILED = [
    Measure("Null Count", "select sum(cast((amount is null) as int)) from data", "single_value"),
    Measure(
        "stats",
        "select count(*) as n, avg(amount) as mean, max(qty) as top, count_if(qty > 5) as big from data",
        "map",
    ),
]
SQL = [Measure("distinct", "select count(distinct id) as cd from data", "single_value")]


def frame(spark, rows: int):
    t0 = datetime(2026, 1, 1)
    data = [
        (
            t0 + timedelta(seconds=i % 600),
            f"id{i % (rows // 2 + 1)}",
            None if i % 7 == 0 else float(i),
            i % 11,
        )
        for i in range(rows)
    ]
    return spark.createDataFrame(data, "ts timestamp, id string, amount double, qty int")


def handler(df, measures, small_batch_rows: int) -> BatchHandler:
    return BatchHandler(
        dataset="bench",
        query_id="q",
        judge=BatchJudge([Check(Level.ERROR, "c").has_size(">= 0")]),
        window_seconds=60,
        event_time="ts",
        store=InMemoryStateStore(),
        small_batch_rows=small_batch_rows,
        rows_cap=100_000,
        measures=MeasureRunner(measures, df.schema),
    )


def run(df, configs: dict[str, list[Measure]], small_batch_rows: int, batches: int) -> dict[str, float]:
    """Median ms per configuration; the configurations take turns batch by batch, so a load
    change on the machine hits them alike."""
    handlers = {name: handler(df, measures, small_batch_rows) for name, measures in configs.items()}
    times: dict[str, list[float]] = {name: [] for name in configs}
    for b in range(batches + 1):
        for name, h in handlers.items():
            started = time.perf_counter()
            h.handle(df, b)
            if b:  # the first batch warms caches (expressions, names)
                times[name].append((time.perf_counter() - started) * 1000)
    return {name: statistics.median(t) for name, t in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--batches", type=int, default=7)
    args = parser.parse_args()
    spark = get_spark(shuffle_partitions=2)
    out = []
    for rows, small in ((500, 250_000), (20_000, 0)):
        df = frame(spark, rows).cache()
        df.count()
        ms = run(df, {"none": [], "compiled": COMPILED, "sql": COMPILED + SQL}, small, args.batches)
        df.unpersist()
        line = f"rows={rows} " + " ".join(f"{k}_ms={v:.0f}" for k, v in ms.items())
        print(line, flush=True)
        out.append(line)
    print("RESULT measures " + " | ".join(out))


if __name__ == "__main__":
    main()
