"""The constraint vocabulary is filled by an explicit register_builtins() call, never by
importing a module (issue 21 item 1; pandera's register.py). No Spark."""

from __future__ import annotations

import doctest
import importlib
import subprocess
import sys

import pytest


def _run(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout


def test_importing_the_kind_modules_registers_nothing() -> None:
    out = _run(
        "import streamdq.checks, streamdq.checks.kinds, streamdq.checks.kinds_statistics\n"
        "import streamdq.checks.kinds_aggregation, streamdq.checks.expression_kind\n"
        "from streamdq.checks.vocabulary import constraint_kinds\n"
        "print(len(constraint_kinds()))\n"
        "from streamdq.checks.register import register_builtins\n"
        "register_builtins(); register_builtins()  # idempotent\n"
        "print(len(constraint_kinds()))\n"
    )
    before, after = out.split()
    assert before == "0"
    assert int(after) > 40


def test_the_builder_and_the_spec_loader_register_the_builtins_themselves() -> None:
    out = _run(
        "from streamdq.checks import Check, Level, loads_suite\n"
        "print(Check(Level.ERROR, 'x').is_complete('id').constraints[0].kind)\n"
    )
    assert out.strip() == "is_complete"
    out = _run(
        "from streamdq.checks import loads_suite\n"
        "suite = loads_suite('checks:\\n  - description: c\\n    level: error\\n    constraints:\\n"
        '      - has_size: {assertion: "> 0"}\\n\')\n'
        "print(suite.checks[0].constraints[0].kind)\n"
    )
    assert out.strip() == "has_size"


def test_a_user_kind_may_not_reuse_a_builtin_name_even_before_any_lookup() -> None:
    out = _run(
        "from streamdq.checks.constraint import ConstraintKind, register_constraint_kind\n"
        "try:\n"
        "    register_constraint_kind(ConstraintKind('is_complete', (), lambda p, w: None))\n"
        "except ValueError as exc:\n"
        "    print(exc)\n"
    )
    assert "already registered" in out


@pytest.mark.parametrize(
    "name", ["streamdq.checks.vocabulary", "streamdq.checks.register", "streamdq.checks.constraint"]
)
def test_docstring_examples_run(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
