"""Checks: constraints as data, the fluent ``Check`` builder, YAML/JSON specs.

``verify`` and ``VerificationResult`` live in :mod:`streamdq.verification`, above the checks
(they run the engine); they are still importable from here, resolved on first access, so
importing the checks never imports the engine.

Importing this package registers nothing: the built-in constraint vocabulary is added by the
explicit, idempotent ``streamdq.checks.register.register_builtins()``, which the look-ups call.
"""

import importlib
from typing import Any

from streamdq.checks.assertion import Assertion, Between, Comparison, PyAssertion, parse_assertion
from streamdq.checks.check import Check, Level
from streamdq.checks.constraint import (
    Constraint,
    ConstraintKind,
    Param,
    constraint_kinds,
    register_constraint_kind,
    unregister_constraint_kind,
)
from streamdq.checks.spec import CheckSuite, dump_checks, load_checks, load_suite, loads_suite, save_checks


def __getattr__(name: str) -> Any:
    if name in ("VerificationResult", "verify"):
        return getattr(importlib.import_module("streamdq.verification"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "Assertion",
    "Between",
    "Check",
    "CheckSuite",
    "Comparison",
    "Constraint",
    "ConstraintKind",
    "Level",
    "Param",
    "PyAssertion",
    "VerificationResult",
    "constraint_kinds",
    "dump_checks",
    "load_checks",
    "load_suite",
    "loads_suite",
    "parse_assertion",
    "register_constraint_kind",
    "save_checks",
    "unregister_constraint_kind",
    "verify",
]
