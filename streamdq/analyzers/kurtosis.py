"""Kurtosis of a numeric column: Excess kurtosis n * m4 / m2^2 - 3; 0.0 when m2 == 0 (a constant column; Spark's F.kurtosis gives NULL there).

Computed from count, sum, var_pop, skewness and kurtosis (see ``moments.py``): merges are exact up to
floating-point rounding; no non-NULL value in scope -> Failure (empty).
"""

from __future__ import annotations

from dataclasses import dataclass

from streamdq.analyzers.base import register_analyzer
from streamdq.analyzers.basic_states import MomentsState
from streamdq.analyzers.moments import MomentsAnalyzer


@register_analyzer
@dataclass(frozen=True)
class Kurtosis(MomentsAnalyzer):
    """Excess kurtosis n * m4 / m2^2 - 3; 0.0 when m2 == 0 (a constant column; Spark's F.kurtosis gives NULL there)."""

    NAME = "Kurtosis"
    ORDER = 4

    def statistic(self, state: MomentsState) -> float:
        return 0.0 if state.m2 == 0.0 else state.n * state.m4 / (state.m2 * state.m2) - 3.0
