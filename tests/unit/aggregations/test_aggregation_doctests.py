"""The runnable examples in the docstrings of the aggregation modules and the contract kit (no
Spark): a user copies them, so they must keep working."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "streamdq.analyzers.aggregation",
    "streamdq.analyzers.aggregation_registry",
    "streamdq.analyzers.user_aggregation",
    "streamdq.aggregations.discrete_histogram",
    "streamdq.aggregations.unique_values",
    "streamdq.aggregations.moments",
    "streamdq.aggregations.kll",
    "streamdq.checks.kinds_aggregation",
    "streamdq.testing.aggregations",
    "streamdq.testing.laws",
    "streamdq.testing.states",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
