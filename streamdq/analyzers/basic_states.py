"""Exact numeric states shared by the scan-shareable analyzers.

All are JSON-serialized frozen dataclasses (see ``state.JsonState``); all merges are exact
(integer counts, or Chan et al.'s pairwise update for central moments, which is exact up
to floating-point rounding).

Non-finite values merge deterministically, whatever the merge order (docs/non-finite.md).
The analyzers keep NaN and infinities out of these states (``numeric.finite_value``), so
they appear only through overflow or states built by hand, and then:

* ``SumState`` / ``RatioOfSumsState`` add as IEEE 754 does (commutative; NaN absorbs,
  +inf + -inf = NaN);
* ``MinState`` / ``MaxState`` order NaN above +Infinity, as Spark does: the max of a set
  holding NaN is NaN, the min is NaN only when every value is; +0.0 and -0.0 are equal, the
  max keeps +0.0 and the min -0.0;
* ``MomentsState`` / ``CoMomentsState``: a state whose moments are not all finite is
  *poisoned*: its means and moment sums are all NaN (count kept), and merging with a
  poisoned state gives a poisoned state.
"""

from __future__ import annotations

import math
from abc import abstractmethod
from dataclasses import dataclass
from typing import Self

from streamdq.analyzers.state import JsonState
from streamdq.errors import InvalidArgument


def _max(a: float, b: float) -> float:
    """Spark's max: NaN above everything; of +0.0 and -0.0, +0.0 (order-free)."""
    if math.isnan(a) or math.isnan(b):
        return math.nan
    if a == b:
        return a if math.copysign(1.0, a) > 0 else b
    return a if a > b else b


def _min(a: float, b: float) -> float:
    """Spark's min: NaN only when both are NaN; of +0.0 and -0.0, -0.0 (order-free)."""
    if math.isnan(a):
        return b
    if math.isnan(b):
        return a
    if a == b:
        return a if math.copysign(1.0, a) < 0 else b
    return a if a < b else b


def _all_finite(*values: float) -> bool:
    return all(math.isfinite(v) for v in values)


@dataclass(frozen=True)
class NumMatches(JsonState):
    """A count of rows (Size, ZerosCount).

    Examples
    --------
    >>> NumMatches(3).merge(NumMatches(4)).merge(NumMatches.empty())
    NumMatches(matches=7)
    """

    TYPE_TAG = "NumMatches"
    matches: int = 0

    @classmethod
    def empty(cls) -> Self:
        return cls(0)

    def merge(self, other: Self) -> Self:
        return type(self)(self.matches + other.matches)


@dataclass(frozen=True)
class NumMatchesAndCount(JsonState):
    """Matching rows over rows in scope (Completeness, Compliance, PatternMatch).

    ``evaluated`` counts rows where the predicate was not NULL; Compliance fails when it
    is 0 although rows were in scope (every predicate value NULL).

    Examples
    --------
    >>> NumMatchesAndCount(3, 4, 4).merge(NumMatchesAndCount(1, 2, 1))
    NumMatchesAndCount(matches=4, count=6, evaluated=5)
    """

    TYPE_TAG = "NumMatchesAndCount"
    matches: int = 0
    count: int = 0
    evaluated: int = 0

    @classmethod
    def empty(cls) -> Self:
        return cls(0, 0, 0)

    def merge(self, other: Self) -> Self:
        return type(self)(
            self.matches + other.matches, self.count + other.count, self.evaluated + other.evaluated
        )


@dataclass(frozen=True)
class SumState(JsonState):
    """Sum of non-NULL values and how many there were (Sum; empty when n == 0).

    Examples
    --------
    >>> SumState(6.0, 3).merge(SumState(10.0, 1))
    SumState(total=16.0, n=4)
    >>> SumState.empty().is_empty
    True
    """

    TYPE_TAG = "Sum"
    total: float = 0.0
    n: int = 0

    @classmethod
    def empty(cls) -> Self:
        return cls(0.0, 0)

    def merge(self, other: Self) -> Self:
        return type(self)(self.total + other.total, self.n + other.n)


