"""ApproxQuantile(s): KLL sketch built by Spark, an element of the data, with its rank error."""

from __future__ import annotations

import datasketches as ds
import pytest
from pyspark.sql import functions as F

from streamdq.analyzers import ApproxQuantile, ApproxQuantiles
from tests.unit.analyzers.analyzer_testkit import assert_failed, metrics_of


@pytest.fixture(scope="module")
def df(spark):
    rows = [(i, float(i), str(i), None) for i in range(1, 7)] + [(7, None, "x", None)]
    return spark.createDataFrame(rows, "id int, x double, s string, n double")


def test_small_inputs_give_elements_of_the_data(df):
    median, q0, q1, many, filtered = metrics_of(
        df,
        ApproxQuantile("x", 0.5),
        ApproxQuantile("x", 0.0),
        ApproxQuantile("x", 1.0),
        ApproxQuantiles("x", (0.25, 0.5, 0.9)),
        ApproxQuantile("x", 0.5, where="id > 2"),
    )
    assert (median.value, q0.value, q1.value) == (3.0, 1.0, 6.0)  # NULL ignored; ceil(q*n)-th smallest
    assert many.value == {"0.25": 2.0, "0.5": 3.0, "0.9": 6.0}
    assert filtered.value == 4.0  # 3,4,5,6 -> 2nd smallest
    assert median.approximate and many.approximate
    assert median.error_bound == pytest.approx(ds.kll_doubles_sketch(200).normalized_rank_error(False))


def test_k_controls_the_error_bound(df):
    (m,) = metrics_of(df, ApproxQuantile("x", 0.5, k=50))
    assert m.error_bound == pytest.approx(ds.kll_doubles_sketch(50).normalized_rank_error(False))


def test_preconditions_and_empty(df):
    below, above, bad_q_list, no_q, bad_k, string_col, all_null = metrics_of(
        df,
        ApproxQuantile("x", -0.1),
        ApproxQuantile("x", 1.1),
        ApproxQuantiles("x", (0.5, 2.0)),
        ApproxQuantiles("x", ()),
        ApproxQuantile("x", 0.5, k=4),
        ApproxQuantile("s", 0.5),
        ApproxQuantile("n", 0.5),
    )
    assert_failed(below, contains="closed interval [0, 1]. Currently, the value is: -0.1")
    assert_failed(above, contains="closed interval [0, 1]")
    assert_failed(bad_q_list, contains="the value is: 2.0")
    assert_failed(no_q, contains="at least one quantile")
    assert_failed(bad_k, contains="k must be an integer in [8, 65535]")
    assert_failed(string_col, contains="needs a numeric type")
    assert_failed(all_null, empty=True)


def test_large_input_rank_within_error_bound(spark):
    n = 20_000
    df = spark.range(0, n, numPartitions=2).select(((F.col("id") * 7919) % n).cast("double").alias("v"))
    (m,) = metrics_of(df, ApproxQuantiles("v", (0.1, 0.5, 0.99)))
    assert m.error_bound is not None
    for q, value in m.value.items():
        rank = (value + 1) / n  # values are a permutation of 0..n-1
        assert abs(rank - float(q)) <= m.error_bound, (q, value)
