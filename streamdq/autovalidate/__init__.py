"""Constraints that write themselves, three features in three sub-packages (docs/autovalidate.md):

* :mod:`streamdq.autovalidate.suggest`: constraint suggestion from one table profile (Deequ's
  rules, pure Python; docs/suggest.md).
* :mod:`streamdq.autovalidate.avh`: auto-validation by history (AVH, KDD 2023): a ``Program`` of
  constraints learned from a column's past batches, and its streaming monitor (``auto_validate:``).
* :mod:`streamdq.autovalidate.quality`: the table-level quality score and its streaming monitor
  (``quality_score:``; docs/quality_score.md).

The three never import each other. This package re-exports AVH's public calls:
``learn(history, column, fpr=0.001, seed=None) -> Program`` and ``judge(program, batch)``
(a ``Program`` itself is a pure value that never runs Spark); importing this package starts no
Spark session (the engine is used only when profiles are computed).
"""

from __future__ import annotations

from streamdq.autovalidate.avh import (
    LearnedConstraint,
    Program,
    Violation,
    judge,
    learn,
    learn_from_profiles,
    profile_frames,
)

__all__ = ["judge", "learn", "learn_from_profiles", "profile_frames", "Program", "LearnedConstraint", "Violation"]
