"""``avh_paper``: Auto-Validate-by-History as published (Song & He, SIGMOD 2021), in the harness.

The reference the issue compares streamdq with ("the paper's algorithm, run in the same harness"),
written here from the paper (Sec. 4, Algorithms 1, 3-5, Propositions 4.2, 4.4, 4.5, Tables 3-4,
Appendix B), not from streamdq's learner and not copied from any other project. For one column:

1. **Metric space** (Tables 3 and 4). Numeric: single-distribution ``min``, ``max``, ``mean``,
   ``median``, ``sum``, ``range``, ``row_count``, ``unique_ratio``, ``complete_ratio``;
   two-distribution against the previous batch ``emd``, ``js_div``, ``kl_div``, ``ks_dist``,
   ``cohen_d``. Categorical: ``str_len``, ``char_len``, ``digit_len``, ``punc_len``,
   ``row_count``, ``unique_ratio``, ``complete_ratio``, ``dist_val_count``; two-distribution
   ``l1``, ``linf``, ``cosine``, ``chi_squared``, ``js_div``, ``kl_div`` over the values and the
   same six over the value patterns (``pat_*``, Appendix C).
2. **Stationarity** (Algorithms 4-5): the ADF test on the metric's history; when it does not
   reject the unit root, lag transforms ``x[t] - x[t - lag]`` for lag = 1, 2, ... until one
   passes, then the same on the log series; none passes: the metric is dropped.
3. **Constraints** (Algorithm 3): on the (transformed) series with mean mu and std sigma, for
   beta = k sigma over a grid of k, ``mu - beta <= M <= mu + beta`` with its FPR bound:
   Chebyshev ``1 / k^2`` (Prop. 4.2), the CLT's ``2 (1 - Phi(k))`` for row count, mean, the
   length metrics and the complete ratio (Prop. 4.5), and one-sided ``M <= mu + beta`` with
   Cantelli's ``1 / (1 + k^2)`` for the distances (Prop. 4.4).
4. **Selection** (Algorithm 1): greedy on coverage of the synthetic issues gained per unit of
   FPR, each pick kept while the summed FPR stays within the target (the union bound,
   Eq. 10); then the best single constraint replaces the set when it alone covers more.
   The synthetic issues are the paper's ten types (Appendix B) injected into the newest history
   batch, from ``streamdq.autovalidate.avh.corruptions`` at the same seed as ``avh`` (the
   harness's seeds: the training issues never coincide with the evaluation ones).

The program flags a batch when any selected constraint is violated (a conjunctive program).

Where the harness decides, or the paper leaves a choice open (every deviation):

- **Input: the engine's profiles, not the raw batch.** The metrics are read from the very
  ``ColumnProfile``s ``avh`` learns from (the harness has them cached for the history, the
  training corruptions and the tests), so the two methods see the same information and any
  difference comes from the algorithms. It also needs no Spark run of its own. The price:
  numeric distances (EMD, JS, KL, KS) are computed between the two batches' KLL sketches at
  their pooled quantiles (``streamdq.autovalidate.avh.features.pair_metrics``, 64-point grid,
  the sketch's rank error about 1.3%) instead of the raw values; the numeric ``unique_ratio``
  is the HLL estimate; the ``median`` is the sketch's; categorical distances run over the
  heaviest 1,000 values and patterns the profile keeps; ``dist_val_count`` counts NULL as one
  value (the profile's histogram bins). Cohen's d is ``|mean difference| / pooled std``.
- **KS and chi-squared as distances**, not p-values: Table 3/4 say "using p-value", but
  Prop. 4.4 bounds them one-sided as distances (large = different); a p-value moves the other
  way and saturates at 0 for any two large batches. The statistics are used.
- **The beta grid**: Algorithm 3 steps beta over ``[sigma, n sigma]`` with step ``s`` without
  giving ``n`` or ``s``; here k = beta / sigma runs from 1 to ``K_MAX`` = 100 by 0.5 (only the
  k whose bound fits the target can be selected).
- **A constant (transformed) history** (sigma = 0): the one constraint ``M = mu`` (Example 4.8's
  ``dist_val_cnt = 50``), priced FPR 0 (Chebyshev with zero variance); distances: ``M <= mu``.
- **ADF**: statsmodels ``adfuller`` with a constant and AIC lag choice, stationary at p < 0.05; a
  series with fewer than ``MIN_ADF_POINTS`` points is not tested (the lags go up to K - 10, not
  K - 1: the test on a handful of points says nothing) and a constant series counts as
  stationary; a test that fails to run counts as not stationary. No second-order differencing
  (the paper omits it too). A distance that needed differencing keeps its one-sided bound, on
  the differenced value.
- **Missing values**: a metric some history batch lacks (the mean of an all-NULL batch) gives no
  constraint; a batch (test or synthetic issue) that lacks a metric a constraint reads, or
  whose value leaves the log transform's domain (<= 0), violates it.
- **Greedy**: Algorithm 1 as written would keep adding constraints of zero coverage gain
  while the budget lasts (more FPR, no recall); it stops at the first pick that gains nothing.
  A constraint over the remaining budget is never added (line 6), so it is skipped up front.
  Ties: the larger gain, then the metric order above.
- **Synthetic issues**: ``corruptions.py``'s forms of the ten types (its magnitudes: casing in
  both directions, the distribution's first and last p, 24 issues on a numeric column and 29
  on a categorical one instead of the paper's 60), without the variants streamdq added (real
  NULL values, one-sided padding: ``is_paper_corruption``). A corrupted copy of the newest
  batch stands in for that batch: its two-distribution metrics are taken against the batch
  before it, and a lag transform reads the values before it.
- **No holiday calendar** (the paper has none; ``avh`` gets the feed's).

>>> import sys; sys.path.insert(0, "bench/autovalidate")  # doctest: +SKIP
>>> from paper import learn_paper  # doctest: +SKIP
>>> program = learn_paper(history_profiles, corrupted_profiles, fpr=0.001)  # doctest: +SKIP
>>> program.judge(next_profile)  # names of the violated constraints; [] = passes  # doctest: +SKIP
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from streamdq.autovalidate.avh.features import pair_metrics
from streamdq.autovalidate.avh.profile import NUMERIC, ColumnProfile

# paper name -> the profile scalar it reads (Tables 3 and 4, single-distribution)
NUMERIC_SINGLE: dict[str, str] = {
    "min": "min",
    "max": "max",
    "mean": "mean",
    "median": "median",
    "sum": "sum",
    "range": "range",
    "row_count": "row_count",
    "unique_ratio": "unique_ratio",
    "complete_ratio": "completeness",
}
CATEGORICAL_SINGLE: dict[str, str] = {
    "str_len": "str_len",
    "char_len": "char_len",
    "digit_len": "digit_len",
    "punc_len": "punc_len",
    "row_count": "row_count",
    "unique_ratio": "unique_ratio",
    "complete_ratio": "completeness",
    "dist_val_count": "distinct_count",
}
# paper name -> the name ``features.pair_metrics`` gives it (two-distribution)
NUMERIC_PAIRS: dict[str, str] = {
    "emd": "dist_emd",
    "js_div": "dist_js",
    "kl_div": "dist_kl",
    "ks_dist": "dist_ks",
    "cohen_d": "dist_cohen_d",
}
_CATEGORICAL_DISTANCES = {
    "l1": "l1",
    "linf": "linf",
    "cosine": "cosine",
    "chi_squared": "chi2",
    "js_div": "js",
    "kl_div": "kl",
}
CATEGORICAL_PAIRS: dict[str, str] = {
    **{name: f"dist_{d}" for name, d in _CATEGORICAL_DISTANCES.items()},
    **{f"pat_{name}": f"dist_pat_{d}" for name, d in _CATEGORICAL_DISTANCES.items()},
}
# Prop. 4.5: the metrics the CLT bound applies to
CLT_METRICS = frozenset(
    {"row_count", "mean", "str_len", "char_len", "digit_len", "punc_len", "complete_ratio"}
)
K_MIN, K_MAX, K_STEP = 1.0, 100.0, 0.5
MIN_ADF_POINTS = 10
ADF_ALPHA = 0.05
# variants ``corruptions.py`` adds to the paper's forms (real NULL values, one-sided padding)
NON_PAPER_VARIANTS = frozenset({"null", "leading", "trailing"})


def is_paper_corruption(name: str) -> bool:
    """Whether a corruption name (``issue:label[:variant]``) is one of the paper's forms."""
    parts = name.split(":")
    return not (len(parts) > 2 and parts[2] in NON_PAPER_VARIANTS)


