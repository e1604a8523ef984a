"""Skewness of a numeric column: Population skewness sqrt(n) * m3 / m2^1.5; 0.0 when m2 == 0 (a constant column; Spark's F.skewness gives NULL there).

Computed from count, sum, var_pop and skewness (see ``moments.py``): merges are exact up to
floating-point rounding; no non-NULL value in scope -> Failure (empty).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from streamdq.analyzers.base import register_analyzer
from streamdq.analyzers.basic_states import MomentsState
from streamdq.analyzers.moments import MomentsAnalyzer


@register_analyzer
@dataclass(frozen=True)
class Skewness(MomentsAnalyzer):
    """Population skewness sqrt(n) * m3 / m2^1.5; 0.0 when m2 == 0 (a constant column; Spark's F.skewness gives NULL there)."""

    NAME = "Skewness"
    ORDER = 3

    def statistic(self, state: MomentsState) -> float:
        return 0.0 if state.m2 == 0.0 else math.sqrt(state.n) * state.m3 / state.m2**1.5
