"""Bounded mode: beyond max_groups the frequency state becomes a tuple sketch of counts."""

from __future__ import annotations

import math

import numpy as np
import pytest
from pyspark.sql import functions as F

from streamdq import analyze
from streamdq.analyzers import (
    CountDistinct,
    Distinctness,
    DuplicateRowCount,
    Entropy,
    FrequencySpec,
    FrequencyState,
    Histogram,
    MutualInformation,
    Uniqueness,
    UniqueValueRatio,
)
from streamdq.analyzers.frequency.query import compute_frequency_state
from streamdq.analyzers.register import state_from_bytes
from streamdq.engine.plan import count_jobs

ROWS = 6000
KEYS = 4000  # keys 0..1999 twice, 2000..3999 once
MAX_GROUPS = 512


def truth() -> dict[str, float]:
    counts = np.bincount(np.arange(ROWS) % KEYS).astype(float)
    p = counts / ROWS
    return {
        "CountDistinct": float(KEYS),
        "Uniqueness": float((counts == 1).sum()) / ROWS,
        "Distinctness": KEYS / ROWS,
        "UniqueValueRatio": float((counts == 1).sum()) / KEYS,
        "Entropy": float(-(p * np.log(p)).sum()),
        "DuplicateRowCount": float(counts[counts > 1].sum()),
    }


@pytest.fixture(scope="module")
def df(spark):
    return spark.range(ROWS).select(
        (F.col("id") % KEYS).alias("k"), (F.col("id") % 7).alias("m"), (F.col("id") % 5).alias("h")
    )


ANALYZERS = [
    CountDistinct(("k",)),
    Uniqueness(("k",)),
    Distinctness(("k",)),
    UniqueValueRatio(("k",)),
    Entropy("k"),
    DuplicateRowCount(("k",)),
]


def test_metrics_from_sketch_are_approximate_and_within_their_bounds(df):
    ctx = analyze(df, ANALYZERS, max_groups=MAX_GROUPS)
    expected = truth()
    for a in ANALYZERS:
        m = ctx.metric(a)
        assert m.ok, m
        assert m.approximate and m.error_bound is not None and m.error_bound > 0, m
        assert abs(m.value - expected[a.NAME]) <= m.error_bound, (
            a.NAME,
            m.value,
            expected[a.NAME],
            m.error_bound,
        )


def test_exact_when_under_the_bound(df):
    ctx = analyze(df, ANALYZERS, max_groups=KEYS)
    expected = truth()
    for a in ANALYZERS:
        m = ctx.metric(a)
        assert not m.approximate
        assert m.value == pytest.approx(expected[a.NAME], rel=1e-12)


def test_unbounded_only_when_asked(df):
    state = compute_frequency_state(df, FrequencySpec(("k",)), max_groups=None)
    assert not state.is_sketch and state.table is not None and state.table.num_rows == KEYS


def test_state_size_is_bounded(df):
    state = compute_frequency_state(df, FrequencySpec(("k",)), max_groups=MAX_GROUPS)
    assert state.is_sketch
    assert len(state.counts()) <= MAX_GROUPS
    assert len(state.to_bytes()) < 40 * MAX_GROUPS
    assert state.n == ROWS and state.total == ROWS


def test_no_extra_job_beyond_the_bound(spark, df):
    # the sample comes out of the same query as the exact table: crossing the bound
    # costs no further Spark job
    spec = FrequencySpec(("k",))
    with count_jobs(spark) as small:
        exact = compute_frequency_state(df, spec, max_groups=KEYS)
    with count_jobs(spark) as big:
        bounded = compute_frequency_state(df, spec, max_groups=MAX_GROUPS)
    assert not exact.is_sketch and bounded.is_sketch
    assert big[0] == small[0] == 1  # one Spark job per grouping set (DESIGN.md section 6)


def _grouped_aggregations(plan_text: str) -> int:
    """HashAggregate nodes with grouping keys (partial and final) in an executed plan."""
    return sum(
        1 for line in plan_text.splitlines() if "HashAggregate(keys=[" in line and "keys=[]" not in line
    )


@pytest.mark.parametrize("with_totals", [True, False])
def test_grouping_runs_its_final_aggregation_once(df, with_totals):
    # a plain grouping: ONE partial and ONE final aggregation of the groups, whose single
    # TakeOrderedAndProject serves both the exact table and the sample; a histogram's top
    # branch re-reads the same shuffle (reused exchange)
    from streamdq.analyzers.frequency.query import bounded_query

    plan = bounded_query(
        df, FrequencySpec(("k",), histogram=False), max_groups=MAX_GROUPS, with_totals=with_totals
    )
    plan.toArrow()  # adaptive execution shows the final plan (before the initial one)
    text = plan._jdf.queryExecution().executedPlan().toString().split("== Initial Plan ==")[0]
    hist = bounded_query(df, FrequencySpec(("k",), histogram=True), max_groups=MAX_GROUPS)
    hist.toArrow()
    hist_text = hist._jdf.queryExecution().executedPlan().toString()
    for t in (text, hist_text):
        assert "TakeOrderedAndProject" in t
    assert text.count("TakeOrderedAndProject") == 1, text
    assert _grouped_aggregations(text) == 2, text
    assert "ReusedExchange" not in text, text
    assert ("keys=[]" in text) == with_totals, text  # the totals: a global aggregation of the input
    assert hist_text.count("ReusedExchange") >= 1, hist_text