def single_values(profile: ColumnProfile) -> dict[str, float]:
    """The paper's single-distribution metrics of one batch (finite values only)."""
    names = NUMERIC_SINGLE if profile.kind == NUMERIC else CATEGORICAL_SINGLE
    out = {}
    for name, scalar in names.items():
        v = profile.scalars.get(scalar)
        if v is not None and math.isfinite(v):
            out[name] = float(v)
    return out


def pair_values(previous: ColumnProfile, current: ColumnProfile) -> dict[str, float]:
    """The paper's two-distribution metrics of ``current`` against ``previous`` (finite only)."""
    names = NUMERIC_PAIRS if current.kind == NUMERIC else CATEGORICAL_PAIRS
    raw = pair_metrics(previous, current)
    return {name: float(raw[key]) for name, key in names.items() if key in raw and math.isfinite(raw[key])}


def adf_stationary(series: Sequence[float] | np.ndarray) -> bool:
    """ADF: the unit root rejected at ``ADF_ALPHA`` (constant series: stationary; too short or
    failing: not)."""
    from statsmodels.tsa.stattools import adfuller

    x = np.asarray(series, dtype=float)
    if len(x) < MIN_ADF_POINTS or not np.all(np.isfinite(x)):
        return False
    if float(np.ptp(x)) == 0.0:
        return True
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            pvalue = float(adfuller(x, autolag="AIC")[1])
        except (ValueError, np.linalg.LinAlgError, ZeroDivisionError):
            return False
    return math.isfinite(pvalue) and pvalue < ADF_ALPHA


