"""Compliance: predicate TRUE / rows in scope; NULL predicate counts as non-compliant."""

from __future__ import annotations

import pytest

from streamdq.analyzers import Compliance
from streamdq.analyzers.metric import COLUMN
from tests.unit.analyzers.analyzer_testkit import assert_failed, metric_of, metrics_of, value_of


@pytest.fixture(scope="module")
def df(spark):
    rows = [(1, "a", 1.0), (2, "b", None), (3, None, 3.0), (4, "d", 4.0), (5, "e", 5.0), (6, "f", 6.0)]
    return spark.createDataFrame(rows, "item int, att1 string, x double")


def test_fraction_of_rows_matching(df):
    assert value_of(df, Compliance("item > 3", "item > 3")) == pytest.approx(0.5)
    assert value_of(df, Compliance("all", "item > 0")) == 1.0


def test_null_predicate_is_non_compliant_but_in_denominator(df):
    # x > 2 is NULL on the row with x NULL: 4 TRUE out of 6 rows.
    assert value_of(df, Compliance("x big", "x > 2", ("x",))) == pytest.approx(4 / 6)


def test_every_predicate_null_is_failure(df):
    # numeric bounds on a string column: 'a' > 3 is NULL on every row
    m = metric_of(df, Compliance("bounds", "att1 > 3", ("att1",)))
    assert_failed(m, contains="NULL on every row", empty=False)


def test_where_filter_sets_denominator(df):
    # in scope: item >= 3 -> items 3..6; of those x > 3.5 -> 4, 5, 6 (3 rows)
    assert value_of(df, Compliance("c", "x > 3.5", where="item >= 3")) == pytest.approx(3 / 4)
    # filter NULL counts as out of scope: x IS NULL row is excluded by `x > 0`
    assert value_of(df, Compliance("c", "item > 0", where="x > 0")) == 1.0


def test_empty_scope_is_empty_failure(df):
    assert_failed(metric_of(df, Compliance("c", "item > 0", where="item > 100")), empty=True)
    assert_failed(metric_of(df.limit(0), Compliance("c", "item > 0")), empty=True)


def test_string_coercion_follows_spark(df):
    assert value_of(df, Compliance("ne", "att1 != 'a'")) == pytest.approx(4 / 6)
    assert value_of(df, Compliance("dq", 'att1 = "b"')) == pytest.approx(1 / 6)


def test_bad_inputs_fail_alone(df):
    missing, unparsable, good = (
        Compliance("m", "nope > 1", ("nope",)),
        Compliance("u", "item > ("),
        Compliance("g", "item > 3"),
    )
    m_missing, m_unparsable, m_good = metrics_of(df, missing, unparsable, good)
    assert_failed(m_missing, contains="'nope' does not exist")
    assert_failed(m_unparsable, contains="PARSE_SYNTAX_ERROR")
    assert m_good.value == pytest.approx(0.5)


def test_metric_identity(df):
    m = metric_of(df, Compliance("my rule", "item > 3", ("item",)))
    assert (m.entity, m.name, m.instance) == (COLUMN, "Compliance", "my rule")
    assert Compliance("r", "item > 3", ("item",)).input_columns() == ("item",)
