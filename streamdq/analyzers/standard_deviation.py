"""StandardDeviation of a numeric column: Population standard deviation sqrt(m2 / n).

Computed from count, sum and var_pop only (see ``moments.py``): merges are exact up to
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
class StandardDeviation(MomentsAnalyzer):
    """Population standard deviation sqrt(m2 / n)."""

    NAME = "StandardDeviation"
    ORDER = 2

    def statistic(self, state: MomentsState) -> float:
        return math.sqrt(state.m2 / state.n)
