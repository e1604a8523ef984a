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


# -- each moment analyzer computes only the moments it needs ------------------------------


def _physical_plan(df, *analyzers):
    exprs = [e for a in analyzers for e in a.aggregations(df.schema)]
    return df.agg(*exprs)._jdf.queryExecution().executedPlan().toString()


def test_stddev_and_variance_compute_no_third_or_fourth_moment(df):
    plan = _physical_plan(df, StandardDeviation("att1"), Variance("att1"), Mean("att1"))
    assert "skewness" not in plan and "kurtosis" not in plan, plan
    # Mean's sum and count and the moments' count, sum and var_pop are ONE set of aggregates
    final = [line for line in plan.splitlines() if "HashAggregate" in line][0]
    functions = final.split("functions=[", 1)[1].split("], output=", 1)[0]
    assert functions.count("var_pop(") == 1, functions
    assert functions.count("sum(") == 1 and functions.count("count(") == 1, functions


def test_skewness_needs_no_fourth_moment_and_kurtosis_needs_all(df):
    skew = _physical_plan(df, Skewness("att1"))
    assert "skewness" in skew and "kurtosis" not in skew, skew
    kurt = _physical_plan(df, Kurtosis("att1"))
    assert "skewness" in kurt and "kurtosis" in kurt, kurt


def test_states_carry_the_order_their_analyzer_needs(df):
    from streamdq import analyze

    analyzers = [StandardDeviation("att1"), Variance("att1"), Skewness("att1"), Kurtosis("att1")]
    ctx = analyze(df, analyzers)
    assert [ctx.states[a].order for a in analyzers] == [2, 2, 3, 4]
    low = ctx.states[StandardDeviation("att1")]
    assert low.m3 == 0.0 and low.m4 == 0.0


def test_metric_of_a_state_of_too_low_order_is_a_failure():
    m = Kurtosis("x").metric(MomentsState(3, 1.0, 2.0, 0.5, order=3))
    assert not m.ok and "order 4" in m.failure
    assert Skewness("x").metric(MomentsState(3, 1.0, 2.0, 0.5, order=3)).ok


def test_stored_full_state_merges_with_new_order_2_state():
    # a StandardDeviation state stored before format v2 (all four moments) merged with a
    # batch state computed now (order 2) gives the stddev of all rows
    xs, ys = [1.0, 2.0, 4.0], [8.0, 16.0]

    def full(vs):
        n = len(vs)
        mean = sum(vs) / n
        return MomentsState(n, mean, *(sum((v - mean) ** p for v in vs) for p in (2, 3, 4)))

    low = MomentsState.from_spark(2, 12.0, 16.0, None, None, order=2)
    merged = full(xs).merge(low)
    swapped = low.merge(full(xs))
    assert merged.order == swapped.order == 2 and merged.n == swapped.n == 5
    assert merged.mean == pytest.approx(swapped.mean, rel=1e-12)
    assert merged.m2 == pytest.approx(swapped.m2, rel=1e-12)
    assert StandardDeviation("x").metric(merged).value == pytest.approx(
        StandardDeviation("x").metric(full(xs + ys)).value, rel=1e-12
    )
    with pytest.raises(ValueError, match="order"):
        MomentsState(1, 1.0, order=5)
    assert MomentsState(0, order=2) == MomentsState.empty()
