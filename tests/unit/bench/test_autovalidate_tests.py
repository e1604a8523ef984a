"""bench/autovalidate/run.py: which corrupted batches are recall tests (a reordering is none)."""

from __future__ import annotations

import doctest

import numpy as np
import pandas as pd

from streamdq.autovalidate.avh.corruptions import corruptions_for
from tests.unit.bench.bench_modules import load_bench_module

run = load_bench_module("autovalidate/run.py", "bench_autovalidate_run")


def test_same_values_ignores_order_and_nothing_else():
    before = pd.Series([3.0, np.nan, 1.0, 1.0])
    assert run.same_values(before, pd.Series([1.0, 1.0, np.nan, 3.0]))
    assert not run.same_values(before, pd.Series([1.0, 3.0, np.nan, 3.0]))  # a value replaced
    assert not run.same_values(before, pd.Series([1.0, 1.0, 1.0, 3.0]))  # a NULL filled
    assert not run.same_values(before, pd.Series([1.0, np.nan, 3.0]))  # a row lost
    assert not run.same_values(pd.Series([1, 2]), pd.Series([1.0, 2.0]))  # int became float
    assert not run.same_values(pd.Series(["a", 1], dtype=object), pd.Series([1, "a"], dtype=object))
    assert doctest.testmod(run).failed == 0


def test_a_schema_change_that_can_only_shuffle_a_lone_column_is_not_a_test():
    catalogue = corruptions_for("numeric")
    lone = pd.DataFrame({"x": np.arange(20, dtype=float) * 1.5})
    tests = [c.name for c, _ in run._tests(lone, "x", catalogue, 0, 3, 0)]
    assert not any(n.startswith("schema_change") for n in tests)
    assert "unit_change:x10" in tests and "volume_change:x0.5" in tests
    with_neighbour = lone.assign(y=np.arange(20, dtype=float) + 100.0)
    tests = [c.name for c, _ in run._tests(with_neighbour, "x", catalogue, 0, 3, 0)]
    assert "schema_change:100%" in tests  # values taken from y: a real test
