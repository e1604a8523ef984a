"""Histogram: string keys, the NullValue bin, ordering, detail bins, unfiltered ratio denominator."""

from __future__ import annotations

import pytest

from streamdq import analyze
from streamdq.analyzers import CountDistinct, Histogram, Uniqueness


@pytest.fixture(scope="module")
def df(spark):
    rows = [("a", 1), ("a", 2), (None, 3), ("b", 4), ("b", 5), ("c", 6)]
    return spark.createDataFrame(rows, "v string, x int")


def test_null_is_its_own_bin_and_counted_in_number_of_bins(df):
    h, cd = Histogram("v"), CountDistinct(("v",))
    ctx = analyze(df, [h, cd])
    value = ctx.metric(h).value
    assert value["number_of_bins"] == 4
    assert ctx.metric(cd).value == 3.0
    assert value["values"]["NullValue"] == {"absolute": 1, "ratio": 1 / 6}
    assert value["values"]["a"] == {"absolute": 2, "ratio": 2 / 6}


def test_bins_ordered_by_count_desc_then_key_asc(df):
    value = analyze(df, [Histogram("v")]).metric(Histogram("v")).value
    assert list(value["values"]) == ["a", "b", "NullValue", "c"]


def test_max_detail_bins_limits_details_not_number_of_bins(df):
    h = Histogram("v", max_detail_bins=2)
    value = analyze(df, [h]).metric(h).value
    assert value["number_of_bins"] == 4
    assert list(value["values"]) == ["a", "b"]


@pytest.mark.parametrize("bins", [0, 1001, -3])
def test_max_detail_bins_out_of_range_is_failure(df, bins):
    h = Histogram("v", max_detail_bins=bins)
    m = analyze(df, [h]).metric(h)
    assert m.failure is not None and "max_detail_bins" in m.failure


def test_where_filter_keeps_unfiltered_ratio_denominator(df):
    h = Histogram("v", where="x <= 4")
    value = analyze(df, [h]).metric(h).value
    assert value["number_of_bins"] == 3
    assert value["values"]["a"] == {"absolute": 2, "ratio": 2 / 6}
    assert value["values"]["b"] == {"absolute": 1, "ratio": 1 / 6}


def test_absolute_frequencies_when_not_as_ratio(df):
    h = Histogram("v", compute_frequencies_as_ratio=False)
    value = analyze(df, [h]).metric(h).value
    assert value["values"]["b"] == {"absolute": 2, "ratio": 2.0}


def test_values_cast_to_string(spark):
    df = spark.createDataFrame(
        [(True, 1.0, 7), (False, 1.0, 7), (None, None, None)], "b boolean, d double, i int"
    )
    ctx = analyze(df, [Histogram("b"), Histogram("d"), Histogram("i")])
    assert set(ctx.metric(Histogram("b")).value["values"]) == {"true", "false", "NullValue"}
    assert set(ctx.metric(Histogram("d")).value["values"]) == {"1.0", "NullValue"}
    assert ctx.metric(Histogram("i")).value["values"]["7"]["absolute"] == 2


def test_histogram_has_its_own_grouping_spec():
    assert Histogram("v").frequency_spec() != Uniqueness(("v",)).frequency_spec()
    assert Histogram("v").state_key() != Uniqueness(("v",)).state_key()
    assert Histogram("v", max_detail_bins=5).state_key() == Histogram("v").state_key()
