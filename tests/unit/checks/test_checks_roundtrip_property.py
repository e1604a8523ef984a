"""Property: any check built in code (without callables) survives dump -> load unchanged."""

from __future__ import annotations

import string

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamdq.checks import Between, Check, Comparison, Level, dump_checks, loads_suite

TEXT = st.text(alphabet=string.ascii_letters + string.digits + " _'`\"\\-:#{}[],.é", min_size=1, max_size=12)
NUMBER = st.floats(allow_nan=False, allow_infinity=False, width=64)
ASSERTION = st.one_of(
    st.builds(Comparison, st.sampled_from(["==", "!=", "<", "<=", ">", ">="]), NUMBER),
    st.tuples(NUMBER, NUMBER).map(lambda t: Between(min(t), max(t))),
)
COMMON = st.fixed_dictionaries(
    {},
    optional={
        "where": TEXT.filter(str.strip),
        "hint": TEXT,
        "scope": st.sampled_from(["batch", "window", "total"]),
    },
)


@st.composite
def constraint(draw, check: Check) -> Check:
    kw = draw(COMMON)
    col = draw(TEXT)
    kind = draw(st.integers(0, 7))
    if kind == 0:
        return check.is_complete(col, **kw)
    if kind == 1:
        return check.has_completeness(col, draw(ASSERTION), **kw)
    if kind == 2:
        return check.has_mean(col, draw(ASSERTION), **kw)
    if kind == 3:
        values = draw(st.lists(st.one_of(TEXT, st.integers(-(10**6), 10**6)), max_size=4))
        return check.is_contained_in(col, values, **kw)
    if kind == 4:
        lo, hi = sorted(draw(st.tuples(NUMBER, NUMBER)))
        return check.is_contained_in(
            col, lower_bound=lo, upper_bound=hi, include_lower=draw(st.booleans()), **kw
        )
    if kind == 5:
        return check.satisfies(draw(TEXT), draw(TEXT), draw(ASSERTION), **kw)
    if kind == 6:
        q = draw(st.floats(0, 1))
        return check.has_approx_quantile(col, q, draw(ASSERTION), **kw)
    return check.has_histogram_values(col, draw(ASSERTION), key=draw(TEXT), **kw)


@st.composite
def checks(draw) -> list[Check]:
    out = []
    for _ in range(draw(st.integers(1, 3))):
        check = Check(draw(st.sampled_from(list(Level))), draw(TEXT.filter(str.strip)))
        for _ in range(draw(st.integers(1, 4))):
            check = draw(constraint(check))
        out.append(check)
    return out


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(checks(), st.sampled_from(["yaml", "json"]))
def test_load_dump_round_trip(cs, fmt):
    loaded = list(loads_suite(dump_checks(cs, fmt=fmt)).checks)
    assert loaded == cs
    ids = [c.constraint_id(check.description) for check in cs for c in check.constraints]
    assert ids == [c.constraint_id(check.description) for check in loaded for c in check.constraints]