@dataclass(frozen=True)
class ExtremeState(JsonState):
    """The extreme of the non-NULL values seen (None = no value seen): ``MinState``, ``MaxState``.

    The two differ only in ``pick``, the Spark ordering of two values (module doc), so the
    merge is written once: a state that saw no value is the identity, else ``pick`` decides.
    Each keeps its own tag ("Min", "Max"): a Min and a Max of equal value are not equal.
    """

    value: float | None = None

    @staticmethod
    @abstractmethod
    def pick(a: float, b: float) -> float:
        """The extreme of two values (Spark's ordering: NaN, signed zeros)."""

    @classmethod
    def empty(cls) -> Self:
        return cls(None)

    def merge(self, other: Self) -> Self:
        if self.value is None:
            return other
        if other.value is None:
            return self
        return type(self)(self.pick(self.value, other.value))


@dataclass(frozen=True)
class MinState(ExtremeState):
    """Minimum of non-NULL values (Minimum, MinLength); NaN only when every value is.

    >>> MinState(3.0).merge(MinState(-1.5)).merge(MinState.empty()).value
    -1.5
    """

    TYPE_TAG = "Min"
    pick = staticmethod(_min)


@dataclass(frozen=True)
class MaxState(ExtremeState):
    """Maximum of non-NULL values (Maximum, MaxLength); NaN as soon as one value is.

    >>> MaxState(3.0).merge(MaxState(float("nan"))).value
    nan
    """

    TYPE_TAG = "Max"
    pick = staticmethod(_max)


@dataclass(frozen=True)
class MomentsState(JsonState):
    """Count, mean and central moment sums m2..m4 (StdDev, Variance, Skewness, Kurtosis).

    ``order`` (2, 3 or 4) is the highest central moment the state carries: StandardDeviation
    and Variance ask for m2 only, Skewness for m2 and m3, Kurtosis for all three, so the
    fused scan computes only the Spark aggregates each needs. Moments above ``order`` are
    stored as 0.0 and mean nothing. Merging keeps the smaller order (associative and
    commutative); the state of zero rows has order 4 and is the identity of every order.
    Merged with the pairwise formulas of Chan, Golub and LeVeque / Pébay (2008).

    Format v2 adds ``order``; v1 payloads (no ``order``) carry all four moments and load
    with order 4.

    Examples
    --------
    Merged pairwise, the moments of [1, 2] and [3, 4] are those of [1, 2, 3, 4]; a state of
    order 2 (what StandardDeviation stores) keeps the merge at order 2:

    >>> a, b = MomentsState(2, 1.5, 0.5, 0.0, 0.125), MomentsState(2, 3.5, 0.5, 0.0, 0.125)
    >>> a.merge(b)
    MomentsState(n=4, mean=2.5, m2=5.0, m3=0.0, m4=10.25, order=4)
    >>> a.merge(MomentsState(2, 3.5, 0.5, order=2)).order
    2
    """

    TYPE_TAG = "Moments"
    FORMAT_VERSION = 2
    n: int = 0
    mean: float = 0.0
    m2: float = 0.0
    m3: float = 0.0
    m4: float = 0.0
    order: int = 4

    def __post_init__(self) -> None:
        if self.order not in (2, 3, 4):
            raise InvalidArgument(f"MomentsState order must be 2, 3 or 4, got {self.order!r}")
        if self.n == 0 and self.order != 4:
            object.__setattr__(self, "order", 4)  # zero rows: every moment is known (0)
        if self.order < 3 and self.m3 != 0.0:
            object.__setattr__(self, "m3", 0.0)
        if self.order < 4 and self.m4 != 0.0:
            object.__setattr__(self, "m4", 0.0)
        if self.n and not _all_finite(self.mean, self.m2, self.m3, self.m4):
            for name in ("mean", "m2", "m3", "m4")[: self.order]:  # poisoned (module doc)
                object.__setattr__(self, name, math.nan)

    @property
    def poisoned(self) -> bool:
        """True when the moments are not finite (overflow or a non-finite input)."""
        return self.n > 0 and math.isnan(self.mean)

    @classmethod
    def empty(cls) -> Self:
        return cls()

    def merge(self, other: Self) -> Self:
        if other.n == 0:
            return self
        if self.n == 0:
            return other
        order = min(self.order, other.order)
        na, nb = self.n, other.n
        n = na + nb
        if self.poisoned or other.poisoned:
            return type(self)(n, math.nan, math.nan, math.nan, math.nan, order)
        delta = other.mean - self.mean
        d_n = delta / n
        mean = self.mean + d_n * nb
        m2 = self.m2 + other.m2 + delta * d_n * na * nb
        m3 = m4 = 0.0
        if order >= 3:
            m3 = (
                self.m3
                + other.m3
                + delta * d_n * d_n * na * nb * (na - nb)
                + 3.0 * d_n * (na * other.m2 - nb * self.m2)
            )
        if order >= 4:
            m4 = (
                self.m4
                + other.m4
                + delta * d_n**3 * na * nb * (na * na - na * nb + nb * nb)
                + 6.0 * d_n * d_n * (na * na * other.m2 + nb * nb * self.m2)
                + 4.0 * d_n * (na * other.m3 - nb * self.m3)
            )
        return type(self)(n, mean, m2, m3, m4, order)

    @classmethod
    def from_spark(
        cls,
        n: int | None,
        mean: float | None,
        var_pop: float | None,
        skew: float | None,
        kurt: float | None,
        order: int = 4,
    ) -> Self:
        """Reconstruct central moment sums from Spark's count/mean/var_pop/skewness/kurtosis.

        ``skew`` is read only when ``order >= 3``, ``kurt`` only when ``order == 4``.
        Spark returns NULL skewness/kurtosis for a constant column; then m2 == 0 and the
        higher moments are 0 as well.
        """
        if not n:
            return cls()
        m2 = (var_pop or 0.0) * n
        if m2 <= 0.0 or (order >= 3 and skew is None) or (order >= 4 and kurt is None):
            return cls(int(n), float(mean or 0.0), max(m2, 0.0), 0.0, 0.0, order)
        m3 = skew * m2**1.5 / math.sqrt(n) if order >= 3 and skew is not None else 0.0
        m4 = (kurt + 3.0) * m2 * m2 / n if order >= 4 and kurt is not None else 0.0
        return cls(int(n), float(mean or 0.0), m2, m3, m4, order)