@dataclass(frozen=True)
class Transform:
    """Algorithm 5's result: the raw series (``lag`` 0) or ``x[t] - x[t - lag]``, of ``log x``
    when ``log``."""

    lag: int = 0
    log: bool = False

    def series(self, raw: Sequence[float]) -> np.ndarray:
        x = np.asarray(raw, dtype=float)
        if self.log:
            x = np.log(x)
        return x[self.lag :] - x[: -self.lag] if self.lag else x

    def value(self, before: Sequence[float], x: float | None) -> float | None:
        """The transformed value of a new raw point ``x`` following the raw values ``before``
        (oldest first); None when it cannot be computed."""
        if x is None or not math.isfinite(x):
            return None
        if self.log:
            if x <= 0:
                return None
            x = math.log(x)
        if not self.lag:
            return x
        if len(before) < self.lag:
            return None
        ref = float(before[-self.lag])
        if self.log:
            if ref <= 0:
                return None
            ref = math.log(ref)
        return x - ref

    def show(self, metric: str) -> str:
        inner = f"log({metric})" if self.log else metric
        return f"{inner} - {inner}[t-{self.lag}]" if self.lag else inner


def make_stationary(raw: Sequence[float]) -> Transform | None:
    """Algorithms 4-5: the first of the raw series, its lag 1..K-``MIN_ADF_POINTS`` differences,
    then the same differences of the log series (all values > 0), that ADF calls stationary;
    None when none is."""
    if adf_stationary(raw):
        return Transform()
    logs = (False, True) if all(v > 0 for v in raw) else (False,)
    for log in logs:
        for lag in range(1, len(raw) - MIN_ADF_POINTS + 1):
            t = Transform(lag, log)
            if adf_stationary(t.series(raw)):
                return t
    return None


