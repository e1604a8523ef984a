"""Grouping analyzers against the SEMANTICS.md rules (exact mode, real Spark)."""

from __future__ import annotations

import math

import pytest

from streamdq import analyze
from streamdq.analyzers import (
    CountDistinct,
    Distinctness,
    DuplicateRowCount,
    Entropy,
    Histogram,
    MutualInformation,
    Uniqueness,
    UniqueValueRatio,
)


@pytest.fixture(scope="module")
def aaab(spark):
    return spark.createDataFrame([("a",), ("a",), ("a",), ("b",)], "v string")


def test_aaab_example(aaab):
    ctx = analyze(
        aaab, [Uniqueness(("v",)), Distinctness(("v",)), UniqueValueRatio(("v",)), CountDistinct(("v",))]
    )
    assert ctx.metric(Uniqueness(("v",))).value == 0.25
    assert ctx.metric(Distinctness(("v",))).value == 0.5
    assert ctx.metric(UniqueValueRatio(("v",))).value == 0.5
    assert ctx.metric(CountDistinct(("v",))).value == 2.0
    assert not any(m.approximate for m in ctx.all_metrics())


def test_analyzers_on_one_spec_share_one_grouped_pass(aaab):
    one = analyze(aaab, [Uniqueness(("v",))])
    many = analyze(
        aaab,
        [
            Uniqueness(("v",)),
            Distinctness(("v",)),
            UniqueValueRatio(("v",)),
            CountDistinct(("v",)),
            Entropy("v"),
        ],
    )
    assert many.jobs == one.jobs
    states = {id(s) for s in many.states.values()}
    assert len(states) == 1
    assert Uniqueness(("v",)).state_key() == Entropy("v").state_key()


def test_null_row_dropped_column_is_fully_unique(spark):
    df = spark.createDataFrame([("1",), ("2",), (None,), ("3",), ("4",), ("5",)], "v string")
    ctx = analyze(df, [Uniqueness(("v",)), Distinctness(("v",)), CountDistinct(("v",))])
    assert ctx.metric(Uniqueness(("v",))).value == 1.0
    assert ctx.metric(Distinctness(("v",))).value == 1.0
    assert ctx.metric(CountDistinct(("v",))).value == 5.0


def test_multi_column_rows_with_some_nulls_stay_and_nulls_group_equal(spark):
    df = spark.createDataFrame([(1, None), (1, None), (None, None), (2, "x"), (None, "y")], "a int, b string")
    ctx = analyze(df, [Uniqueness(("a", "b")), CountDistinct(("a", "b")), DuplicateRowCount(("a", "b"))])
    # (None, None) dropped: n = 4; groups (1,NULL)x2, (2,x), (NULL,y)
    assert ctx.metric(Uniqueness(("a", "b"))).value == 2 / 4
    assert ctx.metric(CountDistinct(("a", "b"))).value == 3.0
    assert ctx.metric(DuplicateRowCount(("a", "b"))).value == 2.0


def test_where_filter_applies_before_grouping(spark):
    df = spark.createDataFrame([("a", 1), ("a", 2), ("b", 3), ("c", None)], "v string, x int")
    u = Uniqueness(("v",), where="x > 1")  # NULL predicate is out of scope: rows a(2), b(3)
    assert analyze(df, [u]).metric(u).value == 1.0
    u_all = Uniqueness(("v",))
    assert analyze(df, [u_all]).metric(u_all).value == 0.5


def test_empty_input_semantics(spark):
    df = spark.createDataFrame([], "v string")
    analyzers = [
        Uniqueness(("v",)),
        Distinctness(("v",)),
        UniqueValueRatio(("v",)),
        CountDistinct(("v",)),
        Entropy("v"),
        MutualInformation(("v", "v")),
        DuplicateRowCount(("v",)),
        Histogram("v"),
    ]
    ctx = analyze(df, analyzers)
    for a in (Uniqueness(("v",)), Distinctness(("v",)), UniqueValueRatio(("v",)), Entropy("v")):
        m = ctx.metric(a)
        assert m.failure is not None and m.empty, a
    assert ctx.metric(MutualInformation(("v", "v"))).empty
    assert ctx.metric(CountDistinct(("v",))).value == 0.0
    assert ctx.metric(DuplicateRowCount(("v",))).value == 0.0
    assert ctx.metric(Histogram("v")).value == {"number_of_bins": 0, "values": {}, "tail_count": 0}


def test_all_null_column_is_empty(spark):
    df = spark.createDataFrame([(None,), (None,)], "v string")
    ctx = analyze(df, [Uniqueness(("v",)), CountDistinct(("v",))])
    assert ctx.metric(Uniqueness(("v",))).empty
    assert ctx.metric(CountDistinct(("v",))).value == 0.0


