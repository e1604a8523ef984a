"""DataType: regex classification of values cast to string; filtered rows become Unknown."""

from __future__ import annotations

import pytest

from streamdq.analyzers import DataType
from streamdq.analyzers.data_type import TYPE_KEYS
from tests.unit.analyzers.analyzer_testkit import assert_failed, metrics_of


def _absolute(m):
    assert m.ok, m.failure
    return {k: v["absolute"] for k, v in m.value["values"].items()}


def test_classification(spark):
    values = ["1.0", "-1.5e3", "+ 2", "42", "-7", "true", "false", "True", "abc", "1.", "1e5", None, ".5"]
    df = spark.createDataFrame([(v,) for v in values], "v string")
    (m,) = metrics_of(df, DataType("v"))
    assert m.value["number_of_bins"] == 5
    assert set(m.value["values"]) == set(TYPE_KEYS)
    # Fractional: 1.0, -1.5e3, 1e5; Integral: +  2, 42, -7; Boolean: true, false;
    # String: True, abc, "1.", ".5"; Unknown: NULL
    assert _absolute(m) == {"Fractional": 3, "Integral": 3, "Boolean": 2, "String": 4, "Unknown": 1}
    assert m.value["values"]["Integral"]["ratio"] == pytest.approx(3 / 13)


def test_typed_columns_render_as_strings(spark):
    df = spark.createDataFrame([(1.0, 1, True), (2.5, None, False)], "f double, i int, b boolean")
    f, i, b = metrics_of(df, DataType("f"), DataType("i"), DataType("b"))
    assert _absolute(f)["Fractional"] == 2
    assert _absolute(i) == {"Unknown": 1, "Fractional": 0, "Integral": 1, "Boolean": 0, "String": 0}
    assert _absolute(b)["Boolean"] == 2


def test_filtered_rows_are_unknown_and_empty_input_fails(spark):
    df = spark.createDataFrame([(1, "1"), (2, "x"), (3, "2")], "id int, v string")
    filtered, empty = metrics_of(df, DataType("v", where="id >= 2"), DataType("v", where="id > 9"))
    assert _absolute(filtered) == {"Unknown": 1, "Fractional": 0, "Integral": 1, "Boolean": 0, "String": 1}
    assert filtered.value["values"]["Unknown"]["ratio"] == pytest.approx(1 / 3)
    # every row filtered: all Unknown, still a success over 3 rows
    assert empty.value["values"]["Unknown"]["ratio"] == 1.0
    (none,) = metrics_of(df.limit(0), DataType("v"))
    assert_failed(none, empty=True)
