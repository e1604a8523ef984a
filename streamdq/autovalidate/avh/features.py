"""The metric space of auto-validation (AVH, Sec. 3.1 and Table 2), over ``ColumnProfile``s.

Single-distribution metrics are the profile's scalars (row count, completeness, unique
ratio, mean, median, min, max, sum, range, ... and the 5% and 95% quantiles of the KLL
sketch for numeric columns; row count, completeness, distinct count, unique ratio,
string/letter/digit/punctuation lengths and the empty, padded and upper-case ratios for
categorical ones), plus, for both kinds, the distinct exponent
``log(distinct) / log(non-null values)`` (``distinct_exponent``). Two-distribution metrics
compare a batch with the previous one:

* categorical: L1, L-infinity, cosine, chi-squared, KL and JS over the value counts, and
  the same six over the pattern profiles (``pat_*``);
* numeric: EMD, JS, KL and KS between the two KLL sketches (CDFs and bin masses at the
  pooled quantiles of both, so no raw data is needed) and Cohen's d from mean and stddev.
  The learner prices these five on their log scale (``LOG_PRICED_DISTANCES``).

Pure driver-side functions. A metric that cannot be computed (an empty side, no sketch)
is left out of the result, and the caller treats a missing metric as out of bounds
only when the history always had it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from streamdq.autovalidate.avh import distances as d
from streamdq.autovalidate.avh.profile import CATEGORICAL, ColumnProfile

CATEGORICAL_DISTANCES: dict[str, Callable[[Mapping[str, float], Mapping[str, float]], float]] = {
    "l1": d.l1,
    "linf": d.linf,
    "cosine": d.cosine,
    "chi2": d.chi_squared,
    "kl": d.kl,
    "js": d.js,
}
# metrics whose spread the normal-tail (CLT) bound may use: counts, means and ratios
CLT_METRICS = frozenset(
    {
        "row_count",
        "p05",  # sample quantiles are asymptotically normal too (Bahadur)
        "median",
        "p95",
        "completeness",
        "mean",
        "unique_ratio",
        "distinct_exponent",
        "zero_ratio",
        "str_len",
        "char_len",
        "digit_len",
        "punc_len",
        "empty_ratio",
        "padded_ratio",
        "upper_ratio",
        "collision",  # Simpson's index, a U-statistic (on its log scale: LOG_PRICED_SCALES)
    }
)
# metrics that follow how many rows a batch carries, whatever their distribution: the row count,
# the sum, the distinct count and the two shares of it (a column's value set saturates, e.g. the
# routes flown, so fewer rows mean a higher distinct exponent and unique ratio). A day off (a
# holiday of the configured calendar, calendar.py) changes the volume by design: they are not
# judged on one, nor on a batch compared with one, and are learned without them
VOLUME_METRICS = frozenset({"row_count", "sum", "distinct_count", "unique_ratio", "distinct_exponent"})
# a batch's extremes: the extreme value tail of bounds.py
EXTREME_METRICS = frozenset({"min", "max"})
# distances to the previous batch of a numeric column priced on their log scale (``learner._log_distance_fit``): a
# distance is positive and right-skewed (a KS of 0.05 on most days, 0.2 after a storm), its log
# close to normal; Cantelli on the raw distance needs k = 31.6 at 1e-3, which bounds a KS or JS
# (at most 1) above 1 as soon as its history moved by 0.03: no corruption was ever caught by one,
# and no two-distribution metric of a numeric column was ever selected (issue 22)
LOG_PRICED_DISTANCES = frozenset({"dist_ks", "dist_emd", "dist_js", "dist_kl", "dist_cohen_d"})
# a batch's spread, priced on its log scale (``learner._fit_metric`` forces the log transform on a
# positive history) with the skewed tail (at most exponential: k = 6.6 at 1e-3) instead of Chebyshev
# on the raw value: a standard deviation is positive and moves by factors across days (delays: 23 on
# a calm day, 62 after a storm); Chebyshev needs k = 316 at 1e-5 and never bounded it below, so a
# batch whose spread collapsed (the lowest tenth of the delays) passed. Not the normal tail: a foggy
# day pins the humidity at saturation, 4.8 standard deviations below its log spread's mean, where
# the normal law priced 1e-4 (bench/README.md, issue 22, the spread on its log scale)
# ``collision`` (Simpson's index) is forced onto its log scale too, but with the normal tail (it is in
# ``CLT_METRICS``), bounded above only (bench/README.md, issue 22, Simpson's index)
LOG_PRICED_SCALES = frozenset({"std", "collision"})
GRID_POINTS = 64


# tail quantiles of a numeric column, read from the batch's KLL sketch (its rank error: 1.3%
# at the ApproxQuantile analyzer's k=200; exact for a batch the sketch holds uncompacted);
# they move when a few percent of the values change, where the mean does not
TAIL_QUANTILES = {"p05": 0.05, "p95": 0.95}


def single_metrics(profile: ColumnProfile) -> dict[str, float]:
    """The single-distribution metrics of one batch (finite values only): the profile's
    scalars, the ``distinct_exponent`` when it is defined, and, for a numeric column with
    values, the ``TAIL_QUANTILES`` of its sketch and its ``collision`` share."""
    out = {k: v for k, v in profile.scalars.items() if math.isfinite(v)}
    exponent = distinct_exponent(profile.rows, out.get("completeness"), out.get("unique_ratio"))
    if exponent is not None:
        out["distinct_exponent"] = exponent
    sketch = profile.kll_sketch() if profile.kind != CATEGORICAL else None
    if sketch is not None and not sketch.is_empty():
        for name, q in TAIL_QUANTILES.items():
            value = float(sketch.get_quantile(q))
            if math.isfinite(value):
                out[name] = value
        share = collision(sketch)
        if share is not None:
            out["collision"] = share
    return out


# the fewest values a batch's ``collision`` is read from: on a few values it jumps between 0 and 1
# (two gusts of the same speed on a calm day read 1 after a month of 0.1 to 0.4)
MIN_COLLISION_VALUES = 20


def collision(sketch: Any, min_values: int = MIN_COLLISION_VALUES) -> float | None:
    """Simpson's index of a batch's values: the chance that two of its values, drawn without
    replacement, are equal, ``sum_v c_v (c_v - 1) / (n (n - 1))`` over the counts ``c_v`` of each
    distinct value, read from the KLL sketch (exact while it holds every value; above, each kept
    value's weight stands for its count). None with fewer than ``min_values`` values (at least
    two): a batch without it passes its constraints (``learner.SOMETIMES_UNDEFINED``).

    A batch that repeats some of its values more than usual, as a biased sample drawn with
    replacement does (the harness's distribution change: the lowest tenth of a day's 72
    temperatures redrawn 72 times), has a higher index even where its mean, spread and quantiles
    stay within the day-to-day drift; a tenth redrawn repeats each value about ten times. It sees
    repeats only: a shift that draws no value twice leaves it where it was. Priced on its log scale
    (``LOG_PRICED_SCALES``: it moves by factors; a foggy day pins the humidity at saturation and
    ties its values) with the normal tail (``CLT_METRICS``: a U-statistic; the skewed tail when
    Shapiro-Wilk rejects the history's normality), bounded above only (``learner.UPPER_ONLY``).

    >>> import datasketches as ds
    >>> s = ds.kll_doubles_sketch(200)
    >>> for v in (1.0, 1.0, 2.0, 3.0):
    ...     s.update(v)
    >>> round(collision(s, min_values=2), 4)  # one equal pair of the six
    0.1667
    >>> collision(s) is None  # four values are too few
    True
    """
    counts: dict[float, float] = {}
    for value, weight in sketch:
        counts[float(value)] = counts.get(float(value), 0.0) + float(weight)
    n = sum(counts.values())
    if n < max(min_values, 2):
        return None
    return float(sum(c * (c - 1.0) for c in counts.values()) / (n * (n - 1.0)))


def distinct_exponent(rows: float, completeness: float | None, unique_ratio: float | None) -> float | None:
    """Heaps' exponent of a batch: ``log(distinct) / log(non-null values)``, or None with fewer than
    two non-null values or without the ratios.

    A sample's distinct share falls as the sample grows, so the unique ratio largely tracks the
    batch size: the benchmark's blizzard day with 291 arrival delays has a unique ratio of 0.354
    against 0.138 the day before with 925 (103 and 128 distinct values). Distinct values grow
    about as ``n ** beta`` (Heaps' law), and ``beta`` moves far less with ``n`` (0.82 against
    0.71 on those days); over the benchmark's 120 days of delays its spread is a sixth of the
    unique ratio's relative to the mean, so its bounds are tighter for the same false alarms.
    The number of distinct values of a sample is asymptotically normal (occupancy counts) and the
    exponent is a smooth function of it: the normal tail applies.
    """
    if completeness is None or unique_ratio is None:
        return None
    n = rows * completeness
    distinct = unique_ratio * n
    if n < 2.0 or distinct < 1.0:
        return None
    return math.log(distinct) / math.log(n)


def pair_metrics(previous: ColumnProfile, current: ColumnProfile) -> dict[str, float]:
    """Two-distribution metrics of ``current`` against ``previous`` (names prefixed ``dist_``)."""
    out: dict[str, float] = {}
    if current.kind == CATEGORICAL:
        for source, prefix in (("values", "dist_"), ("patterns", "dist_pat_")):
            p, q = getattr(previous, source), getattr(current, source)
            if not p or not q:
                continue
            for name, fn in CATEGORICAL_DISTANCES.items():
                out[prefix + name] = float(fn(p, q))
        return out
    out.update(_numeric_distances(previous, current))
    return out


def _numeric_distances(previous: ColumnProfile, current: ColumnProfile) -> dict[str, float]:
    a, b = previous.kll_sketch(), current.kll_sketch()
    out: dict[str, float] = {}
    if a is None or b is None or a.is_empty() or b.is_empty():
        return out
    probs = np.linspace(0.0, 1.0, GRID_POINTS + 1)
    grid = np.unique(np.concatenate([a.get_quantiles(probs), b.get_quantiles(probs)]))
    if len(grid) == 1:
        grid = np.array([grid[0], grid[0] + 1.0])
    split = [float(x) for x in grid[1:]]
    cdf_a = np.asarray(a.get_cdf(split))[:-1]
    cdf_b = np.asarray(b.get_cdf(split))[:-1]
    out["dist_ks"] = float(np.max(np.abs(cdf_a - cdf_b))) if len(split) > 1 else 0.0
    widths = np.diff(grid)
    out["dist_emd"] = float(np.sum(np.abs(cdf_a - cdf_b) * widths[: len(cdf_a)]))
    pmf_a = {i: float(p) for i, p in enumerate(a.get_pmf(split))}
    pmf_b = {i: float(p) for i, p in enumerate(b.get_pmf(split))}
    if sum(pmf_a.values()) > 0 and sum(pmf_b.values()) > 0:
        out["dist_js"] = float(d.js(pmf_a, pmf_b))
        out["dist_kl"] = float(d.kl(pmf_a, pmf_b))
    ma, mb = previous.scalars.get("mean"), current.scalars.get("mean")
    sa, sb = previous.scalars.get("std"), current.scalars.get("std")
    if None not in (ma, mb, sa, sb):
        assert ma is not None and mb is not None and sa is not None and sb is not None
        pooled = math.sqrt((sa * sa + sb * sb) / 2.0)
        out["dist_cohen_d"] = abs(ma - mb) / pooled if pooled > 0 else (0.0 if ma == mb else math.inf)
    return out
