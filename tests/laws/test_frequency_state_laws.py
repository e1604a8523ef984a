"""Merge laws of FrequencyState: identity, associativity, commutativity, homomorphism.

Exact mode: states are built from rows with the same post-processing as the Spark path
(``state_from_grouped`` over grouped counts, grouped here by pyarrow), so the laws hold
byte for byte: merge(s(A), s(B)) == s(A ++ B), hence every grouping metric is equal.
A few examples also go through Spark. Sketch mode: structural laws with hypothesis,
and accuracy (inside each metric's own error bound) on fixed seeded data sets.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamdq.analyzers import (
    CountDistinct,
    Distinctness,
    DuplicateRowCount,
    Entropy,
    FrequencyState,
    Histogram,
    MutualInformation,
    Uniqueness,
    UniqueValueRatio,
)
from streamdq.analyzers.frequency import NULL_VALUE, FrequencySpec
from streamdq.analyzers.frequency.grouped import state_from_grouped
from streamdq.analyzers.frequency.query import compute_frequency_state
from streamdq.analyzers.register import state_from_bytes

Row = tuple[int | None, str | None]
rows_st = st.lists(
    st.tuples(st.one_of(st.none(), st.integers(0, 6)), st.one_of(st.none(), st.sampled_from("abcd"))),
    max_size=40,
)

PAIR = [
    Uniqueness(("a", "b")),
    Distinctness(("a", "b")),
    UniqueValueRatio(("a", "b")),
    CountDistinct(("a", "b")),
]
PAIR += [MutualInformation(("a", "b")), DuplicateRowCount(("a", "b"))]
SINGLE = [
    Uniqueness(("a",)),
    Distinctness(("a",)),
    UniqueValueRatio(("a",)),
    CountDistinct(("a",)),
    Entropy("a"),
]
SINGLE += [DuplicateRowCount(("a",))]
HIST = [Histogram("a"), Histogram("a", max_detail_bins=2), Histogram("a", compute_frequencies_as_ratio=False)]


def grouped(rows: list[Row], columns: tuple[str, ...], histogram: bool) -> pa.Table:
    a = pa.array([r[0] for r in rows], pa.int32())
    b = pa.array([r[1] for r in rows], pa.string())
    data = {"a": a, "b": b}
    keys = [data[c] for c in columns]
    if histogram:
        keys = [pc.fill_null(pc.cast(keys[0], pa.string()), NULL_VALUE)]
    table = pa.table(
        {
            "in_scope": pa.array([True] * len(rows), pa.bool_()),
            **{f"k{i}": k for i, k in enumerate(keys)},
            "c": [1] * len(rows),
        }
    )
    names = ["in_scope", *(f"k{i}" for i in range(len(keys)))]
    out = table.group_by(names).aggregate([("c", "sum")])
    return pa.table({**{n: out[n] for n in names}, "count": pc.cast(out["c_sum"], pa.int64())})


def state(rows: list[Row], columns: tuple[str, ...], histogram: bool = False, max_groups: int | None = None):
    spec_arity = len(columns)
    return state_from_grouped(
        grouped(rows, columns, histogram), n_keys=spec_arity, histogram=histogram, max_groups=max_groups
    )


CASES = [(("a", "b"), False, PAIR), (("a",), False, SINGLE), (("a",), True, HIST)]


@pytest.mark.parametrize("columns,histogram,analyzers", CASES)
@given(rows=rows_st)
@settings(max_examples=60, deadline=None)
def test_identity(columns, histogram, analyzers, rows):
    s = state(rows, columns, histogram)
    empty = FrequencyState.empty()
    assert s.merge(empty) == s
    assert empty.merge(s) == s
    assert state([], columns, histogram).merge(s) == s


@pytest.mark.parametrize("columns,histogram,analyzers", CASES)
@given(a=rows_st, b=rows_st, c=rows_st)
@settings(max_examples=60, deadline=None)
def test_associative_and_commutative(columns, histogram, analyzers, a, b, c):
    sa, sb, sc = (state(x, columns, histogram) for x in (a, b, c))
    assert sa.merge(sb) == sb.merge(sa)
    assert sa.merge(sb).merge(sc) == sa.merge(sb.merge(sc))


@pytest.mark.parametrize("columns,histogram,analyzers", CASES)
@given(a=rows_st, b=rows_st)
@settings(max_examples=80, deadline=None)
def test_metric_of_merge_equals_metric_of_concatenation(columns, histogram, analyzers, a, b):
    merged = state(a, columns, histogram).merge(state(b, columns, histogram))
    whole = state(a + b, columns, histogram)
    assert merged == whole
    assert state_from_bytes(merged.to_bytes()) == merged
    for an in analyzers:
        assert an.metric(merged) == an.metric(whole), an


WEIGHTED = [
    Histogram("b", sum_column="a"),
    Histogram("b", sum_column="a", max_detail_bins=2),
    Histogram("b", sum_column="a", compute_frequencies_as_ratio=False),
]


def weighted_state(rows: list[Row]) -> FrequencyState:
    """A Histogram of b summing a (Deequ's Sum aggregate), grouped as the Spark path does."""
    keys = pc.fill_null(pa.array([r[1] for r in rows], pa.string()), NULL_VALUE)
    table = pa.table(
        {
            "in_scope": pa.array([True] * len(rows), pa.bool_()),
            "k0": keys,
            "c": pa.array([1] * len(rows), pa.int64()),
            "w": pa.array([r[0] for r in rows], pa.int64()),
        }
    )
    out = table.group_by(["in_scope", "k0"]).aggregate([("c", "sum"), ("w", "sum")])
    grouped_sums = pa.table(
        {"in_scope": out["in_scope"], "k0": out["k0"], "count": out["c_sum"], "sum": out["w_sum"]}
    )
    return state_from_grouped(grouped_sums, n_keys=1, histogram=True, max_groups=None)


@given(a=rows_st, b=rows_st, c=rows_st)
@settings(max_examples=80, deadline=None)
def test_weighted_histogram_merges_like_concatenation(a, b, c):
    merged = weighted_state(a).merge(weighted_state(b))
    whole = weighted_state(a + b)
    assert merged == whole and merged.sums == whole.sums
    assert merged.merge(weighted_state(c)) == weighted_state(b).merge(weighted_state(c)).merge(
        weighted_state(a)
    )
    assert state_from_bytes(merged.to_bytes()) == merged
    for an in WEIGHTED:
        assert an.metric(merged) == an.metric(whole), an


@given(a=rows_st, b=rows_st)
@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_spark_states_merge_like_concatenation(spark, a, b):
    def df(rows):
        return spark.createDataFrame(rows, "a int, b string")

    for spec, analyzers in ((FrequencySpec(("a", "b")), PAIR), (FrequencySpec(("a",), histogram=True), HIST)):
        merged = compute_frequency_state(df(a), spec, max_groups=1000).merge(
            compute_frequency_state(df(b), spec, max_groups=1000)
        )
        whole = compute_frequency_state(df(a + b), spec, max_groups=1000)
        assert merged.n == whole.n and merged.total == whole.total
        for an in analyzers:
            assert an.metric(merged) == an.metric(whole), an


# -- sketch mode -------------------------------------------------------------------------
big_rows_st = st.lists(st.tuples(st.integers(0, 400), st.just("x")), min_size=50, max_size=400)
SKETCHED = [
    Uniqueness(("a",)),
    Distinctness(("a",)),
    UniqueValueRatio(("a",)),
    CountDistinct(("a",)),
    Entropy("a"),
]
SKETCHED += [DuplicateRowCount(("a",))]


@given(a=big_rows_st, b=big_rows_st, c=big_rows_st)
@settings(max_examples=30, deadline=None)
def test_sketch_merge_is_commutative_associative_with_identity(a, b, c):
    sa, sb, sc = (state(x, ("a",), max_groups=32) for x in (a, b, c))
    empty = FrequencyState.empty()
    assert sa.merge(empty) == sa and empty.merge(sa) == sa
    ab, ba = sa.merge(sb), sb.merge(sa)
    left, right = ab.merge(sc), sa.merge(sb.merge(sc))
    for an in SKETCHED:
        assert an.metric(ab).value == pytest.approx(an.metric(ba).value, rel=1e-9)
        assert an.metric(left).value == pytest.approx(an.metric(right).value, rel=1e-9)
    assert left.n == len(a) + len(b) + len(c)
    assert len(left.counts()) <= 32


def truth(values: np.ndarray) -> dict[str, float]:
    _, counts = np.unique(values, return_counts=True)
    n = len(values)
    p = counts / n
    singles = float((counts == 1).sum())
    return {
        "Uniqueness": singles / n,
        "Distinctness": len(counts) / n,
        "UniqueValueRatio": singles / len(counts),
        "CountDistinct": float(len(counts)),
        "Entropy": float(-(p * np.log(p)).sum()),
        "DuplicateRowCount": float(counts[counts > 1].sum()),
    }


@pytest.mark.parametrize("seed", range(6))
def test_sketch_merge_stays_within_error_bounds(seed):
    rng = np.random.default_rng(seed)
    values = rng.zipf(1.3, size=20_000) % 50_000
    parts = np.array_split(values, 4)
    states = [state([(int(v), None) for v in part], ("a",), max_groups=1024) for part in parts]
    merged = states[0]
    for s in states[1:]:
        merged = merged.merge(s)
    assert merged.is_sketch and merged.n == len(values)
    expected = truth(values)
    for an in SKETCHED:
        m = an.metric(merged)
        assert m.approximate, an
        assert abs(m.value - expected[an.NAME]) <= m.error_bound, (
            an.NAME,
            m.value,
            expected[an.NAME],
            m.error_bound,
        )
