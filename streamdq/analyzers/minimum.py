"""Minimum of a numeric column over the finite non-NULL values in scope.

Runs in the fused scan as ``min(double)``; states (``MinState``) merge by taking the min.
NaN and +-Infinity are skipped like NULL (``numeric.finite_value``). No value in scope
(empty input, all NULL, or all filtered) -> Failure (empty). The shared piece of the
extremes is ``extreme.ExtremeAnalyzer``.
"""

from __future__ import annotations

from dataclasses import dataclass

from streamdq.analyzers.basic_states import MinState
from streamdq.analyzers.extreme import ValueExtreme


@dataclass(frozen=True)
class Minimum(ValueExtreme):
    """Smallest non-NULL value in scope, as a float. Numeric columns only.

    Examples
    --------
    The state of each batch is its ``min`` (one value of the scan's row); states merge:

    >>> m = Minimum("price")
    >>> day1, day2 = m.state_from([12.5], 0), m.state_from([3.0], 0)
    >>> m.metric(day1.merge(day2)).value
    3.0
    >>> m.metric(m.empty_state()).failure
    'Empty state for analyzer: no non-null input in scope'
    """

    NAME = "Minimum"
    AGGREGATE = "min"
    STATE = MinState
