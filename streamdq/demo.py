"""The embedded demo: analyze a generated sample table and print the metrics."""

from __future__ import annotations

import argparse

from pyspark.sql import functions as F

from streamdq.analyzers import Completeness, Mean, Size
from streamdq.engine.analysis import analyze
from streamdq.spark import get_spark


def run_demo(args: argparse.Namespace) -> int:
    spark = get_spark()
    df = spark.range(args.rows).select(
        F.col("id"),
        F.when(F.col("id") % 10 == 0, F.lit(None))
        .otherwise(F.concat(F.lit("user"), F.col("id")))
        .alias("email"),
        (F.col("id") % 97 * 1.5).alias("amount"),
    )
    ctx = analyze(df, [Size(), Completeness("email"), Mean("amount")])
    for metric in ctx.all_metrics():
        print(f"{metric.name:<14} {metric.instance:<8} {metric.value}")
    print(f"spark jobs: {ctx.jobs}")
    return 0
