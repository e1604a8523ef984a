"""ConstraintResult carries its assertion's bounds as numbers (lower/upper and whether each end is
inclusive), filled where constraints are judged; the alert policy's Size floor reads those numbers,
never the bound's display text, and reports without the fields (written before) still read back."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamdq.alerts import AlertPolicy
from streamdq.analyzers.metric import Metric
from streamdq.checks import Check, Level
from streamdq.checks.assertion import Between, Comparison, PyAssertion
from streamdq.report import BatchReport, Bounds, ConstraintResult
from tests.unit.alerts.conftest import report

CHECK = Check(Level.ERROR, "orders")


def judged(check: Check, value: float, name: str = "Size", instance: str = "*") -> ConstraintResult:
    c = check.constraints[-1]
    metric = Metric("Dataset" if instance == "*" else "Column", name, instance, value=value)
    return check.evaluate({c.analyzer: metric}).constraint_results[-1]


@pytest.mark.parametrize(
    ("assertion", "expected"),
    [
        (">= 1000", Bounds(1000.0, None)),
        ("> 5", Bounds(5.0, None, lower_inclusive=False)),
        ("< 5", Bounds(None, 5.0, upper_inclusive=False)),
        ("== 7", Bounds(7.0, 7.0)),
        ("!= 0", Bounds()),  # no interval
        ({"between": [900, 1100]}, Bounds(900.0, 1100.0)),
        ("<= inf", Bounds()),  # an infinite end is an open side, and keeps the report JSON-safe
    ],
)
def test_judged_constraint_carries_its_assertion_as_numbers(assertion, expected):
    r = judged(CHECK.has_size(assertion), 1.0)
    assert r.bounds == expected
    assert isinstance(r.bound, str)  # the display text is kept
    back = BatchReport.from_json(report(0, [r]).to_json()).check_results[0].constraint_results[0]
    assert back.bounds == expected and back == r


def test_a_python_assertion_has_no_bounds_whatever_its_description_says():
    r = judged(CHECK.has_size(PyAssertion(lambda v: v >= 1000 or v == 0, ">= 1000")), 995.0)
    assert r.bound == ">= 1000" and r.lower is None and r.upper is None


def test_reports_written_before_the_fields_read_back_with_none():
    r = judged(CHECK.has_size(">= 1000"), 995.0)
    old = {
        k: v
        for k, v in r.to_dict().items()
        if k not in ("lower", "upper", "lower_inclusive", "upper_inclusive")
    }
    back = ConstraintResult.from_dict(json.loads(json.dumps(old)))
    assert back.bound == ">= 1000.0" and (back.lower, back.upper) == (None, None)
    assert back.lower_inclusive and back.upper_inclusive
    # a [lower, upper] pair of numbers (the learned constraints' bound) is structured already
    pair = ConstraintResult.from_dict({**old, "bound": [0.5, 2.0]})
    assert (pair.lower, pair.upper) == (0.5, 2.0)


def test_size_floor_reads_between_bounds_the_old_text_parser_could_not():
    """``between 900.0 and 1100.0`` never matched the bound regex, so a Size constraint with a
    between assertion was alerted on any miss; from the structured bounds the floor applies."""
    policy = AlertPolicy(min_abs_change=10)
    near = judged(CHECK.has_size({"between": [900, 1100]}), 895.0)  # 5 rows below
    alerts, state = policy.evaluate(report(0, [near]), {})
    assert alerts == [] and state["suppressed"] == {"floor": 1}
    far = judged(CHECK.has_size({"between": [900, 1100]}), 10.0)  # 890 rows below
    alerts, _ = policy.evaluate(report(0, [far]), {})
    assert [a.kind for a in alerts] == ["violation"] and alerts[0].expected == "between 900.0 and 1100.0"


def test_size_floor_never_parses_the_bound_text():
    """A bound text that looks like a comparison but is not one (a Python assertion described as
    ``>= 1000``) must not be read as an interval: the floor cannot judge it, so the alert goes out.
    Reading the text back (the old regex) would call 995 "5 rows off" and hold the alert back."""
    policy = AlertPolicy(min_abs_change=10)
    r = judged(CHECK.has_size(PyAssertion(lambda v: v >= 1000 or v == 0, ">= 1000")), 995.0)
    alerts, state = policy.evaluate(report(0, [r]), {})
    assert [a.kind for a in alerts] == ["violation"] and "floor" not in state["suppressed"]
    # and a result whose text and numbers disagree is judged by the numbers
    lying = ConstraintResult(**{**_fields(r), "bound": ">= 996", "lower": 2000.0})
    alerts, state = policy.evaluate(report(0, [lying]), {})
    assert [a.kind for a in alerts] == ["violation"]  # 1005 rows below 2000, not 1 below 996


def test_strict_bounds_are_kept_for_the_distance():
    r = judged(CHECK.has_size("> 1000"), 1000.0)
    assert r.failed and r.bounds.distance(1000.0) == 0.0 and not r.bounds.contains(1000.0)


def _fields(r: ConstraintResult) -> dict:
    return {f: getattr(r, f) for f in r.__dataclass_fields__}


@settings(max_examples=300, deadline=None)
@given(
    op=st.sampled_from([">=", ">", "<=", "<", "=="]),
    expected=st.floats(-1e6, 1e6, allow_nan=False),
    lo=st.floats(-1e6, 1e6, allow_nan=False),
    width=st.floats(0, 1e6, allow_nan=False),
    value=st.floats(-2e6, 2e6, allow_nan=False),
)
def test_the_numbers_say_what_the_assertion_does(op, expected, lo, width, value):
    """For every interval assertion, a value passes exactly when it lies inside its bounds, and
    a failing value lies a positive distance outside them."""
    for assertion in (Comparison(op, expected), Between(lo, lo + width)):
        bounds = assertion.bounds()
        assert bounds.contains(value) == assertion.test(value)
        if not assertion.test(value) and bounds.distance(value) == 0.0:
            assert value in (bounds.lower, bounds.upper)  # only an excluded end is 0 away
