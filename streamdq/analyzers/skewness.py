"""Skewness of a numeric column: Population skewness sqrt(n) * m3 / m2^1.5; 0.0 when m2 == 0 (a constant column; Spark's F.skewness gives NULL there).

Computed from count, sum, var_pop and skewness (see ``moments.py``): merges are exact up to
floating-point rounding; no non-NULL value in scope -> Failure (empty).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from streamdq.analyzers.basic_states import MomentsState
from streamdq.analyzers.moments import MomentsAnalyzer


@dataclass(frozen=True)
class Skewness(MomentsAnalyzer):
    """Population skewness sqrt(n) * m3 / m2^1.5; 0.0 when m2 == 0 (a constant column; Spark's F.skewness gives NULL there).

    Examples
    --------
    A batch's state comes from the scan's (count, sum, var_pop, skewness); [1, 2, 3] and
    [4, 5, 6] merge into the symmetric 1..6:

    >>> s = Skewness("x")
    >>> merged = s.state_from([3, 6.0, 2 / 3, 0.0], 0).merge(s.state_from([3, 15.0, 2 / 3, 0.0], 0))
    >>> abs(s.metric(merged).value) < 1e-12
    True
    """

    NAME = "Skewness"
    ORDER = 3

    def statistic(self, state: MomentsState) -> float:
        return 0.0 if state.m2 == 0.0 else math.sqrt(state.n) * state.m3 / state.m2**1.5
