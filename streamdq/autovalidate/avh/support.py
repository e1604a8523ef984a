"""The value support of a numeric column: limits its history never crossed (issue 22).

A digit dropped from, inserted into or changed in a number moves it by about a power of ten (a
relative humidity of ``96.17`` loses its ``9`` and reads ``6.17``; a pressure of ``1013.2`` reads
``113.2``), or past a limit the column never crosses (a visibility of ``10`` miles, the cap of the
scale, becomes ``70`` or ``16``). Where the column is recorded at its decimal resolution
(``humid`` at 0.01, ``pressure`` at 0.1) the edited value stays on the value grid
(``lattice.py`` sees nothing), and in a batch whose values drift from day to day no moment,
quantile or distance moves enough for the 0.001 target. What does not drift is where the values
can be: ``history_support`` learns two kinds of limit from the history's pooled values:

* a **cap** (a **floor**): the history's largest (smallest) value, when at least ``TIED_SHARE``
  of the batches that have values reached exactly it (a visibility of 10 miles on most days, a
  route network's longest and shortest flight): nothing ever went past it;
* a **decade**: the power of ten above the history's largest positive value (below its smallest
  positive value), when that value sits at least a factor ``MARGIN`` inside it (a humidity that
  stayed at or above 15 in every batch has the decade limit 10: a value below it has lost a digit
  or a leading digit). Not learned for a column with one value on ``TIED_SHARE`` of all values (a
  capped column moves between a few reported values; visibility drops from 10 miles to a quarter
  mile in fog), nor on the side of a non-positive extreme (values around zero have no decade).

A cap (floor) is the tighter limit where both exist. The learner prices "values outside the
support" as a rare event, as it prices values off the lattice (``bounds.binomial_count``: none in
the history; at the 0.001 target a 72-row batch may hold one). Values are read from the profile's
KLL sketch (``lattice.sketch_values``: exact up to ``KLL_K`` values, a weighted sample above), and
the sketch's exact extremes count one value each when the sample missed them: no engine change.

>>> s = Support(lower=10.0, upper=100.0)
>>> s.off_count([96.17, 6.17, 55.0, 100.0, 961.7])
2.0
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from streamdq.autovalidate.avh.lattice import MIN_BATCHES, TIED_SHARE, sketch_values
from streamdq.autovalidate.avh.profile import CATEGORICAL, ColumnProfile

# the history's positive extreme sits at least this factor inside the decade limit: a value past
# the limit is then more than this factor further out than anything in the history. Chosen on the
# tuned feed (``weather``, raw values of the whole year, bench/README.md ``## autovalidate``):
# without it (1.0) a humidity of 100 after a month below it and a pressure under 1000 hPa after a
# month above it were flagged; at 1.25, 1.5 and 2 only a fog day on visibility was (removed by
# the one-value rule), and the larger factor keeps the limit from more columns that come near a
# power of ten (at 2, half of humidity's deletions were lost)
MARGIN = 1.5
METRIC = "off_support"  # the share of a batch's values outside the support (a learner metric)


@dataclass(frozen=True)
class Support:
    """Values below ``lower`` or above ``upper`` are off the support (None: no limit that side)."""

    lower: float | None = None
    upper: float | None = None

    def off_count(self, values: Iterable[float], weights: Iterable[float] | None = None) -> float:
        """The (weighted) number of finite ``values`` outside the support."""
        v = np.asarray(list(values), dtype=float)
        w = np.ones(len(v)) if weights is None else np.asarray(list(weights), dtype=float)
        keep = np.isfinite(v)
        v, w = v[keep], w[keep]
        off = np.zeros(len(v), dtype=bool)
        if self.lower is not None:
            off |= v < self.lower
        if self.upper is not None:
            off |= v > self.upper
        return float(np.sum(w[off]))

    def to_list(self) -> list[float | None]:
        return [self.lower, self.upper]

    @classmethod
    def from_list(cls, data: Sequence[float | None]) -> Support:
        return cls(None if data[0] is None else float(data[0]), None if data[1] is None else float(data[1]))


def decade_below(smallest: float, margin: float = MARGIN) -> float | None:
    """The power of ten at or below a positive ``smallest`` value, when ``smallest`` is at least
    ``margin`` times it (else None; None for a value that is not positive).

    >>> decade_below(15.3), decade_below(12.0), decade_below(1001.2), decade_below(0.0)
    (10.0, None, None, None)
    """
    if not smallest > 0 or not math.isfinite(smallest):
        return None
    limit = 10.0 ** math.floor(math.log10(smallest))
    if limit > smallest:  # log10 round-off just below a power of ten
        limit /= 10.0
    return limit if smallest >= margin * limit else None


def decade_above(largest: float, margin: float = MARGIN) -> float | None:
    """The power of ten above a positive ``largest`` value, when it is at least ``margin`` times
    ``largest`` (else None; None for a value that is not positive).

    >>> decade_above(1042.1), decade_above(97.0), decade_above(100.0), decade_above(-3.0)
    (10000.0, None, 1000.0, None)
    """
    if not largest > 0 or not math.isfinite(largest):
        return None
    limit = 10.0 ** (math.floor(math.log10(largest)) + 1)
    if limit <= largest:  # log10 round-off just below a power of ten
        limit *= 10.0
    return limit if limit >= margin * largest else None


def history_support(
    history: Sequence[ColumnProfile], tied_share: float = TIED_SHARE, margin: float = MARGIN
) -> Support | None:
    """The support of a numeric column's history (module docstring), or None (a categorical
    column, fewer than ``MIN_BATCHES`` batches with values, or no limit on either side)."""
    per_batch = [vw for vw in (sketch_values(p) for p in history) if vw[0]]
    if len(per_batch) < MIN_BATCHES:
        return None
    extremes = [_extremes(p) for p in history]
    lows = [lo for lo, _ in extremes if lo is not None]
    highs = [hi for _, hi in extremes if hi is not None]
    top, bottom = max(highs), min(lows)
    cap = top if sum(h == top for h in highs) >= tied_share * len(per_batch) else None
    floor = bottom if sum(lo == bottom for lo in lows) >= tied_share * len(per_batch) else None
    counts: dict[float, float] = {}
    for values, weights in per_batch:
        for v, w in zip(values, weights, strict=True):
            counts[v] = counts.get(v, 0.0) + w
    tied = max(counts.values()) >= tied_share * sum(counts.values())
    upper = cap if cap is not None else (None if tied else decade_above(top, margin))
    lower = floor if floor is not None else (None if tied else decade_below(bottom, margin))
    if upper is None and lower is None:
        return None
    return Support(lower, upper)


def _extremes(profile: ColumnProfile) -> tuple[float | None, float | None]:
    """A batch's exact smallest and largest value (the sketch keeps both), or (None, None)."""
    sketch = profile.kll_sketch() if profile.kind != CATEGORICAL else None
    if sketch is None or sketch.is_empty():
        return None, None
    return float(sketch.get_min_value()), float(sketch.get_max_value())


def off_support_share(profile: ColumnProfile, support: Support) -> float | None:
    """The share of a batch's (non-null) values outside ``support``, from its sketch (an exact
    extreme outside it that the sketch's sample left out counts as one value); None without
    values."""
    if profile.kind == CATEGORICAL:
        return None
    values, weights = sketch_values(profile)
    total = sum(weights)
    if total <= 0:
        return None
    off = support.off_count(values, weights)
    if off == 0:
        off = min(support.off_count(v for v in _extremes(profile) if v is not None), 1.0)
    return off / total
