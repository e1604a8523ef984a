"""StandardDeviation of a numeric column: Population standard deviation sqrt(m2 / n).

Computed from count, sum and var_pop only (see ``moments.py``): merges are exact up to
floating-point rounding; no non-NULL value in scope -> Failure (empty).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from streamdq.analyzers.basic_states import MomentsState
from streamdq.analyzers.moments import MomentsAnalyzer


@dataclass(frozen=True)
class StandardDeviation(MomentsAnalyzer):
    """Population standard deviation sqrt(m2 / n).

    Examples
    --------
    A batch's state comes from the scan's (count, sum, var_pop); two batches [1, 2, 3] and
    [4, 5, 6] merge into the population standard deviation of 1..6 (SEMANTICS.md):

    >>> s = StandardDeviation("x")
    >>> first, second = s.state_from([3, 6.0, 2 / 3], 0), s.state_from([3, 15.0, 2 / 3], 0)
    >>> round(s.metric(first.merge(second)).value, 12)
    1.70782512766
    """

    NAME = "StandardDeviation"
    ORDER = 2

    def statistic(self, state: MomentsState) -> float:
        return math.sqrt(state.m2 / state.n)
