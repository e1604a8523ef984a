"""Auto-validation by history (AVH, KDD 2023): constraints learned from a column's past batches.

* ``learner``: ``learn_from_profiles`` (AVH's selection on profiles, pure) and the candidate
  pricing.
* ``program``: ``Program``, the learned constraints as a pure value (judged on a profile, no Spark).
* ``profiling``: profiles of frames through an analysis handed in (the engine's), and the
  corrupted copies of a batch.
* ``profile``, ``features``, ``distances``: a batch's column profile and the metrics read off it.
* ``bounds``, ``stationarity``, ``select``: the statistics of a candidate and the selection.
* ``corruptions``, ``reconstruct``: the synthetic issues recall is estimated on.
* ``calendar``: days off (``auto_validate.holidays``).
* ``monitor``: ``AutoValidateMonitor``, the streaming monitor of the run config's ``auto_validate:``.

Nothing here imports the engine. ``learn``, ``judge`` and ``profile_frames``, which start from
DataFrames and so need the engine's analysis, live above it in :mod:`streamdq.learning`; the names
here resolve to those on first use (as ``streamdq.checks.verify`` does).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from streamdq.autovalidate.avh.learner import learn_from_profiles
from streamdq.autovalidate.avh.program import LearnedConstraint, Program, Violation

if TYPE_CHECKING:
    from streamdq.learning import judge, learn, profile_frames

ENGINE_SIDE = ("judge", "learn", "profile_frames")


def __getattr__(name: str) -> Any:
    if name in ENGINE_SIDE:  # above the engine: streamdq.learning, resolved on first use
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