def fpr_bound(bound: str, k: float) -> float:
    """The FPR bound of ``mu +- k sigma`` (``cantelli``: ``<= mu + k sigma``)."""
    if bound == "chebyshev":
        return min(1.0, 1.0 / (k * k))
    if bound == "cantelli":
        return 1.0 / (1.0 + k * k)
    if bound == "clt":
        return math.erfc(k / math.sqrt(2.0))
    raise ValueError(bound)


@dataclass(frozen=True)
class PaperConstraint:
    """``lower <= transform(M) <= upper`` with its FPR bound."""

    metric: str
    pair: bool
    transform: Transform
    lower: float
    upper: float
    fpr: float
    bound: str
    k: float

    def show(self) -> str:
        name = self.transform.show(self.metric)
        lo = "" if self.lower == -math.inf else f"{self.lower:.6g} <= "
        return f"{lo}{name} <= {self.upper:.6g} ({self.bound}, k={self.k:g}, fpr<={self.fpr:.2g})"

    def holds(self, value: float | None) -> bool:
        return value is not None and self.lower <= value <= self.upper


@dataclass
class PaperProgram:
    """A conjunctive program and what judging the next batch needs: the last history batch
    (for the distances) and the raw metric series (for the lag transforms)."""

    constraints: list[PaperConstraint]
    previous: ColumnProfile | None
    single_raw: dict[str, list[float]] = field(default_factory=dict)
    pair_raw: dict[str, list[float]] = field(default_factory=dict)
    covered: int = 0
    training: int = 0

    def judge(self, profile: ColumnProfile) -> list[str]:
        """The violated constraints (``show()``) of the batch following the history; [] = passes."""
        if not self.constraints:
            return []
        single = single_values(profile)
        pairs: dict[str, float] = {}
        if self.previous is not None and any(c.pair for c in self.constraints):
            pairs = pair_values(self.previous, profile)
        out = []
        for c in self.constraints:
            raw = self.pair_raw if c.pair else self.single_raw
            x = (pairs if c.pair else single).get(c.metric)
            if not c.holds(c.transform.value(raw[c.metric], x)):
                out.append(c.show())
        return out

    def show(self) -> str:
        lines = [
            f"avh_paper: {len(self.constraints)} constraints, {self.covered}/{self.training} issues covered"
        ]
        lines += [f"  {c.show()}" for c in self.constraints]
        return "\n".join(lines)


def _k_grid() -> np.ndarray:
    return np.arange(K_MIN, K_MAX + K_STEP / 2, K_STEP)


def _candidates(
    metric: str,
    pair: bool,
    raw: Sequence[float],
    training: Sequence[float | None],
    fpr: float,
) -> list[tuple[PaperConstraint, np.ndarray]]:
    """Algorithm 3 for one metric: its constraints within ``fpr`` and the synthetic issues each
    catches (``training``: the metric's raw value on each issue, standing in for the newest batch)."""
    transform = make_stationary(raw)
    if transform is None:
        return []
    series = transform.series(raw)
    if len(series) < 2:
        return []
    mu, sigma = float(series.mean()), float(series.std(ddof=1))
    before = list(raw[:-1])
    values = [transform.value(before, x) for x in training]
    bound = "cantelli" if pair else ("clt" if metric in CLT_METRICS else "chebyshev")
    out = []
    if sigma == 0.0:
        tol = 1e-9 * max(1.0, abs(mu))
        c = PaperConstraint(
            metric, pair, transform, -math.inf if pair else mu - tol, mu + tol, 0.0, bound, 0.0
        )
        out.append((c, np.array([not c.holds(v) for v in values], dtype=bool)))
        return out
    arr = np.array([np.nan if v is None else v for v in values], dtype=float)
    missing = np.isnan(arr)
    for k in _k_grid():
        p = fpr_bound(bound, float(k))
        if p > fpr:
            continue
        beta = float(k) * sigma
        lower = -math.inf if pair else mu - beta
        upper = mu + beta
        caught = missing | (arr < lower) | (arr > upper)
        out.append((PaperConstraint(metric, pair, transform, lower, upper, p, bound, float(k)), caught))
    return out


