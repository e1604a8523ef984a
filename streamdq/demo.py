"""The embedded demo: batch verification of a generated ``orders`` table with the sample checks.

``run_demo`` builds a deterministic table (``orders_table``), loads the packaged sample
checks (``streamdq/examples/checks.yaml``, a copy of ``examples/checks.yaml``), verifies
the table with ONE fused analysis and prints the report. The error-level check passes; the
warning-level check fails on purpose (bulk quantities, paid orders without a coupon) to
show what a failing constraint looks like. Exit code 0 unless an error-level check fails.
"""

from __future__ import annotations

import argparse
from importlib import resources

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from streamdq.checks.spec import CheckSuite, loads_suite
from streamdq.report import ERROR
from streamdq.spark import get_spark
from streamdq.verification import verify

SAMPLE_CHECKS = "checks.yaml"


def sample_suite() -> CheckSuite:
    """The packaged sample checks (validated)."""
    text = resources.files("streamdq.examples").joinpath(SAMPLE_CHECKS).read_text(encoding="utf-8")
    return loads_suite(text, file=f"streamdq/examples/{SAMPLE_CHECKS}")


def orders_table(spark: SparkSession, rows: int) -> DataFrame:
    """A deterministic orders table: 5% NULL emails, 2% malformed ones, quantities 1..12."""
    i = F.col("id")
    statuses = F.array(*[F.lit(s) for s in ("new", "paid", "shipped", "cancelled")])
    countries = F.array(*[F.lit(c) for c in ("DE", "FR", "US", "GB", "NL")])
    amount = ((i * 37) % 100).cast("double") + F.lit(0.5)
    return spark.range(rows).select(
        i.alias("order_id"),
        (i % 997).alias("customer_id"),
        F.when(i % 20 == 0, F.lit(None))
        .when(i % 50 == 7, F.concat(F.lit("user"), i.cast("string"), F.lit("-at-example.com")))
        .otherwise(F.concat(F.lit("user"), i.cast("string"), F.lit("@example.com")))
        .alias("email"),
        amount.alias("amount"),
        F.round(amount * 0.1, 2).alias("discount"),
        (i % 12 + 1).cast("int").alias("quantity"),
        F.element_at(statuses, (i % 4 + 1).cast("int")).alias("status"),
        F.element_at(countries, (i % 5 + 1).cast("int")).alias("country"),
        F.when(i % 3 == 0, F.concat(F.lit("C"), (i % 89).cast("string"))).alias("coupon"),
    )


def run_demo(args: argparse.Namespace) -> int:
    spark = get_spark()
    suite = sample_suite()
    df = orders_table(spark, args.rows)
    print(
        f"streamdq demo: batch verification of a generated '{suite.dataset}' table "
        f"({args.rows} rows) with the sample checks (examples/checks.yaml)\n"
    )
    result = verify(df, suite.checks)
    print(result.render_text())
    return 1 if result.status == ERROR else 0
