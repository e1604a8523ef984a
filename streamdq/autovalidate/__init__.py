"""Constraints that write themselves, three features in three sub-packages (docs/autovalidate.md):

* :mod:`streamdq.autovalidate.suggest`: constraint suggestion from one table profile (Deequ's
  rules, pure Python; docs/suggest.md).
* :mod:`streamdq.autovalidate.avh`: auto-validation by history (AVH, KDD 2023): a ``Program`` of
  constraints learned from a column's past batches, and its streaming monitor (``auto_validate:``).
* :mod:`streamdq.autovalidate.quality`: the table-level quality score and its streaming monitor
  (``quality_score:``; docs/quality_score.md).

The three never import each other. This package re-exports AVH's public calls:
``learn(history, column, fpr=0.001, seed=None) -> Program`` and ``judge(program, batch)``
(a ``Program`` itself is a pure value that never runs Spark). ``learn``, ``judge`` and
``profile_frames`` profile DataFrames with the engine, so they live above it in
:mod:`streamdq.learning` and resolve on first use: importing this package imports no engine and
starts no Spark session.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from streamdq.autovalidate.avh import LearnedConstraint, Program, Violation, learn_from_profiles

if TYPE_CHECKING:
    from streamdq.learning import judge, learn, profile_frames


def __getattr__(name: str) -> Any:
    if name in ("judge", "learn", "profile_frames"):  # above the engine, resolved on first use
        return getattr(importlib.import_module("streamdq.learning"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "judge",
    "learn",
    "learn_from_profiles",
    "profile_frames",
    "Program",
    "LearnedConstraint",
    "Violation",
]