@pytest.mark.parametrize("max_groups", [MAX_GROUPS, KEYS, 8])
def test_given_totals_give_the_same_state_as_computed_ones(df, max_groups):
    spec = FrequencySpec(("k",), where="m > 0")
    own = compute_frequency_state(df, spec, max_groups=max_groups)
    given = compute_frequency_state(df, spec, max_groups=max_groups, totals=(own.total, own.n))
    assert given == own
    assert own.is_sketch == (max_groups in (MAX_GROUPS, 8))


def test_merge_exact_and_sketch_parts(df):
    spec = FrequencySpec(("k",))
    a = compute_frequency_state(df.where("id < 300"), spec, max_groups=MAX_GROUPS)
    b = compute_frequency_state(df.where("id >= 300"), spec, max_groups=MAX_GROUPS)
    assert not a.is_sketch and b.is_sketch
    expected = truth()
    for merged in (a.merge(b), b.merge(a)):
        assert merged.is_sketch and merged.n == ROWS
        for an in ANALYZERS:
            m = an.metric(merged)
            assert m.approximate and abs(m.value - expected[an.NAME]) <= m.error_bound, (an.NAME, m)


def test_exact_parts_switch_to_sketch_when_merged_beyond_bound(df):
    spec = FrequencySpec(("k",))
    a = compute_frequency_state(df.where("id < 1500"), spec, max_groups=1600)
    b = compute_frequency_state(df.where("id >= 1500 AND id < 3000"), spec, max_groups=1600)
    assert not a.is_sketch and not b.is_sketch
    merged = a.merge(b)
    assert merged.is_sketch and merged.n == 3000
    m = CountDistinct(("k",)).metric(merged)
    assert m.approximate and abs(m.value - 3000) <= m.error_bound


def test_sketch_state_round_trips_through_bytes(df):
    state = compute_frequency_state(df, FrequencySpec(("k",)), max_groups=MAX_GROUPS)
    back = state_from_bytes(state.to_bytes())
    assert isinstance(back, FrequencyState) and back == state
    assert CountDistinct(("k",)).metric(back) == CountDistinct(("k",)).metric(state)


def test_histogram_top_bins_from_frequent_items(spark):
    # one heavy key (1000 rows) among 3000 singletons
    heavy = spark.range(1000).select(F.lit("heavy").alias("v"))
    light = spark.range(3000).select(F.col("id").cast("string").alias("v"))
    df = heavy.unionByName(light)
    h = Histogram("v", max_detail_bins=3)
    m = analyze(df, [h], max_groups=256).metric(h)
    assert m.approximate and m.error_bound is not None
    top = m.value["values"]
    assert next(iter(top)) == "heavy"
    assert abs(top["heavy"]["absolute"] - 1000) <= m.error_bound * 4000
    assert abs(m.value["number_of_bins"] - 3001) <= m.extra["number_of_bins_bound"]


def test_mutual_information_on_sketch_is_a_clear_failure(df):
    mi = MutualInformation(("k", "m"))
    m = analyze(df, [mi], max_groups=MAX_GROUPS).metric(mi)
    assert m.failure is not None and "max_groups" in m.failure


def test_small_bound_still_gives_metrics(df):
    m = analyze(df, [CountDistinct(("k",))], max_groups=16).metric(CountDistinct(("k",)))
    assert m.approximate and math.isfinite(m.value) and abs(m.value - KEYS) <= m.error_bound


def test_all_unique_column_stays_exactly_unique_in_sketch_mode(spark):
    df = spark.range(3000).select(F.col("id").cast("string").alias("id"))
    u, d, dup = Uniqueness(("id",)), Distinctness(("id",)), DuplicateRowCount(("id",))
    ctx = analyze(df, [u, d, dup], max_groups=64)
    for a in (u, d):
        m = ctx.metric(a)
        assert m.approximate and m.value == 1.0 and m.error_bound is not None and m.error_bound > 0
    assert ctx.metric(dup).value == 0.0 and ctx.metric(dup).approximate


@pytest.mark.parametrize(
    "spec",
    [
        FrequencySpec(("k",)),
        FrequencySpec(("k", "s"), where="m != 3"),
        FrequencySpec(("s",), where="m != 3", histogram=True),
    ],
    ids=["plain", "pair-where", "histogram-where"],
)
def test_spark_sample_equals_the_driver_sample_of_the_exact_table(spark, spec):
    # the sample built in Spark (xxhash64, TakeOrderedAndProject) is exactly the bottom-k
    # sample the driver builds from the full exact table (its own hashes): same keys,
    # counts, theta, totals, and the same top keys
    base = spark.range(ROWS).select(
        F.when(F.col("id") % 11 == 0, None).otherwise(F.col("id") % KEYS).alias("k"),
        F.when(F.col("id") % 13 == 0, None).otherwise((F.col("id") % 2500).cast("string")).alias("s"),
        (F.col("id") % 7).alias("m"),
    )
    bounded = compute_frequency_state(base, spec, max_groups=MAX_GROUPS)
    exact = compute_frequency_state(base, spec, max_groups=None)
    assert bounded.is_sketch and not exact.is_sketch
    assert (bounded.n, bounded.total) == (exact.n, exact.total)
    assert bounded == exact.to_sketch(MAX_GROUPS)
    assert (bounded.top is not None) == spec.histogram


def test_spark_sample_merges_exactly_with_a_driver_converted_part(df):
    # same key -> same hash on both sides: the merge is the sample of the whole
    spec = FrequencySpec(("k",))
    big = compute_frequency_state(df.where("id >= 300"), spec, max_groups=MAX_GROUPS)
    small = compute_frequency_state(df.where("id < 300"), spec, max_groups=MAX_GROUPS)
    whole = compute_frequency_state(df, spec, max_groups=MAX_GROUPS)
    assert big.is_sketch and not small.is_sketch
    assert small.merge(big) == whole and big.merge(small) == whole