@dataclass(frozen=True)
class CoMomentsState(JsonState):
    """Pearson correlation state over rows where both values are non-NULL.

    Examples
    --------
    The pairs (1, 2), (2, 4) and (3, 6) lie on a line, in two batches:

    >>> first = CoMomentsState(2, 1.5, 3.0, 1.0, 0.5, 2.0)  # (1, 2), (2, 4)
    >>> second = CoMomentsState(1, 3.0, 6.0, 0.0, 0.0, 0.0)  # (3, 6)
    >>> first.merge(second).correlation()
    1.0
    """

    TYPE_TAG = "CoMoments"
    n: int = 0
    x_mean: float = 0.0
    y_mean: float = 0.0
    ck: float = 0.0
    x_mk: float = 0.0
    y_mk: float = 0.0

    def __post_init__(self) -> None:
        if self.n and not _all_finite(self.x_mean, self.y_mean, self.ck, self.x_mk, self.y_mk):
            for name in ("x_mean", "y_mean", "ck", "x_mk", "y_mk"):  # poisoned (module doc)
                object.__setattr__(self, name, math.nan)

    @property
    def poisoned(self) -> bool:
        """True when the co-moments are not finite (overflow or a non-finite input)."""
        return self.n > 0 and math.isnan(self.x_mean)

    @classmethod
    def empty(cls) -> Self:
        return cls()

    def merge(self, other: Self) -> Self:
        if other.n == 0:
            return self
        if self.n == 0:
            return other
        n1, n2 = self.n, other.n
        n = n1 + n2
        if self.poisoned or other.poisoned:
            return type(self)(n, math.nan, math.nan, math.nan, math.nan, math.nan)
        dx = other.x_mean - self.x_mean
        dy = other.y_mean - self.y_mean
        return type(self)(
            n,
            self.x_mean + dx * n2 / n,
            self.y_mean + dy * n2 / n,
            self.ck + other.ck + dx * dy * n1 * n2 / n,
            self.x_mk + other.x_mk + dx * dx * n1 * n2 / n,
            self.y_mk + other.y_mk + dy * dy * n1 * n2 / n,
        )

    def correlation(self) -> float:
        denom = math.sqrt(self.x_mk * self.y_mk)
        if denom == 0.0:
            return math.nan
        return self.ck / denom
