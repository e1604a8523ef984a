"""Merge laws of EVERY registered state type with hostile floats: NaN, +-Infinity, +-0.0,
subnormals (docs/non-finite.md).

The state types come from the state registry (``registered_states``), not a hand list: a new
state type without a strategy here fails ``test_every_registered_state_has_a_hostile_strategy``.
JSON dataclass states get a strategy derived from their fields (``int`` -> counts, ``float`` ->
hostile floats, ``float | None`` -> None or a hostile float) unless they have invariants of
their own (moments are built from hostile values, frequencies from grouped hostile keys,
sketches from hostile inputs). Laws: identity, commutativity, associativity and the
serialization round trip. Arithmetic-free merges (counts, Min, Max, frequencies) must be
equal byte for byte, whatever the order; the summing ones equal up to rounding, with NaN
equal to NaN and infinities exact; sketches equal in their estimates (inputs below the
sketches' compaction size, so they are exact). Overflow (1e308 + 1e308) is left out: float
addition is not associative there, whatever the merge does.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from collections.abc import Callable
from typing import Any

import datasketches as ds
import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import streamdq.analyzers  # noqa: F401  (registers every built-in state)
from streamdq.analyzers.aggregation import Aggregation
from streamdq.analyzers.basic_states import CoMomentsState, MomentsState
from streamdq.analyzers.frequency import FrequencyState
from streamdq.analyzers.frequency.grouped import state_from_grouped
from streamdq.analyzers.register import registered_states, state_from_bytes
from streamdq.analyzers.sketch_states import HLL_LG_K, HllState, KllState
from streamdq.analyzers.state import JsonState, State

NAN, INF = math.nan, math.inf
SPECIAL = [NAN, INF, -INF, 0.0, -0.0, 5e-324, -5e-324, 1.0, -1.0]
hostile = st.sampled_from(SPECIAL) | st.floats(min_value=-1e6, max_value=1e6, allow_nan=False)
counts = st.integers(min_value=0, max_value=1000)


def _moments(xs: list[float], order: int) -> MomentsState:
    state = MomentsState.empty()
    for x in xs:
        state = state.merge(MomentsState(1, x, 0.0, 0.0, 0.0, order))
    return state


def _comoments(pairs: list[tuple[float, float]]) -> CoMomentsState:
    state = CoMomentsState.empty()
    for x, y in pairs:
        state = state.merge(CoMomentsState(1, x, y, 0.0, 0.0, 0.0))
    return state


def _frequency(keys: list[float | None]) -> FrequencyState:
    if not keys:
        return FrequencyState.empty()
    uniq: dict[str, tuple[float | None, int]] = {}
    for k in keys:  # group as Spark does: NaN equals NaN, -0.0 is normalized to 0.0
        key = None if k is None else k + 0.0
        tag = "null" if key is None else "nan" if math.isnan(key) else repr(key)
        v, c = uniq.get(tag, (key, 0))
        uniq[tag] = (v, c + 1)
    table = pa.table(
        {
            "in_scope": pa.array([True] * len(uniq)),
            "k0": pa.array([v for v, _ in uniq.values()], pa.float64()),
            "count": pa.array([c for _, c in uniq.values()], pa.int64()),
        }
    )
    return state_from_grouped(table, n_keys=1, histogram=False, max_groups=None)


def _weighted(rows: list[tuple[float | None, int | None, bool]]) -> FrequencyState:
    """The state of a Histogram with a Sum aggregate: (hostile key, value, in scope) rows,
    grouped as Spark does (out-of-scope rows in one group whose values count only in the
    unfiltered sum)."""
    if not rows:
        return FrequencyState.empty()
    groups: dict[tuple[bool, str | None], list[int | None]] = {}
    for key, value, scope in rows:
        name = ("NullValue" if key is None else repr(key + 0.0)) if scope else None
        groups.setdefault((scope, name), []).append(value)
    sums = [
        None if all(v is None for v in vs) else sum(v for v in vs if v is not None) for vs in groups.values()
    ]
    table = pa.table(
        {
            "in_scope": pa.array([scope for scope, _ in groups]),
            "k0": pa.array([name for _, name in groups], pa.string()),
            "count": pa.array([len(vs) for vs in groups.values()], pa.int64()),
            "sum": pa.array(sums, pa.int64()),
        }
    )
    return state_from_grouped(table, n_keys=1, histogram=True, max_groups=None)


def _form(state: FrequencyState, sampled: bool) -> FrequencyState:
    """``state`` exact, or in its sampled form (at most 12 keys: the sample and the top keep
    every key, so merges stay exact and equal byte for byte in any order)."""
    return state.to_sketch(SAMPLED_BOUND) if sampled and not state.is_empty else state


SAMPLED_BOUND = 32


def _frequencies() -> st.SearchStrategy[FrequencyState]:
    """Plain groupings, or Histograms with a Sum aggregate, each exact or sampled: the two
    families never merge with each other, so the family is drawn once per example
    (``st.shared``) for all its states; the forms mix freely."""
    plain = st.lists(st.none() | hostile, max_size=12).map(_frequency)
    values = st.none() | st.integers(min_value=-(10**12), max_value=10**12)
    weighted = st.lists(st.tuples(st.none() | hostile, values, st.booleans()), max_size=12).map(_weighted)
    family = st.shared(st.booleans(), key="frequency-weighted").flatmap(lambda w: weighted if w else plain)
    return st.builds(_form, family, st.booleans())


def _kll(xs: list[float]) -> KllState:
    sk = ds.kll_doubles_sketch(200)
    if xs:
        sk.update(np.array(xs, dtype=np.float64))
    return KllState.of_sketch(sk)


def _hll(xs: list[float]) -> HllState:
    sk = ds.hll_sketch(HLL_LG_K)
    for x in xs:
        sk.update(x)
    return HllState.of_sketch(sk)


OVERRIDES: dict[str, st.SearchStrategy[State]] = {
    "Moments": st.builds(_moments, st.lists(hostile, max_size=6), st.sampled_from([2, 3, 4])),
    "CoMoments": st.lists(st.tuples(hostile, hostile), max_size=6).map(_comoments),
    "frequency": _frequencies(),
    "KllDoublesSketch": st.lists(hostile, max_size=40).map(_kll),
    "HllSketch": st.lists(hostile, max_size=40).map(_hll),
}


def _field_strategy(hint: Any) -> st.SearchStrategy[Any]:
    if hint is int:
        return counts
    if hint is float:
        return hostile
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        args = set(typing.get_args(hint))
        if args == {float, type(None)}:
            return st.none() | hostile
    raise TypeError(f"no hostile strategy for a field of type {hint!r}")


def strategy_for(cls: type[State]) -> st.SearchStrategy[State]:
    """The hostile strategy of a registered state class (derived from its fields if JSON)."""
    if cls.TYPE_TAG in OVERRIDES:
        return OVERRIDES[cls.TYPE_TAG]
    if not (issubclass(cls, JsonState) and dataclasses.is_dataclass(cls)):
        raise TypeError(f"state {cls.TYPE_TAG!r} is neither a JSON dataclass nor in OVERRIDES")
    hints = typing.get_type_hints(cls)
    fields = {f.name: _field_strategy(hints[f.name]) for f in dataclasses.fields(cls)}
    return st.builds(cls, **fields)


# -- equality ----------------------------------------------------------------------------
def _float_eq(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-6)


def _close(a: State, b: State) -> bool:
    if type(a) is not type(b):
        return False
    for f in dataclasses.fields(a):  # type: ignore[arg-type]
        va, vb = getattr(a, f.name), getattr(b, f.name)
        if isinstance(va, float) and isinstance(vb, float):
            if not _float_eq(va, vb):
                return False
        elif va != vb:
            return False
    return True


def _kll_view(s: KllState) -> tuple[Any, ...]:
    if not s.sketch:
        return (0,)
    sk = s.kll()
    return (sk.n, *(sk.get_quantile(q, True) for q in (0.0, 0.25, 0.5, 0.75, 1.0)))


EXACT_BYTES = {"NumMatches", "NumMatchesAndCount", "Min", "Max", "DataTypeHistogram", "frequency"}
EQUALITY: dict[str, Callable[[Any, Any], bool]] = {
    "KllDoublesSketch": lambda a, b: _kll_view(a) == _kll_view(b),
    "HllSketch": lambda a, b: a.estimate() == b.estimate(),
}


def same(tag: str, a: State, b: State) -> bool:
    if tag in EQUALITY:
        return EQUALITY[tag](a, b)
    if tag in EXACT_BYTES:
        return a.to_bytes() == b.to_bytes()
    return _close(a, b)


def _hostile_states() -> dict[str, type[State]]:
    """The registered states, but aggregation functions: the contract kit checks those on data
    drawn for them (tests/laws/test_contract_kit.py), and a user's can join at any time."""
    return {t: c for t, c in registered_states().items() if not issubclass(c, Aggregation)}


