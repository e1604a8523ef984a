"""Auto-validation by history (AVH, KDD 2023): constraints learned from a column's past batches.

* ``learner``: ``learn(history, column, fpr)``, ``learn_from_profiles``, ``judge``, the Spark
  profiling of batches (``profile_frames``, ``profile_steps``) and the candidate pricing.
* ``program``: ``Program``, the learned constraints as a pure value (judged on a profile, no Spark).
* ``profile``, ``features``, ``distances``: a batch's column profile and the metrics read off it.
* ``bounds``, ``stationarity``, ``select``: the statistics of a candidate and the selection.
* ``corruptions``, ``reconstruct``: the synthetic issues recall is estimated on.
* ``calendar``: days off (``auto_validate.holidays``).
* ``monitor``: ``AutoValidateMonitor``, the streaming monitor of the run config's ``auto_validate:``.
"""

from __future__ import annotations

from streamdq.autovalidate.avh.learner import judge, learn, learn_from_profiles, profile_frames
from streamdq.autovalidate.avh.program import LearnedConstraint, Program, Violation

__all__ = ["judge", "learn", "learn_from_profiles", "profile_frames", "Program", "LearnedConstraint", "Violation"]
