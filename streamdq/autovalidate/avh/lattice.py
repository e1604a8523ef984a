"""The value lattice of a numeric column: the grid its recorded values sit on (issue 22).

Many numeric feeds record a quantity on a fixed grid finer than it varies: a temperature read in
tenths of a degree Celsius and published in Fahrenheit sits on ``32 + 0.18 m``, a wind speed read
in knots and published in miles per hour on ``1.15078 m``, a wind direction on multiples of 10
degrees. A typing or parsing error (a digit dropped, inserted or changed, a value from another
column) lands off that grid, where no moment, quantile or distance of a drifting small batch sees
it. The lattice is ``offset + m * step`` (``m`` an integer), found as the approximate greatest
common divisor of the gaps between the history's distinct values (``find_lattice``).

Values are read from the profile's KLL sketch (``sketch_values``): a sketch keeps real values of the
batch (all of them up to ``KLL_K`` values, a weighted sample of them above), so no engine change is
needed. ``history_lattice`` accepts a lattice only when the history itself shows it structural:

* at least ``MIN_DISTINCT`` distinct values over at least ``MIN_BATCHES`` batches that have values
  (a batch whose column is all NULL is skipped), none of them making up ``TIED_SHARE`` of all values
  (a capped column, visibility at 10 miles on most hours, moves between a few reported values whose
  spacing changes in fog: not a grid; the order statistics' ``mostly_tied`` rule of the learner);
* leave-one-out: every history batch lies on the lattice learned from the other batches (a grid
  that one batch refines is not the column's grid).

The learner then prices "values off the lattice" as a rare event (``bounds.binomial_count``: no
such value in the history's values; at the 0.001 target a 72-row batch may hold one).

>>> lat = find_lattice([32 + 0.18 * m for m in (40, 43, 47, 52, 60)])
>>> round(lat.step, 6), lat.off_count([39.2, 39.02]), lat.off_count([39.3])
(0.18, 0.0, 1.0)
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from streamdq.autovalidate.avh.profile import CATEGORICAL, ColumnProfile

MIN_DISTINCT = 5  # distinct values a lattice is inferred from, at least
TIED_SHARE = 0.5  # a value holding this share of the history's values: a capped column, no lattice
RELATIVE_TOL = 1e-9  # of the values' magnitude: float round-off of decimal values is ~1e-15
MAX_POINTS = 1e6  # a step that splits the history's range into more points is no grid at all
MIN_BATCHES = 4  # history batches with values, at least (the learner's MIN_HISTORY)
METRIC = "off_lattice"  # the share of a batch's values off the lattice (a learner metric)


@dataclass(frozen=True)
class Lattice:
    """``offset + m * step`` for integers ``m``; a value within ``tol`` of a point is on it."""

    step: float
    offset: float
    tol: float

    def off_count(self, values: Iterable[float], weights: Iterable[float] | None = None) -> float:
        """The (weighted) number of finite ``values`` off the lattice."""
        v = np.asarray(list(values), dtype=float)
        w = np.ones(len(v)) if weights is None else np.asarray(list(weights), dtype=float)
        keep = np.isfinite(v)
        v, w = v[keep], w[keep]
        if not len(v):
            return 0.0
        m = (v - self.offset) / self.step
        return float(np.sum(w[np.abs(m - np.round(m)) * self.step > self.tol]))

    def to_list(self) -> list[float]:
        return [self.step, self.offset, self.tol]

    @classmethod
    def from_list(cls, data: Sequence[float]) -> Lattice:
        return cls(float(data[0]), float(data[1]), float(data[2]))


def _gcd(a: float, b: float, tol: float) -> float:
    """Approximate greatest common divisor of two non-negative floats (Euclid, remainders within
    ``tol`` of 0 or of the divisor taken as 0)."""
    while b > tol:
        r = math.fmod(a, b)
        if r > b - tol:
            r = 0.0
        a, b = b, r
    return a


def find_lattice(values: Iterable[float], min_distinct: int = MIN_DISTINCT) -> Lattice | None:
    """The coarsest lattice holding every finite value, or None (fewer than ``min_distinct``
    distinct values, or no step coarser than the values' round-off).

    >>> find_lattice([0.0, 10.0, 20.0, 70.0, 350.0]).step
    10.0
    >>> find_lattice([1.3, 2.71, 5.123, 8.0001, 9.5]) is None
    True
    """
    u = np.unique(np.asarray([v for v in values if math.isfinite(v)], dtype=float))
    if len(u) < min_distinct:
        return None
    tol = RELATIVE_TOL * max(1.0, float(np.max(np.abs(u))))
    gaps = u[1:] - u[0]
    step = float(gaps[0])
    for gap in gaps[1:]:
        step = _gcd(float(gap), step, tol)
        if step <= 1e3 * tol:
            return None
    if (u[-1] - u[0]) / step > MAX_POINTS:
        return None
    lattice = Lattice(step, float(u[0]), 10 * tol)
    return lattice if lattice.off_count(u) == 0 else None


def sketch_values(profile: ColumnProfile) -> tuple[list[float], list[float]]:
    """The values a numeric profile's KLL sketch keeps and their weights (each value of the batch
    once while the sketch is exact, a weighted sample above ``KLL_K`` values); empty for a
    categorical profile or a batch without values."""
    if profile.kind == CATEGORICAL:
        return [], []
    sketch = profile.kll_sketch()
    if sketch is None or sketch.is_empty():
        return [], []
    items = list(sketch)
    return [float(v) for v, _ in items], [float(w) for _, w in items]


def off_lattice_share(profile: ColumnProfile, lattice: Lattice) -> float | None:
    """The share of a batch's (non-null) values off ``lattice``, from its sketch; None without
    values."""
    values, weights = sketch_values(profile)
    total = sum(weights)
    if total <= 0:
        return None
    return lattice.off_count(values, weights) / total


def history_lattice(history: Sequence[ColumnProfile], tied_share: float = TIED_SHARE) -> Lattice | None:
    """The lattice of a numeric column's history (module docstring: enough distinct values, no
    value holding ``tied_share`` of them, every batch on the lattice of the others), or None."""
    # a batch without values (the column all NULL that day: a gust column on a calm day) says
    # nothing about the grid; the others must still be enough to leave one out
    per_batch = [vw for vw in (sketch_values(p) for p in history) if vw[0]]
    if len(per_batch) < MIN_BATCHES:
        return None
    counts: dict[float, float] = {}
    for values, weights in per_batch:
        for v, w in zip(values, weights, strict=True):
            counts[v] = counts.get(v, 0.0) + w
    if max(counts.values()) >= tied_share * sum(counts.values()):
        return None
    lattice = find_lattice(counts)
    if lattice is None:
        return None
    for i, (values, _) in enumerate(per_batch):
        others = find_lattice(v for j, (vs, _) in enumerate(per_batch) if j != i for v in vs)
        if others is None or others.off_count(values) > 0:
            return None
    return lattice
