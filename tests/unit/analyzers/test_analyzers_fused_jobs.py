"""All scan-shareable analyzers together run in ONE fused pass (as many jobs as one agg)."""

from __future__ import annotations

from pyspark.sql import functions as F

from streamdq import analyze
from streamdq.analyzers import (
    ApproxCountDistinct,
    ApproxQuantile,
    ApproxQuantiles,
    ColumnCount,
    Completeness,
    Compliance,
    Correlation,
    DataType,
    ExactQuantile,
    InterquartileRange,
    Kurtosis,
    Maximum,
    MaxLength,
    Mean,
    Minimum,
    MinLength,
    NonFinite,
    PatternMatch,
    Range,
    RatioOfSums,
    ScanShareableAnalyzer,
    Size,
    Skewness,
    StandardDeviation,
    Sum,
    Variance,
    ZerosCount,
)
from streamdq.analyzers.user_aggregation import AggregationAnalyzer
from streamdq.engine.plan import count_jobs

ALL_SCAN = [
    Size(),
    Completeness("s"),
    Compliance("pos", "x > 0", ("x",)),
    PatternMatch("s", "EMAIL"),
    Sum("x"),
    Minimum("x"),
    Maximum("x"),
    Mean("x"),
    StandardDeviation("x"),
    Variance("x"),
    Skewness("x"),
    Kurtosis("x"),
    Correlation("i", "x"),
    MinLength("s"),
    MaxLength("s", "empty_string"),
    ZerosCount("i"),
    NonFinite("x"),
    DataType("s"),
    ApproxCountDistinct("s"),
    ApproxQuantile("x", 0.5),
    ApproxQuantiles("x", (0.1, 0.9)),
    RatioOfSums("i", "x"),
    Range("x"),
    InterquartileRange("x"),
    ColumnCount(),
    ExactQuantile("x", 0.5),
    AggregationAnalyzer("average", "x"),  # a built-in aggregation function with a Spark form
    AggregationAnalyzer("discreteValuesHistogram", "s"),
]


def test_every_scan_shareable_class_is_covered():
    import streamdq.analyzers as pkg

    exported = {
        obj
        for obj in vars(pkg).values()
        if isinstance(obj, type)
        and issubclass(obj, ScanShareableAnalyzer)
        and obj is not ScanShareableAnalyzer
    }
    assert exported <= {type(a) for a in ALL_SCAN}


def test_all_scan_shareable_analyzers_share_one_pass(spark):
    rows = [(i, float(i), f"u{i}@example.com" if i % 2 else None) for i in range(8)]
    df = spark.createDataFrame(rows, "i int, x double, s string")
    with count_jobs(spark) as baseline:
        df.agg(F.count("*")).collect()
    ctx = analyze(df, ALL_SCAN)
    assert ctx.jobs == baseline[0]
    failed = {a: m.failure for a, m in ctx.metrics.items() if not m.ok}
    assert not failed
    assert ctx.metric(PatternMatch("s", "EMAIL")).value == 0.5
    assert ctx.metric(ZerosCount("i")).value == 1.0
    assert ctx.metric(Range("x")).value == 7.0
    assert ctx.metric(ColumnCount()).value == 3.0
    assert ctx.metric(ExactQuantile("x", 0.5)).value == 3.5
