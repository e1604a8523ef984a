"""Assertions as data: shorthand parsing, bounds, callables, YAML form, clear errors."""

from __future__ import annotations

import math

import pytest

from streamdq.checks.assertion import Between, Comparison, PyAssertion, parse_assertion
from streamdq.errors import ConfigError


@pytest.mark.parametrize(
    ("text", "op", "value"),
    [
        ("== 1", "==", 1.0),
        ("= 1", "==", 1.0),
        (">= 0.95", ">=", 0.95),
        ("> -3", ">", -3.0),
        ("<=10", "<=", 10.0),
        ("< 1e3", "<", 1000.0),
        ("!= 0", "!=", 0.0),
    ],
)
def test_shorthand(text, op, value):
    assert parse_assertion(text) == Comparison(op, value)


def test_number_means_equality_and_default_is_exact():
    a = parse_assertion(1)
    assert a == Comparison("==", 1.0)
    assert a.test(1.0)
    assert not a.test(0.9999999)


def test_comparisons_evaluate():
    assert parse_assertion(">= 0.95").test(0.95)
    assert not parse_assertion("> 0.95").test(0.95)
    assert parse_assertion("!= 0").test(math.nan)
    assert not parse_assertion(">= 0").test(math.nan)


def test_between_inclusive_and_spec_round_trip():
    b = parse_assertion({"between": [0, 10]})
    assert b == Between(0.0, 10.0)
    assert b.test(0) and b.test(10) and not b.test(10.5)
    assert parse_assertion(b.to_spec()) == b
    assert parse_assertion(Comparison(">=", 0.5).to_spec()) == Comparison(">=", 0.5)


def test_callable_is_code_only():
    a = parse_assertion(lambda v: v > 3)
    assert isinstance(a, PyAssertion) and not a.serializable
    assert a.test(4) and not a.test(2)
    with pytest.raises(ConfigError, match="Python callable and cannot be written"):
        a.to_spec()


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("at least 0.9", "where.assertion: got 'at least 0.9'; expected a comparison such as"),
        (">= abc", "where.assertion: got '>= abc'; expected"),
        ({"between": [5, 1]}, "where.assertion.between: lower bound 5.0 is above upper bound 1.0"),
        ({"between": [1]}, "where.assertion.between: got [1]; expected a list [lower, upper] of two numbers"),
        ({"between": ["a", 2]}, "expected a list [lower, upper] of two numbers"),
        ({"min": 1}, "where.assertion: got a mapping with keys ['min']"),
        ([1, 2], "where.assertion: got [1, 2]; expected"),
        (True, "where.assertion: got True; expected"),
    ],
)
def test_malformed_assertions_name_the_path(spec, message):
    with pytest.raises(ConfigError) as err:
        parse_assertion(spec, path="where.assertion", file="c.yaml")
    assert str(err.value).startswith("c.yaml: ")
    assert message in str(err.value)
