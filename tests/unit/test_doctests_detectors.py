"""The examples in streamdq.detectors' docstrings run (issue 21 item 5): ``doctest`` over every
module of the package, found by walking it (a new module is run without being listed here), and
every registered detector class carries an ``Examples`` block in its own docstring. No Spark."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import streamdq.detectors
from streamdq.detectors import registered_detectors


def _modules() -> list[str]:
    return sorted(
        info.name for info in pkgutil.walk_packages(streamdq.detectors.__path__, "streamdq.detectors.")
    )


@pytest.mark.parametrize("name", ["streamdq.detectors", *_modules()])
def test_the_module_examples_run(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples of {name} failed"


@pytest.mark.parametrize(
    "kind", [k for k, c in registered_detectors().items() if c.__module__.startswith("streamdq.")]
)
def test_every_registered_detector_shows_an_example(kind: str) -> None:
    cls = registered_detectors()[kind]
    doc = cls.__dict__.get("__doc__") or ""
    assert "Examples" in doc and ">>>" in doc, f"{cls.__name__} has no Examples block in its docstring"
    tests = doctest.DocTestFinder(recurse=False).find(
        cls, cls.__name__, globs=vars(importlib.import_module(cls.__module__))
    )
    assert sum(len(t.examples) for t in tests) >= 2


def test_a_module_with_a_wrong_example_fails() -> None:
    """The runner really runs the examples: a wrong expected output is counted as a failure."""
    import types

    module = types.ModuleType("broken_examples")
    module.__doc__ = ">>> 1 + 1\n3\n"
    assert doctest.testmod(module).failed == 1
