"""Variance of a numeric column: Population variance m2 / n.

Computed from count, sum and var_pop only (see ``moments.py``): merges are exact up to
floating-point rounding; no non-NULL value in scope -> Failure (empty).
"""

from __future__ import annotations

from dataclasses import dataclass

from streamdq.analyzers.basic_states import MomentsState
from streamdq.analyzers.moments import MomentsAnalyzer


@dataclass(frozen=True)
class Variance(MomentsAnalyzer):
    """Population variance m2 / n.

    Examples
    --------
    A batch's state comes from the scan's (count, sum, var_pop); [1, 2, 3] and [4, 5, 6]:

    >>> v = Variance("x")
    >>> round(v.metric(v.state_from([3, 6.0, 2 / 3], 0).merge(v.state_from([3, 15.0, 2 / 3], 0))).value, 12)
    2.916666666667
    """

    NAME = "Variance"
    ORDER = 2

    def statistic(self, state: MomentsState) -> float:
        return state.m2 / state.n
