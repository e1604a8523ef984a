"""Rows that match, counted or as a share of the rows in scope: the pieces the counting
analyzers share.

**MatchCount** (Size, ZerosCount, NonFinite): the scan counts the rows in scope that match
(Size: every row in scope); the state is ``NumMatches``, merged by addition; the metric is
the count as a float, and zero rows give 0.0, a success (as in Deequ).

**MatchRatio** (Completeness, PatternMatch, Compliance): the scan counts the rows in scope
that match (its own condition, never NULL: a NULL value or predicate is no match) and the
rows in scope (``rows_in_scope``); the state is ``NumMatchesAndCount``, merged by addition,
so the ratio of merged states is the ratio over all their rows (never a mean of ratios). No
row in scope (empty input, or a ``where`` that keeps none) -> Failure (empty); rows in scope
and none matching -> 0.0. Compliance adds a third count, the rows where its predicate is not
NULL, and fails when there is none (``evaluated``).

Each subclass declares only its counts (``row_aggregations``).

>>> from streamdq.analyzers.completeness import Completeness
>>> c = Completeness("email")
>>> batches = [c.state_from([2, 2], 0), c.state_from([0, 0], 0), c.state_from([1, 2], 0)]
>>> total = c.empty_state()
>>> for state in batches:
...     total = total.merge(state)
>>> total, c.metric(total).value
(NumMatchesAndCount(matches=3, count=4, evaluated=4), 0.75)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from streamdq.analyzers.base import ScanShareableAnalyzer
from streamdq.analyzers.basic_states import NumMatches, NumMatchesAndCount
from streamdq.analyzers.metric import Metric
from streamdq.analyzers.state import State


@dataclass(frozen=True)
class MatchCount(ScanShareableAnalyzer):
    """The number of matching rows in scope, from the scan's one count.

    Examples
    --------
    >>> from streamdq.analyzers.zeros_count import ZerosCount
    >>> z = ZerosCount("quantity")
    >>> z.metric(z.state_from([None], 0)).value, z.metric(z.empty_state()).failure
    (0.0, None)
    """

    def state_from(self, row: Sequence[Any], offset: int) -> State:
        return NumMatches(int(row[offset] or 0))

    def empty_state(self) -> State:
        return NumMatches.empty()

    def metric(self, state: State) -> Metric:
        assert isinstance(state, NumMatches)
        return self.ok(float(state.matches))


@dataclass(frozen=True)
class MatchRatio(ScanShareableAnalyzer):
    """Matching rows / rows in scope, from the scan's (matches, rows in scope) counts.

    Examples
    --------
    >>> from streamdq.analyzers.pattern_match import PatternMatch
    >>> p = PatternMatch("code", "^[A-Z]{3}$")
    >>> p.metric(p.state_from([0, 5], 0)).value, p.metric(p.state_from([0, 0], 0)).empty
    (0.0, True)
    """

    def state_from(self, row: Sequence[Any], offset: int) -> State:
        matches, count = int(row[offset] or 0), int(row[offset + 1] or 0)
        return NumMatchesAndCount(matches, count, count)  # a match is never NULL: all evaluated

    def empty_state(self) -> State:
        return NumMatchesAndCount.empty()

    def metric(self, state: State) -> Metric:
        assert isinstance(state, NumMatchesAndCount)
        if state.count == 0:
            return self.empty_failure()
        return self.ok(state.matches / state.count)
