"""``check_aggregation``: the contract of an aggregation class, checked from its ``_unit_test_params()``.

Runs in pure Python and pyarrow (no Spark, well under a second per class). For every params
mapping the class's ``_unit_test_params()`` yields, on batches drawn for its ``input_type``
(numbers with repeats, a NaN and an infinity; or strings, empty and non-ASCII ones), A, B, C:

* the class resolves as an aggregation (``contract_problems``), its params pass its own
  ``validate_params``, and ``from_arrow`` of zero values is the empty state;
* identity: ``s.merge(empty)`` and ``empty.merge(s)`` are ``s``; merging leaves operands
  unchanged;
* exact classes: ``merge`` is commutative and associative (the same state, or, for states of
  floating-point sums merged in another order, values equal up to rounding), and
  ``value(merge(s(A), s(B)))`` equals ``value(s(A ++ B))`` (up to float rounding);
* approximate classes (``approximate = True``): ``error_bound`` is a number >= 0, and the
  state of A ++ B, the merges in both orders and both groupings are within the class's own
  bounds of the exact answer (``_unit_test_bounds``);
* ``value`` is JSON-able (or raises ``EmptyInput``, for the empty state only);
* bytes: the type tag and format version are in ``to_bytes``; ``from_bytes`` gives the same
  state; the bytes are stable (equal states, and a loaded state written again, give the same
  bytes, exact classes); a newer format version and another class's tag are rejected.

A class without ``_unit_test_params`` fails (``ContractViolation``): a new class cannot skip
the laws. Classes with a Spark form only are checked on their merge and bytes laws with the
states ``_unit_test_states()`` gives (their Spark side needs an integration test).

Use it on your own class in a test::

    from streamdq.testing import check_aggregation
    from mypkg.aggs import LongValues

    def test_long_values_contract():
        check_aggregation(LongValues)

>>> from streamdq.aggregations.builtins import BUILTINS
>>> [check_aggregation(c).laws > 0 for c in BUILTINS]
[True, True, True, True, True, True]
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import numpy as np
import pyarrow as pa

from streamdq.analyzers.aggregation import Aggregation, EmptyInput
from streamdq.analyzers.aggregation_registry import contract_problems
from streamdq.analyzers.state import StateFormatError
from streamdq.testing.laws import ContractReport, ContractViolation, close, same
from streamdq.testing.states import check_roundtrip, check_state

_WORDS = ["200", "404", "500", "", "ünïcode", "a b", "x" * 40, "301"]


def batches(input_type: str, seed: int = 7) -> tuple[pa.Array, pa.Array, pa.Array]:
    """Three deterministic batches A, B, C of non-NULL values for ``input_type``."""
    rng = np.random.default_rng(seed)
    if input_type == "numeric":
        a = rng.integers(-50, 50, 400).astype(np.float64)
        a[:150] = rng.normal(10.0, 3.0, 150)
        a[7], a[8] = np.nan, np.inf
        b = rng.integers(0, 5, 250)  # an integer column, with heavy repeats
        c = rng.exponential(100.0, 180)
        return pa.array(a), pa.array(b, pa.int64()), pa.array(c)
    words = np.array(_WORDS, dtype=object)
    return tuple(pa.array(rng.choice(words, n).tolist(), pa.string()) for n in (400, 250, 180))  # type: ignore[return-value]


def _concat(*arrays: pa.Array) -> pa.Array:
    if len({a.type for a in arrays}) > 1:
        arrays = tuple(a.cast(pa.float64()) for a in arrays)
    return pa.concat_arrays(list(arrays))


def _value(state: Aggregation, params: Mapping[str, Any], where: str, *, may_be_empty: bool) -> Any:
    try:
        value = state.value(params)
    except EmptyInput:
        if may_be_empty:
            return EmptyInput
        raise ContractViolation(
            f"{where}: value() raised EmptyInput for a state of non-empty input"
        ) from None
    try:
        json.dumps(value)
    except (TypeError, ValueError) as exc:
        raise ContractViolation(f"{where}: value() is not JSON-able ({exc}): {value!r}") from None
    return value


def _equivalent(x: Aggregation, y: Aggregation, params: Mapping[str, Any], where: str) -> bool:
    """The same state, or (floating-point states merged in another order) values equal up to rounding."""
    if same(x, y):
        return True
    return close(_value(x, params, where, may_be_empty=True), _value(y, params, where, may_be_empty=True))


def check_aggregation(cls: type[Aggregation]) -> ContractReport:
    """Check ``cls`` against the Aggregation contract; raises ``ContractViolation`` naming the law."""
    problems = contract_problems(cls)
    if problems:
        raise ContractViolation("; ".join(problems))
    name = cls.__name__
    try:
        param_sets = [dict(p) for p in cls._unit_test_params()]
    except NotImplementedError as exc:
        raise ContractViolation(str(exc)) from None
    if not param_sets:
        raise ContractViolation(f"{name}._unit_test_params() yields no params")
    report = ContractReport(name, param_sets)
    for params in param_sets:
        where = f"{name} with params {params}"
        problem = cls.validate_params(params)
        if problem is not None:
            raise ContractViolation(f"{where}: its own validate_params rejects them: {problem}")
        if cls.has_arrow_form():
            _check_from_data(cls, params, where, report)
        else:
            report.laws += check_state(cls, load=cls.from_bytes).laws
    return report


def _check_from_data(
    cls: type[Aggregation], params: dict[str, Any], where: str, report: ContractReport
) -> None:
    a, b, c = batches(cls.input_type)
    empty = cls.empty()
    zero = cls.from_arrow(a.slice(0, 0), params)
    if not same(zero, empty):
        raise ContractViolation(f"{where}: from_arrow of zero values is not empty(): {zero!r}")
    _value(empty, params, f"{where}, empty state", may_be_empty=True)
    sa, sb, sc = (cls.from_arrow(x, params) for x in (a, b, c))
    ab, abc = _concat(a, b), _concat(a, b, c)
    s_ab = cls.from_arrow(ab, params)
    for label, s in (("s(A)", sa), ("s(B)", sb)):
        before = s.to_bytes()
        if not same(s.merge(empty), s) or not same(empty.merge(s), s):
            raise ContractViolation(f"{where}: the empty state is not the identity of merge for {label}")
        if s.to_bytes() != before:
            raise ContractViolation(f"{where}: merge changed its operand {label}")
        report.laws += 2
    merged_ab, merged_ba = sa.merge(sb), sb.merge(sa)
    left, right = sa.merge(sb).merge(sc), sa.merge(sb.merge(sc))
    if cls.approximate:
        bound = sa.error_bound(params)
        if isinstance(bound, bool) or not isinstance(bound, int | float) or not bound >= 0:
            raise ContractViolation(
                f"{where}: approximate, but error_bound() is {bound!r}, not a number >= 0"
            )
        for label, s, values in (
            ("s(A ++ B)", s_ab, ab),
            ("merge(s(A), s(B))", merged_ab, ab),
            ("merge(s(B), s(A))", merged_ba, ab),
            ("(s(A) + s(B)) + s(C)", left, abc),
            ("s(A) + (s(B) + s(C))", right, abc),
        ):
            _value(s, params, f"{where}, {label}", may_be_empty=False)
            off = s._unit_test_bounds(values, params)
            if off is not None:
                raise ContractViolation(f"{where}: {label} is outside its error bound: {off}")
            report.laws += 1
    else:
        if not _equivalent(merged_ab, merged_ba, params, where):
            raise ContractViolation(f"{where}: merge is not commutative: {merged_ab!r} != {merged_ba!r}")
        if not _equivalent(left, right, params, where):
            raise ContractViolation(f"{where}: merge is not associative: {left!r} != {right!r}")
        got = _value(merged_ab, params, f"{where}, merge(s(A), s(B))", may_be_empty=False)
        want = _value(s_ab, params, f"{where}, s(A ++ B)", may_be_empty=False)
        if not close(got, want):
            raise ContractViolation(
                f"{where}: value(merge(s(A), s(B))) != value(s(A ++ B)): {got!r} != {want!r}"
            )
        if cls.from_arrow(a, params).to_bytes() != sa.to_bytes():
            raise ContractViolation(f"{where}: two states of the same values have different bytes")
        report.laws += 4
    for label, s in (("empty", empty), ("s(A)", sa), ("merge(s(A), s(B))", merged_ab)):
        check_roundtrip(s, f"{where}, {label}", load=cls.from_bytes, report=report)
    other = b"SDQS" + len(b"x.other").to_bytes(2, "big") + b"x.other" + (1).to_bytes(2, "big")
    try:
        cls.from_bytes(other)
    except StateFormatError:
        report.laws += 1
    else:
        raise ContractViolation(f"{where}: from_bytes accepted the bytes of another type tag")


__all__ = ["batches", "check_aggregation"]
