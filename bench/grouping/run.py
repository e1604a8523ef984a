"""Grouping analyzers: streamdq's frequency state vs a hand-written grouped aggregation.

Times, on the same cached DataFrame (ROWS rows, default 1M, ``--rows``):

* ``baseline``: the fastest hand-written way to get exact batch Uniqueness, Distinctness,
  CountDistinct and DuplicateRowCount of one column: ``groupBy(k).count()`` followed by
  one aggregate over the counts (scalar results, not mergeable across batches);
* ``exact``: ``analyze`` with the four analyzers on a low-cardinality column (the
  frequency table stays exact and mergeable);
* ``sketch``: ``analyze`` on a unique id column with the default bound (max_groups =
  100,000): ONE query whose branches share the grouped aggregation's shuffle: the
  bottom-k sample of key hashes (TakeOrderedAndProject) and the totals;
* ``hist``: ``Histogram(id)`` beyond the bound (the sample plus the top-keys branch);
* ``unbounded``: the same as ``sketch`` with ``max_groups=None`` (the whole table to the
  driver), skipped above 2M rows.

Last line: ``RESULT grouping rows=... baseline_s=... exact_s=... sketch_s=... hist_s=...
unbounded_s=... jobs=...``.
"""

from __future__ import annotations

import argparse
import time

from pyspark.sql import functions as F

from streamdq import analyze
from streamdq.analyzers import CountDistinct, Distinctness, DuplicateRowCount, Histogram, Uniqueness
from streamdq.spark import get_spark


def timed(fn, repeat: int = 2) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    args = parser.parse_args()
    spark = get_spark()
    df = spark.range(args.rows).select(F.col("id"), (F.col("id") % 5000).alias("cat")).cache()
    df.count()

    def baseline(column: str) -> None:
        g = df.groupBy(column).count()
        g.agg(F.sum((F.col("count") == 1).cast("long")), F.count("*"), F.sum("count")).collect()

    def suite(column: str):
        return [
            Uniqueness((column,)),
            Distinctness((column,)),
            CountDistinct((column,)),
            DuplicateRowCount((column,)),
        ]

    base_s = timed(lambda: baseline("id"))
    exact_s = timed(lambda: analyze(df, suite("cat")))
    sketch_s = timed(lambda: analyze(df, suite("id")))
    hist_s = timed(lambda: analyze(df, [Histogram("id")]))
    unbounded_s = float("nan")
    if args.rows <= 2_000_000:
        unbounded_s = timed(lambda: analyze(df, suite("id"), max_groups=None), repeat=1)  # type: ignore[arg-type]
    ctx = analyze(df, suite("id"))
    m = ctx.metric(Uniqueness(("id",)))
    print(
        f"sketch Uniqueness(id) = {m.value:.4f} +- {m.error_bound:.4f} (approximate={m.approximate}), jobs={ctx.jobs}"
    )
    print(
        f"RESULT grouping rows={args.rows} baseline_s={base_s:.2f} exact_s={exact_s:.2f} "
        f"sketch_s={sketch_s:.2f} hist_s={hist_s:.2f} unbounded_s={unbounded_s:.2f} jobs={ctx.jobs}"
    )


if __name__ == "__main__":
    main()
