"""ApproxCountDistinct: HLL built by Spark's hll_sketch_agg, merged with datasketches."""

from __future__ import annotations

import pytest
from pyspark.sql import functions as F

from streamdq.analyzers import ApproxCountDistinct
from tests.unit.analyzers.analyzer_testkit import metrics_of


def test_exact_on_tiny_inputs_and_nulls_ignored(spark):
    rows = [
        (1, 1.0, "a", True, 10),
        (2, 1.0, "b", False, 10),
        (2, 2.5, None, None, None),
        (3, None, "a", True, None),
    ]
    df = spark.createDataFrame(rows, "i int, x double, s string, b boolean, l long")
    i, x, s, b, filtered, all_null = metrics_of(
        df,
        ApproxCountDistinct("i"),
        ApproxCountDistinct("x"),
        ApproxCountDistinct("s"),
        ApproxCountDistinct("b"),
        ApproxCountDistinct("i", where="i >= 2"),
        ApproxCountDistinct("l", where="l IS NULL"),
    )
    assert [m.value for m in (i, x, s, b, filtered, all_null)] == [3.0, 2.0, 2.0, 2.0, 2.0, 0.0]
    assert i.approximate and i.error_bound is not None and 0.0 <= i.error_bound < 0.01


def test_empty_input_is_zero(spark):
    df = spark.createDataFrame([], "i int")
    (m,) = metrics_of(df, ApproxCountDistinct("i"))
    assert m.ok and m.value == 0.0


def test_integral_types_are_canonicalized_to_bigint(spark):
    df = spark.range(0, 50).select(F.col("id").cast("int").alias("i"), F.col("id").alias("l"))
    ctx_i, ctx_l = metrics_of(df, ApproxCountDistinct("i"), ApproxCountDistinct("l"))
    assert ctx_i.value == ctx_l.value == 50.0


def test_large_input_within_error_bound(spark):
    n = 20_000
    df = spark.range(0, n, numPartitions=2).select((F.col("id") % 15_000).alias("v"))
    (m,) = metrics_of(df, ApproxCountDistinct("v"))
    assert m.error_bound is not None and 0.0 < m.error_bound < 0.1
    assert m.value == pytest.approx(15_000, rel=m.error_bound)


def test_the_arrow_paths_hll_is_the_sketch_of_its_distinct_values_in_order() -> None:
    import datasketches as ds
    import pyarrow as pa

    from streamdq.analyzers.row_aggregate import _hll

    for values in (pa.array([5, 3, None, 5, 2**40, -7]), pa.array(["a", None, "b", "a", "é"])):
        reference = ds.hll_sketch(11)
        for v in values.drop_null().unique().to_pylist():
            reference.update(v)
        assert _hll(values, 11) == bytes(reference.serialize_compact())
    assert _hll(pa.array([None, None], pa.int64()), 11) is None