def learn_paper(
    history: Sequence[ColumnProfile],
    corrupted: Mapping[str, ColumnProfile],
    fpr: float = 0.001,
    *,
    history_pairs: Sequence[Mapping[str, float]] | None = None,
) -> PaperProgram:
    """Algorithm 1 on profiles: ``history`` oldest first; ``corrupted`` = name -> profile of a
    corrupted copy of ``history[-1]`` (only the paper's forms, ``is_paper_corruption``, are used).
    ``history_pairs`` (optional, a cache): ``pair_values(history[i], history[i + 1])`` for each i.
    A history of fewer than three batches gives an empty program."""
    names = [n for n in corrupted if is_paper_corruption(n)]
    program = PaperProgram([], history[-1] if history else None, training=len(names))
    if len(history) < 3:
        return program
    singles = [single_values(p) for p in history]
    bad_single = [single_values(corrupted[n]) for n in names]
    pairs = (
        list(history_pairs)
        if history_pairs is not None
        else [pair_values(a, b) for a, b in zip(history, history[1:], strict=False)]
    )
    bad_pair = [pair_values(history[-2], corrupted[n]) for n in names]
    kind_single = NUMERIC_SINGLE if history[-1].kind == NUMERIC else CATEGORICAL_SINGLE
    kind_pairs = NUMERIC_PAIRS if history[-1].kind == NUMERIC else CATEGORICAL_PAIRS
    cands: list[tuple[PaperConstraint, np.ndarray]] = []
    for metric in kind_single:
        if all(metric in s for s in singles):
            raw = [s[metric] for s in singles]
            program.single_raw[metric] = raw
            cands += _candidates(metric, False, raw, [b.get(metric) for b in bad_single], fpr)
    for metric in kind_pairs:
        if all(metric in s for s in pairs):
            raw = [s[metric] for s in pairs]
            program.pair_raw[metric] = raw
            cands += _candidates(metric, True, raw, [b.get(metric) for b in bad_pair], fpr)
    if not cands or not names:
        return program
    covers = np.array([c for _, c in cands], dtype=bool).reshape(len(cands), len(names))
    costs = np.array([q.fpr for q, _ in cands])
    chosen: list[int] = []
    covered = np.zeros(len(names), dtype=bool)
    spent = 0.0
    available = np.ones(len(cands), dtype=bool)
    while True:
        gains = (covers & ~covered).sum(axis=1)
        ok = available & (gains > 0) & (costs <= fpr - spent + 1e-15)
        if not ok.any():
            break
        with np.errstate(divide="ignore", over="ignore"):
            ratio = np.where(costs > 0, gains / np.where(costs > 0, costs, 1.0), np.inf)
        ratio = np.where(ok, ratio, -1.0)
        best = float(ratio.max())
        tied = np.flatnonzero(ratio == best)
        pick = int(tied[np.argmax(gains[tied])])  # first of the largest gain among the best ratio
        chosen.append(pick)
        available[pick] = False
        covered |= covers[pick]
        spent += costs[pick]
    # line 10-12: the best single constraint within the target, when it alone covers more
    totals = covers.sum(axis=1)
    single = int(np.argmax(np.where(costs <= fpr, totals, -1)))
    if costs[single] <= fpr and totals[single] > covered.sum():
        chosen, covered = [single], covers[single].copy()
    program.constraints = [cands[i][0] for i in chosen]
    program.covered = int(covered.sum())
    return program
