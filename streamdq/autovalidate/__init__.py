"""Constraints that write themselves: suggestion from a profile, auto-validation by history
(AVH, KDD 2023) and the table-level quality score. See docs/autovalidate.md.

``learn(history, column, fpr=0.001, seed=None) -> Program`` and ``judge(program, batch)`` live in
``avh.py`` (a ``Program`` itself is a pure value that never runs Spark); importing
this package starts no Spark session (the engine is used only when profiles are computed).
"""

from __future__ import annotations

from streamdq.autovalidate.avh import judge, learn, learn_from_profiles, profile_frames
from streamdq.autovalidate.program import LearnedConstraint, Program, Violation

__all__ = ["judge", "learn", "learn_from_profiles", "profile_frames", "Program", "LearnedConstraint", "Violation"]
