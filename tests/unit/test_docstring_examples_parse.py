"""Every docstring example in the packages parses as a doctest: a malformed one (an option
directive such as ``# doctest: +SKIP`` on a ``>>>`` line of its own) makes ``doctest`` and
``pytest --doctest-modules`` refuse the whole module. The examples are parsed, not run. No Spark."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import connectors
import state
import streamdq


def _modules() -> list[str]:
    names: list[str] = []
    for package in (streamdq, connectors, state):
        names.append(package.__name__)
        names += [info.name for info in pkgutil.walk_packages(package.__path__, package.__name__ + ".")]
    return sorted(n for n in names if not n.endswith("__main__"))


@pytest.mark.parametrize("name", _modules())
def test_the_module_docstring_examples_parse(name: str) -> None:
    module = importlib.import_module(name)
    doctest.DocTestFinder().find(module)  # raises ValueError on a malformed example
