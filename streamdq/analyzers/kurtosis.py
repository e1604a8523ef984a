"""Kurtosis of a numeric column: Excess kurtosis n * m4 / m2^2 - 3; 0.0 when m2 == 0 (a constant column; Spark's F.kurtosis gives NULL there).

Computed from count, sum, var_pop, skewness and kurtosis (see ``moments.py``): merges are exact up to
floating-point rounding; no non-NULL value in scope -> Failure (empty).
"""

from __future__ import annotations

from dataclasses import dataclass

from streamdq.analyzers.basic_states import MomentsState
from streamdq.analyzers.moments import MomentsAnalyzer


@dataclass(frozen=True)
class Kurtosis(MomentsAnalyzer):
    """Excess kurtosis n * m4 / m2^2 - 3; 0.0 when m2 == 0 (a constant column; Spark's F.kurtosis gives NULL there).

    Examples
    --------
    A batch's state comes from the scan's (count, sum, var_pop, skewness, kurtosis); [1, 2, 3]
    and [4, 5, 6] (each with excess kurtosis -1.5) merge into 1..6 (SEMANTICS.md: -1.26857...):

    >>> k = Kurtosis("x")
    >>> merged = k.state_from([3, 6.0, 2 / 3, 0.0, -1.5], 0).merge(k.state_from([3, 15.0, 2 / 3, 0.0, -1.5], 0))
    >>> round(k.metric(merged).value, 12)
    -1.268571428571
    """

    NAME = "Kurtosis"
    ORDER = 4

    def statistic(self, state: MomentsState) -> float:
        return 0.0 if state.m2 == 0.0 else state.n * state.m4 / (state.m2 * state.m2) - 3.0
