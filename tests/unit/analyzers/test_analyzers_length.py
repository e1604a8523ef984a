"""MinLength / MaxLength: string columns only, with null_behavior ignore/empty_string/fail."""

from __future__ import annotations

import sys

import pytest

from streamdq.analyzers import MaxLength, MinLength
from tests.unit.analyzers.analyzer_testkit import assert_failed, metrics_of

DMAX = sys.float_info.max


@pytest.fixture(scope="module")
def df(spark):
    rows = [(1, "ab"), (2, "abcd"), (3, None), (4, "abc"), (5, "")]
    return spark.createDataFrame(rows, "id int, s string")


def test_null_behaviors(df):
    metrics = metrics_of(
        df,
        MinLength("s"),
        MaxLength("s"),
        MinLength("s", "empty_string"),
        MaxLength("s", "empty_string"),
        MinLength("s", "fail"),
        MaxLength("s", "fail"),
    )
    assert [m.value for m in metrics] == [0.0, 4.0, 0.0, 4.0, -DMAX, DMAX]


def test_null_behavior_on_non_empty_strings(df):
    ignore, empty_string = metrics_of(
        df, MinLength("s", where="id < 5"), MinLength("s", "empty_string", where="id < 5")
    )
    assert (ignore.value, empty_string.value) == (2.0, 0.0)


def test_all_null_and_empty_scope(df):
    ignore, empty_string, filtered = metrics_of(
        df,
        MinLength("s", where="id = 3"),
        MaxLength("s", "empty_string", where="id = 3"),
        MaxLength("s", where="id > 10"),
    )
    assert_failed(ignore, empty=True)
    assert empty_string.value == 0.0
    assert_failed(filtered, empty=True)


def test_failures(df):
    non_string, bad_behavior = metrics_of(df, MaxLength("id"), MinLength("s", "sometimes"))
    assert_failed(non_string, contains="needs a string type")
    assert_failed(bad_behavior, contains="null_behavior 'sometimes'")
