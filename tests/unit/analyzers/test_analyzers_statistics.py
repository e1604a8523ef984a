"""Sum, Minimum, Maximum, Mean, StandardDeviation, Variance, Skewness, Kurtosis, ZerosCount."""

from __future__ import annotations

from decimal import Decimal

import pytest

from streamdq.analyzers import (
    Kurtosis,
    Maximum,
    Mean,
    Minimum,
    Skewness,
    StandardDeviation,
    Sum,
    Variance,
    ZerosCount,
)
from streamdq.analyzers.basic_states import MomentsState
from tests.unit.analyzers.analyzer_testkit import assert_failed, metrics_of

ALL = (Sum, Minimum, Maximum, Mean, StandardDeviation, Variance, Skewness, Kurtosis)


@pytest.fixture(scope="module")
def df(spark):
    rows = [(i, float(i) if i != 3 else None, str(i), 5, None, i % 3) for i in range(1, 7)]
    return spark.createDataFrame(rows, "att1 int, att2 double, s string, c int, n double, z long")


def test_reference_values_on_one_to_six(df):
    values = [m.value for m in metrics_of(df, *(cls("att1") for cls in ALL))]
    expected = [21.0, 1.0, 6.0, 3.5, 1.707825127659933, 2.9166666666666665, 0.0, -1.2685714285714285]
    assert values == pytest.approx(expected, abs=1e-12)


def test_nulls_are_skipped(df):
    # att2 = 1, 2, NULL, 4, 5, 6
    s, mn, mx, mean = (
        m.value for m in metrics_of(df, Sum("att2"), Minimum("att2"), Maximum("att2"), Mean("att2"))
    )
    assert (s, mn, mx, mean) == (18.0, 1.0, 6.0, 3.6)


def test_population_skewness_of_skewed_data(spark):
    df = spark.createDataFrame([(v,) for v in (1.0, 1.0, 1.0, 10.0)], "x double")
    skew, kurt = (m.value for m in metrics_of(df, Skewness("x"), Kurtosis("x")))
    # population formulas: sqrt(n)*m3/m2^1.5 and n*m4/m2^2 - 3
    xs = [1.0, 1.0, 1.0, 10.0]
    mu = sum(xs) / 4
    m2, m3, m4 = (sum((x - mu) ** p for x in xs) for p in (2, 3, 4))
    assert skew == pytest.approx(2 * m3 / m2**1.5)
    assert kurt == pytest.approx(4 * m4 / m2**2 - 3)


def test_constant_column_gives_zero_skewness_and_kurtosis(df):
    # Spark's F.skewness / F.kurtosis are NULL here; the reference gives 0.0
    sd, skew, kurt = metrics_of(df, StandardDeviation("c"), Skewness("c"), Kurtosis("c"))
    assert (sd.value, skew.value, kurt.value) == (0.0, 0.0, 0.0)


def test_string_column_fails(df):
    for m in metrics_of(df, *(cls("s") for cls in ALL), ZerosCount("s")):
        assert_failed(m, contains="needs a numeric type", empty=False)


def test_all_null_is_empty_failure_except_zeros_count(df):
    for m in metrics_of(df, *(cls("n") for cls in ALL)):
        assert_failed(m, empty=True)
    (zeros,) = metrics_of(df, ZerosCount("n"))
    assert zeros.value == 0.0


def test_where_filter_skips_rows(df):
    metrics = metrics_of(df, *(cls("att1", where="att1 > 3") for cls in ALL))
    s, mn, mx, mean, sd, var = (m.value for m in metrics[:6])
    assert (s, mn, mx, mean) == (15.0, 4.0, 6.0, 5.0)
    assert var == pytest.approx(2 / 3) and sd == pytest.approx((2 / 3) ** 0.5)
    for m in metrics_of(df, *(cls("att1", where="att1 > 100") for cls in ALL)):
        assert_failed(m, empty=True)


def test_zeros_count(df, spark):
    (zeros,) = metrics_of(df, ZerosCount("z"))
    assert zeros.value == 2.0  # z = 1,2,0,1,2,0
    (filtered,) = metrics_of(df, ZerosCount("z", where="att1 < 4"))
    assert filtered.value == 1.0
    (empty,) = metrics_of(df.limit(0), ZerosCount("z"))
    assert empty.value == 0.0


def test_decimal_and_long_columns(spark):
    df = spark.createDataFrame([(Decimal("1.00"), 2), (Decimal("3.00"), 4)], "d decimal(10,2), l long")
    assert [m.value for m in metrics_of(df, Sum("d"), Mean("l"), Variance("d"))] == [4.0, 3.0, 1.0]


def test_moments_state_from_spark_handles_null_higher_moments():
    s = MomentsState.from_spark(3, 2.0, 0.0, None, None)
    assert (s.n, s.mean, s.m2, s.m3, s.m4) == (3, 2.0, 0.0, 0.0, 0.0)
    assert MomentsState.from_spark(0, None, None, None, None) == MomentsState.empty()