STATE_TAGS = sorted(_hostile_states())


def test_every_registered_state_has_a_hostile_strategy() -> None:
    for tag, cls in _hostile_states().items():
        strategy_for(cls)  # raises when a new state type has no strategy
        assert tag == cls.TYPE_TAG


@pytest.mark.parametrize("tag", STATE_TAGS)
def test_hostile_identity_commutativity_associativity(tag: str) -> None:
    cls = registered_states()[tag]
    strategy = strategy_for(cls)

    @settings(max_examples=80, deadline=None)
    @given(strategy, strategy, strategy)
    def check(a: State, b: State, c: State) -> None:
        empty = cls.empty()
        assert same(tag, a.merge(empty), a) and same(tag, empty.merge(a), a)
        assert same(tag, a.merge(b), b.merge(a)), (a, b)
        assert same(tag, a.merge(b).merge(c), a.merge(b.merge(c))), (a, b, c)
        assert same(tag, state_from_bytes(a.to_bytes()), a)

    check()


def test_the_frequency_strategy_draws_both_families() -> None:
    """Weighted (Sum histogram) states and the sampled form are drawn too, so the laws above
    cover them."""
    from hypothesis import find

    from streamdq.analyzers.frequency import ExactFrequencies, SampledFrequencies

    strategy = strategy_for(FrequencyState)
    for form in (ExactFrequencies, SampledFrequencies):  # every form of the tag, in both families
        weighted = find(strategy, lambda s, f=form: isinstance(s, f) and s.sums is not None and s.n > 0)
        plain = find(strategy, lambda s, f=form: isinstance(s, f) and s.sums is None and s.n > 0)
        assert weighted.sums is not None and plain.sums is None