def test_entropy_is_natural_log(spark):
    df = spark.createDataFrame([("a",), ("b",), ("c",), ("c",), (None,)], "v string")
    e = Entropy("v")
    expected = -(2 * (0.25 * math.log(0.25)) + 0.5 * math.log(0.5))
    assert analyze(df, [e]).metric(e).value == pytest.approx(expected, rel=1e-12)


def test_duplicate_row_count_counts_every_row_involved(spark):
    df = spark.createDataFrame([(1, "a"), (1, "a"), (1, "a"), (2, "b"), (2, "c")], "x int, y string")
    all_cols = DuplicateRowCount()
    by_x = DuplicateRowCount(("x",))
    ctx = analyze(df, [all_cols, by_x])
    assert ctx.metric(all_cols).value == 3.0
    assert ctx.metric(by_x).value == 5.0
    assert ctx.metric(all_cols).instance == "*"


def test_mutual_information_pairs_with_null_side_count_in_n_and_marginals(spark):
    rows = [("a", "x"), ("a", "x"), ("b", "y"), ("a", None), (None, "y"), (None, None)]
    df = spark.createDataFrame(rows, "p string, q string")
    mi = MutualInformation(("p", "q"))
    n = 5  # (None, None) dropped
    cx = {"a": 3, "b": 1}
    cy = {"x": 2, "y": 2}
    pairs = {("a", "x"): 2, ("b", "y"): 1}
    expected = sum(c / n * math.log(c * n / (cx[x] * cy[y])) for (x, y), c in pairs.items())
    assert analyze(df, [mi]).metric(mi).value == pytest.approx(expected, rel=1e-12)


def test_mutual_information_of_identical_columns_is_entropy(spark):
    df = spark.createDataFrame([(i % 3, i % 3) for i in range(10)], "p int, q int")
    mi, e = MutualInformation(("p", "q")), Entropy("p")
    ctx = analyze(df, [mi, e])
    assert ctx.metric(mi).value == pytest.approx(ctx.metric(e).value, rel=1e-12)


def test_mutual_information_fails_when_no_pair_survives(spark):
    df = spark.createDataFrame([("a", None), (None, "x")], "p string, q string")
    mi = MutualInformation(("p", "q"))
    m = analyze(df, [mi]).metric(mi)
    assert m.failure is not None and "non-NULL" in m.failure


def test_missing_column_is_a_failure_for_that_analyzer_only(aaab):
    bad, good = Uniqueness(("nope",)), Uniqueness(("v",))
    ctx = analyze(aaab, [bad, good])
    failure = ctx.metric(bad).failure
    assert failure is not None and "nope" in failure
    assert ctx.metric(good).value == 0.25


def test_typed_keys_group_as_in_spark(spark):
    df = spark.createDataFrame([(1.0,), (1.0,), (2.5,), (None,)], "x double")
    ctx = analyze(df, [CountDistinct(("x",)), Uniqueness(("x",))])
    assert ctx.metric(CountDistinct(("x",))).value == 2.0
    assert ctx.metric(Uniqueness(("x",))).value == pytest.approx(1 / 3)


def test_key_types_survive_merge_and_sketch_conversion(spark):
    import datetime as dt
    from decimal import Decimal

    from streamdq.analyzers.frequency import FrequencySpec
    from streamdq.analyzers.frequency.query import compute_frequency_state

    rows = [
        (i, i % 4, float(i % 4), i % 2 == 0, dt.date(2024, 1, 1 + i % 4), dt.datetime(2024, 1, 1, i % 4),
         Decimal(i % 4), bytes([i % 4, 255]))
        for i in range(12)
    ]  # fmt: skip
    schema = "idx int, i long, d double, b boolean, dt date, ts timestamp, dec decimal(10,2), bin binary"
    df = spark.createDataFrame(rows, schema)
    first, second = df.where("idx < 5"), df.where("idx >= 5")
    for column in ("i", "d", "b", "dt", "ts", "dec", "bin"):
        spec = FrequencySpec((column,))
        whole = compute_frequency_state(df, spec, max_groups=100)
        merged = compute_frequency_state(first, spec, max_groups=100).merge(
            compute_frequency_state(second, spec, max_groups=100)
        )
        expected = 2.0 if column == "b" else 4.0
        assert CountDistinct((column,)).metric(whole).value == expected, column
        assert CountDistinct((column,)).metric(merged).value == expected, column
        assert Uniqueness((column,)).metric(merged) == Uniqueness((column,)).metric(whole)
        sketched = whole.to_sketch(32)
        assert sketched.is_sketch and CountDistinct((column,)).metric(sketched).value == expected, column


def test_one_grouped_pass_per_distinct_spec(aaab):
    plain = analyze(aaab, [Uniqueness(("v",))]).jobs
    hist = analyze(aaab, [Histogram("v")]).jobs
    both = analyze(
        aaab, [Uniqueness(("v",)), Entropy("v"), Histogram("v"), Histogram("v", max_detail_bins=1)]
    )
    assert plain >= 1 and hist >= 1
    assert both.jobs == plain + hist
