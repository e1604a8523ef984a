"""Correlation: Pearson over complete pairs; NaN for a constant column (Spark's corr gives NULL)."""

from __future__ import annotations

import pytest

from streamdq.analyzers import Correlation
from streamdq.analyzers.metric import MULTICOLUMN
from tests.unit.analyzers.analyzer_testkit import assert_failed, is_nan, metrics_of


@pytest.fixture(scope="module")
def df(spark):
    rows = [(1, 2.0, 7, "a", 10.0), (2, 4.0, 7, "b", None), (3, 6.0, 7, "c", 30.0), (4, 8.0, 7, "d", -5.0)]
    return spark.createDataFrame(rows, "a int, b double, k int, s string, y double")


def test_correlation_values(df):
    perfect, constant, swapped, pairwise = metrics_of(
        df, Correlation("a", "b"), Correlation("a", "k"), Correlation("b", "a"), Correlation("a", "y")
    )
    assert perfect.value == pytest.approx(1.0)
    assert (perfect.entity, perfect.instance) == (MULTICOLUMN, "a,b")
    assert is_nan(constant.value) and constant.ok
    assert swapped.value == pytest.approx(perfect.value)
    # pairs with a NULL side are skipped: (1,10), (3,30), (4,-5)
    xs, ys = [1.0, 3.0, 4.0], [10.0, 30.0, -5.0]
    mx, my = sum(xs) / 3, sum(ys) / 3
    cov = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
    r = cov / (sum((x - mx) ** 2 for x in xs) * sum((y - my) ** 2 for y in ys)) ** 0.5
    assert pairwise.value == pytest.approx(r)


def test_failures(df):
    string_col, empty, missing = metrics_of(
        df, Correlation("a", "s"), Correlation("a", "b", where="a > 10"), Correlation("a", "zz")
    )
    assert_failed(string_col, contains="needs a numeric type")
    assert_failed(empty, empty=True)
    assert_failed(missing, contains="does not exist")


def test_where_filter(df):
    (m,) = metrics_of(df, Correlation("a", "y", where="a >= 3"))
    assert m.value == pytest.approx(-1.0)  # two points: (3,30), (4,-5)
