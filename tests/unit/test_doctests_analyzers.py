"""The examples in the docstrings of streamdq.analyzers and streamdq.aggregations run (issue 21
item 5), and every public analyzer, state and aggregation class shows one.

The modules are found by walking both packages with pkgutil, so a new module is run without
being listed here. Every one of them must import without starting Spark (importing pyspark
is fine, a SparkSession or a JVM is not): that is checked in a fresh interpreter, where no
other test can have started one. The examples show the pure part: a state built from values
(or from the aggregated row the scan returns), states merged, the metric read.
"""

from __future__ import annotations

import doctest
import importlib
import inspect
import pkgutil
import subprocess
import sys
import textwrap
import types

import pytest

import streamdq.aggregations
import streamdq.analyzers
from streamdq.analyzers.aggregation import Aggregation
from streamdq.analyzers.base import Analyzer
from streamdq.analyzers.state import State

PACKAGES = (streamdq.analyzers, streamdq.aggregations)
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _modules() -> list[str]:
    names = {package.__name__ for package in PACKAGES}
    for package in PACKAGES:
        names.update(info.name for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."))
    return sorted(names)


MODULES = _modules()


def _public_classes(module: types.ModuleType) -> list[type]:
    """The concrete analyzer, state and aggregation classes a module defines and exports."""
    return [
        obj
        for name, obj in vars(module).items()
        if inspect.isclass(obj)
        and obj.__module__ == module.__name__
        and not name.startswith("_")
        and issubclass(obj, Analyzer | State | Aggregation)
        and not inspect.isabstract(obj)
    ]


def test_the_walk_finds_the_packages_and_their_subpackages() -> None:
    assert {"streamdq.analyzers.minimum", "streamdq.analyzers.frequency.states"} <= set(MODULES)
    assert {"streamdq.aggregations.kll", "streamdq.analyzers.extreme"} <= set(MODULES)


def test_no_module_starts_spark_when_imported() -> None:
    """Importing every module (as the doctest run does) starts no SparkContext and no JVM."""
    script = textwrap.dedent(
        f"""
        import importlib
        for name in {MODULES!r}:
            importlib.import_module(name)
        from pyspark import SparkContext
        assert SparkContext._active_spark_context is None, "a SparkContext was started"
        assert SparkContext._gateway is None, "a JVM gateway was started"
        print("ok")
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


@pytest.mark.parametrize("name", MODULES)
def test_the_module_examples_run(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=FLAGS)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples of {name} failed"


CLASSES = sorted(
    {cls for name in MODULES for cls in _public_classes(importlib.import_module(name))},
    key=lambda cls: f"{cls.__module__}.{cls.__qualname__}",
)


def test_the_classes_are_found() -> None:
    names = {cls.__name__ for cls in CLASSES}
    assert {"Minimum", "MaxState", "ExactFrequencies", "Median", "AggregationAnalyzer"} <= names
    assert {"Analyzer", "State", "ExtremeAnalyzer", "FrequencyState"}.isdisjoint(names)  # abstract


@pytest.mark.parametrize(
    "cls", CLASSES, ids=lambda cls: f"{cls.__module__.removeprefix('streamdq.')}.{cls.__name__}"
)
def test_every_public_analyzer_state_and_aggregation_shows_an_example(cls: type) -> None:
    doc = cls.__dict__.get("__doc__") or ""
    assert ">>>" in doc, f"{cls.__module__}.{cls.__name__} has no example (>>>) in its docstring"
    tests = doctest.DocTestFinder(recurse=False).find(
        cls, cls.__name__, globs=vars(importlib.import_module(cls.__module__))
    )
    assert sum(len(t.examples) for t in tests) >= 1


def test_a_wrong_example_is_counted_as_a_failure() -> None:
    """The runner really runs the examples: a wrong expected output fails."""
    module = types.ModuleType("broken_examples")
    module.__doc__ = ">>> 1 + 1\n3\n"
    assert doctest.testmod(module, optionflags=FLAGS, report=False).failed == 1
