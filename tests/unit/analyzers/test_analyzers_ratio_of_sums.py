"""RatioOfSums: Σa / Σb; Σb = 0 gives ±Infinity as a success."""

from __future__ import annotations

import math

import pytest

from streamdq.analyzers import RatioOfSums
from tests.unit.analyzers.analyzer_testkit import assert_failed, metrics_of


@pytest.fixture(scope="module")
def df(spark):
    rows = [(1, 2.0, 0, "x", 5), (2, None, 0, "y", -1), (3, 4.0, 0, "z", 2)]
    return spark.createDataFrame(rows, "a int, b double, zero int, s string, c int")


def test_ratio_and_infinities(df):
    ratio, pos_inf, neg_inf, filtered = metrics_of(
        df,
        RatioOfSums("a", "b"),
        RatioOfSums("a", "zero"),
        RatioOfSums("c", "zero", where="c < 0"),
        RatioOfSums("a", "b", where="a >= 2"),
    )
    assert ratio.value == pytest.approx(6 / 6)
    assert pos_inf.ok and pos_inf.value == math.inf
    assert neg_inf.ok and neg_inf.value == -math.inf
    assert filtered.value == pytest.approx(5 / 4)


def test_failures(df):
    empty, string_col = metrics_of(df, RatioOfSums("a", "b", where="a > 5"), RatioOfSums("s", "a"))
    assert_failed(empty, empty=True)
    assert_failed(string_col, contains="needs a numeric type")