def test_max_and_min_order_nan_above_infinity() -> None:
    from streamdq.analyzers.basic_states import MaxState, MinState

    assert math.isnan(MaxState(1.0).merge(MaxState(NAN)).value)  # type: ignore[arg-type]
    assert math.isnan(MaxState(NAN).merge(MaxState(1.0)).value)  # type: ignore[arg-type]
    assert MinState(NAN).merge(MinState(1.0)).value == 1.0
    assert MinState(1.0).merge(MinState(NAN)).value == 1.0
    assert math.isnan(MinState(NAN).merge(MinState(NAN)).value)  # type: ignore[arg-type]
    assert MinState(-INF).merge(MinState(NAN)).value == -INF
    assert repr(MaxState(-0.0).merge(MaxState(0.0)).value) == "0.0"
    assert repr(MaxState(0.0).merge(MaxState(-0.0)).value) == "0.0"
    assert repr(MinState(0.0).merge(MinState(-0.0)).value) == "-0.0"
    assert repr(MinState(-0.0).merge(MinState(0.0)).value) == "-0.0"


def test_moments_with_an_infinity_are_poisoned_in_any_order() -> None:
    finite = _moments([1.0, 2.0, 3.0], 4)
    inf = _moments([INF], 4)
    for merged in (finite.merge(inf), inf.merge(finite)):
        assert merged.n == 4 and merged.poisoned
        assert all(math.isnan(v) for v in (merged.mean, merged.m2, merged.m3, merged.m4))
