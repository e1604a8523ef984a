"""Merge algebra of every exact state: identity, associativity, commutativity, and
``metric(merge(s(A), s(B))) == metric(s(A ++ B))``.

The algebraic laws run on states built directly (cheap, many examples); the homomorphism
law runs every exact scan analyzer through Spark on small generated frames (few examples,
each one fused pass per frame). Integer-valued data keep float sums exact; moment-based
metrics are compared with a tight relative tolerance (Chan/Pébay merges round).
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamdq import analyze
from streamdq.analyzers import (
    Completeness,
    Compliance,
    Correlation,
    DataType,
    DataTypeState,
    Kurtosis,
    Maximum,
    MaxLength,
    Mean,
    Minimum,
    MinLength,
    PatternMatch,
    RatioOfSums,
    RatioOfSumsState,
    Size,
    Skewness,
    StandardDeviation,
    State,
    Sum,
    Variance,
    ZerosCount,
)
from streamdq.analyzers.basic_states import (
    CoMomentsState,
    MaxState,
    MinState,
    MomentsState,
    NumMatches,
    NumMatchesAndCount,
    SumState,
)

small = st.integers(min_value=-50, max_value=50)
count = st.integers(min_value=0, max_value=1000)
values = st.lists(small, min_size=1, max_size=8)
maybe = st.none() | st.floats(min_value=-1e6, max_value=1e6, allow_nan=False).map(float)


def _moments(xs: list[int], order: int = 4) -> MomentsState:
    """Moments of ``xs`` up to ``order`` (2: StdDev/Variance, 3: Skewness, 4: Kurtosis)."""
    state = MomentsState.empty()
    for x in xs:
        state = state.merge(MomentsState(1, float(x), 0.0, 0.0, 0.0, order))
    return state


def _comoments(pairs: list[tuple[int, int]]) -> CoMomentsState:
    state = CoMomentsState.empty()
    for x, y in pairs:
        state = state.merge(CoMomentsState(1, float(x), float(y), 0.0, 0.0, 0.0))
    return state


STATES: dict[str, st.SearchStrategy[State]] = {
    "NumMatches": st.builds(NumMatches, count),
    "NumMatchesAndCount": st.builds(NumMatchesAndCount, count, count, count),
    "Sum": st.builds(SumState, small.map(float), count),
    "Min": st.builds(MinState, maybe),
    "Max": st.builds(MaxState, maybe),
    # states of different orders merge too (a stored v1 state has order 4)
    "Moments": st.builds(_moments, values, st.sampled_from([2, 3, 4])) | st.just(MomentsState.empty()),
    "CoMoments": st.lists(st.tuples(small, small), min_size=1, max_size=6).map(_comoments),
    "DataTypeHistogram": st.builds(DataTypeState, count, count, count, count, count),
    "RatioOfSums": st.builds(RatioOfSumsState, small.map(float), small.map(float), count),
}


def _close(a: State, b: State) -> bool:
    """Field-wise equality; floats within a relative 1e-9 (absolute 1e-6 near zero)."""
    if type(a) is not type(b):
        return False
    for name, va in vars(a).items():
        vb = getattr(b, name)
        if isinstance(va, float) and isinstance(vb, float):
            if not math.isclose(va, vb, rel_tol=1e-9, abs_tol=1e-6):
                return False
        elif va != vb:
            return False
    return True


@pytest.mark.parametrize("tag", sorted(STATES))
def test_identity_commutativity_associativity(tag):
    strategy = STATES[tag]

    @settings(max_examples=60, deadline=None)
    @given(strategy, strategy, strategy)
    def check(a: State, b: State, c: State) -> None:
        empty = type(a).empty()
        assert a.merge(empty) == a and empty.merge(a) == a
        assert _close(a.merge(b), b.merge(a))
        assert _close(a.merge(b).merge(c), a.merge(b.merge(c)))

    check()


@pytest.mark.parametrize("orders", [(4, 4), (2, 2), (3, 3), (2, 4), (4, 3)])
def test_moments_merge_matches_direct_formulas(orders):
    @settings(max_examples=40, deadline=None)
    @given(values, values)
    def check(xs: list[int], ys: list[int]) -> None:
        merged = _moments(xs, orders[0]).merge(_moments(ys, orders[1]))
        order = min(orders)
        allv = [float(v) for v in xs + ys]
        n = len(allv)
        mean = sum(allv) / n
        assert merged.n == n and math.isclose(merged.mean, mean, abs_tol=1e-9)
        assert merged.order == order
        for p, got in ((2, merged.m2), (3, merged.m3), (4, merged.m4)):
            want = sum((v - mean) ** p for v in allv) if p <= order else 0.0
            assert math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-6)

    check()


def _exact_analyzers() -> list[Any]:
    return [
        Size(),
        Completeness("x"),
        Compliance("pos", "x > 0", ("x",)),
        PatternMatch("s", r"1"),
        Sum("x"),
        Minimum("x"),
        Maximum("x"),
        Mean("x"),
        StandardDeviation("x"),
        Variance("x"),
        Skewness("x"),
        Kurtosis("x"),
        Correlation("x", "y"),
        MinLength("s"),
        MaxLength("s", "empty_string"),
        ZerosCount("x"),
        DataType("s"),
        RatioOfSums("x", "y"),
        Sum("y", where="x > 0"),
    ]


def _same_metric(merged: Any, whole: Any) -> bool:
    if merged.ok != whole.ok:
        return False
    if not merged.ok:
        return merged.empty == whole.empty
    a, b = merged.value, whole.value
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)
    return bool(a == b)


row = st.tuples(st.none() | small, st.none() | small)
rows = st.lists(row, min_size=0, max_size=6)


@settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck))
@given(rows, rows)
def test_metric_of_merged_states_equals_metric_of_concatenation(spark, a_rows, b_rows):
    def frame(rs: list[tuple[int | None, int | None]]) -> Any:
        data = [(x, y, None if x is None else str(x)) for x, y in rs]
        return spark.createDataFrame(data, "x int, y int, s string")

    analyzers = _exact_analyzers()
    ctx_a, ctx_b = analyze(frame(a_rows), analyzers), analyze(frame(b_rows), analyzers)
    ctx_ab = analyze(frame(a_rows + b_rows), analyzers)
    for an in analyzers:
        merged = an.metric(ctx_a.states[an].merge(ctx_b.states[an]))
        assert _same_metric(merged, ctx_ab.metric(an)), (an, merged, ctx_ab.metric(an))
