"""The learner of Auto-Validate-by-History (KDD 2023, Alg. 1) for one column, on profiles.

``learn_from_profiles(history, corrupted, fpr=0.001) -> Program``: pure Python on the driver,
no Spark. ``streamdq.learning.learn(history, column, fpr=0.001, seed=None)`` (above the engine;
also ``streamdq.autovalidate.learn``) is step 1 and then this:

1. Profiles: the engine computes the profile (``profile.py``) of every history batch and
   of every synthetic corruption (``corruptions.py``) of the newest batch in ONE
   segmented run of the analysis plan: a scan-shareable pass plus one grouped pass for a
   categorical column, whatever the number of batches (``profiling.profile_frames``).
2. Candidates (``learn_from_profiles``): for each metric of the space (``features.py``)
   with a full history, its series is made stationary (ADF, transform remembered); for a
   ladder of FPR levels at or below the target, a constraint ``mean +- k * std`` (single
   metrics: the normal tail, as the Student-t prediction law of the n history values, for
   counts, means, ratios and quantiles, or the skewed tail when Shapiro-Wilk rejects the
   history's normality (``looks_normal``; not the distinct exponent: ``NORMAL_ALWAYS``), the extreme value
   tail for min and max, the skewed tail on the log scale for a batch's standard deviation
   (``LOG_PRICED_SCALES``: the log transform forced on a positive history; Simpson's index
   ``collision`` on its log scale too, with the normal tail, bounded above only: ``UPPER_ONLY``,
   a batch without it passing: ``SOMETIMES_UNDEFINED``), Chebyshev
   two-sided for the rest; ``bound_for``) or
   ``<= mean + k * std`` (distances to the previous batch: Cantelli one-sided; a numeric
   column's EMD, KS, JS, KL and Cohen's d on their log scale instead, ``_log_distance_fit``) is built,
   ``k`` from the bound's inversion (``bounds.k_for``), ``std`` floored (``min_std``).
   An order statistic or quantile (min, max, median, range, p05, p95) whose history repeats
   one value on at least half of its batches (``mostly_tied``) or takes few distinct values
   (``on_lattice``) gets no candidate. With holiday flags (``holidays=``, ``calendar.py``) a
   volume metric (``VOLUME_METRICS``) is fitted on the points of its series that read no day off.
   A share that sat exactly on 0 or 1 in every history batch (no NULL, zero, padded or
   upper-case value ever) is priced by counting events under the predictive law of the next
   batch (``bounds.binomial_count``; "any event" is a candidate at about 1 / (2 x batches)); so
   are values off the grid the history's values sat on (``lattice.py``: ``off_lattice``, with
   the grid kept in the program) and values past a cap, floor or decade the history never
   crossed (``support.py``: ``off_support``, the limits kept in the program), and values of a
   categorical column outside the closed domain of its history (``domain.py``: ``off_domain``,
   the values kept in the program). A row count whose Poisson floor sets its spread (under-
   dispersed: on a fixed schedule, or a calendar's count) keeps the normal tail
   (``_floor_sets_count``), its lower side the Poisson law's own (``bounds.poisson_lower``),
   its upper side the history's own spread (``count_ceiling``); a count on a fixed schedule is
   never differenced (``_on_schedule``).
   With holiday flags the selection for days off also gets the upper side of the row count's
   level on the ordinary days (``_off_day_level_fit``). A
   value metric that some history batches lack (the column was all NULL there) is fitted on
   the batches that have it, without a transform, when at least half do, and its constraints
   admit a missing value (``_sometimes_missing_fit``).
3. Calibration: a candidate that would have flagged one of its own history points when
   that point is left out (leave-one-out) is dropped; the worst-case bound alone
   under-states the FPR on 30 points (AUTOVALIDATE-NOTES.md).
4. Recall: the corruptions each candidate catches; then greedy budgeted max coverage
   (``select.greedy_select``) under the FPR target (union bound); one constraint per
   metric is kept (the tightest chosen). ``learn_at_targets`` runs steps 2-4 for several
   targets over one computation of the metrics (the benchmark's precision/recall frontier).

Runs on the driver and never imports the engine. Empty history raises
``ValueError``; a history shorter than ``MIN_HISTORY`` batches gives an empty program
(nothing can be bounded) that says so in ``show()``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from streamdq.autovalidate.avh import bounds, stationarity
from streamdq.autovalidate.avh.domain import METRIC as DOMAIN_METRIC
from streamdq.autovalidate.avh.domain import history_domain
from streamdq.autovalidate.avh.features import (
    CLT_METRICS,
    EXTREME_METRICS,
    LOG_PRICED_DISTANCES,
    LOG_PRICED_SCALES,
    VOLUME_METRICS,
    pair_metrics,
    single_metrics,
)
from streamdq.autovalidate.avh.lattice import METRIC as LATTICE_METRIC
from streamdq.autovalidate.avh.lattice import history_lattice
from streamdq.autovalidate.avh.profile import (
    NUMERIC,
    ColumnProfile,
)
from streamdq.autovalidate.avh.program import LearnedConstraint, Program, append_recent, off_shares
from streamdq.autovalidate.avh.select import greedy_select
from streamdq.autovalidate.avh.support import METRIC as SUPPORT_METRIC
from streamdq.autovalidate.avh.support import history_support
from streamdq.errors import InvalidArgument

MIN_HISTORY = 4
FPR_LADDER = (1.0, 0.5, 0.2, 0.1, 0.05, 0.02, 0.01)  # fractions of the target FPR
# order statistics and quantiles of a numeric column: a history that mostly repeats one value (a
# capped sensor's median or 95% quantile, the range between two fixed routes) is a point mass with
# rare departures, and one that moves between a few values (the 5% quantile of route distances:
# 187, 195, 199 or 200 miles) lives on a lattice whose unseen points are anywhere; no moment bound
# over 30 points prices either (AUTOVALIDATE-NOTES: near-constant series; bench/README.md)
ORDER_STATISTICS = frozenset({"min", "max", "median", "range", "p05", "p95"})
TIED_SHARE = 0.5
# a metric meant for the normal tail whose (stationary) history fails Shapiro-Wilk at this level is
# priced with the skewed tail instead (bounds.py): storm days skew delays, fog skews visibility
NORMALITY_ALPHA = 0.01
# metrics that keep the normal tail whatever Shapiro-Wilk says of their history: the distinct exponent,
# the log of a small count on a column whose values repeat (24 hourly dew points with 4-21 distinct
# values a day), where the log stretches the few calm days with 4 or 5 distinct values into a left
# tail that Shapiro-Wilk rejects (the raw counts of the same 30 days it keeps), and the skewed tail
# then put the lower bound below 0: a batch of one value repeated 24 times passed (bench/README.md,
# ``## autovalidate``, issue 22, the distinct exponent of repeated values)
NORMAL_ALWAYS = frozenset({"distinct_exponent"})
LATTICE_SHARE = 0.2  # at most this share of the history's batches as distinct values: a lattice
# metrics that may be differenced one period back (stationarity.SEASONAL_LAGS): the volume, which
# follows the calendar by construction (fewer flights on Saturdays). A column statistic with a
# weekly pattern (the route mix) is still judged day over day: a weekly difference of it doubled
# the alarms on holidays and on the days after an incident (bench/README.md)
SEASONAL_METRICS = frozenset({"row_count"})
# a single metric that some history batches lack (the column is all NULL there) is still learned
# from the others when at least this share of the batches has it (``_sometimes_missing_fit``;
# above 1: never). Off (1.01) in 9ebcf64: it lifted wind-gust recall 0.19 -> 0.51 but added a
# storm-day alarm; on since an all-NULL batch is priced from the history (``all_null_chance``),
# which removed the harness's calm-day alarm on the same column (bench/README.md, issue 22 third
# round: outside incidents the false alarms are as before, 4 in 1,890).
SOMETIMES_MISSING_SHARE = 0.5
# metrics a batch with values may still lack (``features.collision`` needs ``MIN_COLLISION_VALUES``
# values): their constraints admit a batch without them, which the volume and completeness judge
SOMETIMES_UNDEFINED = frozenset({"collision"})
# single metrics bounded above only (untransformed, or on the log scale): a batch that repeats its
# values less than ever is no issue (``features.collision``: the only lower-side break on the
# harness was an ordinary day of pressures, 2013-04-19); priced like the distances' one-sided
# bounds, at the two-sided tail's level (conservative)
UPPER_ONLY = frozenset({"collision"})
# each synthetic issue is covered by up to this many metrics (of different ``cover_group``s) while
# the budget lasts (select.greedy_select): one draw's catch just past a bound does not carry to the
# next draw
COVER_DEPTH = 2


def learn_from_profiles(
    history: Sequence[ColumnProfile],
    corrupted: Mapping[str, ColumnProfile],
    fpr: float = 0.001,
    *,
    min_std: float = 1e-6,
    holidays: Sequence[bool] = (),
) -> Program:
    """AVH's selection on profiles: ``history`` oldest first; ``corrupted`` = name -> profile
    of a corrupted copy of ``history[-1]``."""
    return learn_at_targets(history, corrupted, (fpr,), min_std=min_std, holidays=holidays)[fpr]


def learn_at_targets(
    history: Sequence[ColumnProfile],
    corrupted: Mapping[str, ColumnProfile],
    fprs: Sequence[float],
    *,
    min_std: float = 1e-6,
    holidays: Sequence[bool] = (),
) -> dict[float, Program]:
    """``learn_from_profiles`` at several targets (fpr -> program) over one computation of the
    metrics: the same programs as one call per target, for the cost of the metrics once.

    ``holidays`` (empty: no calendar) says, per history batch, whether it fell on a day off: a
    volume metric's (``VOLUME_METRICS``) transform and bound are then learned from the points of
    its transformed series that read no holiday batch (``Transform.series``), and the program keeps the
    newest flags (``Program.recent_holidays``) to mute those constraints after one."""
    if not history:
        raise InvalidArgument("learn_from_profiles() needs a non-empty history")
    if holidays and len(holidays) != len(history):
        raise InvalidArgument(f"holidays has {len(holidays)} flags for {len(history)} history batches")
    for fpr in fprs:
        if not 0.0 < fpr < 1.0:
            raise InvalidArgument(f"fpr must be in (0, 1), got {fpr}")
    flags = tuple(bool(h) for h in holidays) or (False,) * len(history)
    newest = history[-1]
    singles = [single_metrics(p) for p in history]
    recent = recent_values(singles)
    grid = history_lattice(history) if len(history) >= MIN_HISTORY else None
    limits = history_support(history) if len(history) >= MIN_HISTORY else None
    domain = history_domain(history) if len(history) >= MIN_HISTORY else None
    if len(history) < MIN_HISTORY:
        return {
            fpr: Program(
                column=newest.column,
                kind=newest.kind,
                fpr=fpr,
                history=len(history),
                reference=newest,
                recent_values=recent,
                recent_holidays=flags[-stationarity.MAX_LAG :],
            )
            for fpr in fprs
        }
    pairs = [pair_metrics(a, b) for a, b in zip(history, history[1:], strict=False)]
    bad_single = {n: single_metrics(p) for n, p in corrupted.items()}
    # every history batch lies on the lattice of the others (history_lattice), no history value
    # lies outside the support (history_support), no history batch held a value the others lacked
    # (history_domain): the history's own shares are 0
    none_off = {
        metric: 0.0
        for metric, kept in ((LATTICE_METRIC, grid), (SUPPORT_METRIC, limits), (DOMAIN_METRIC, domain))
        if kept is not None
    }
    if none_off:
        singles = [{**s, **none_off} for s in singles]
    for name, p in corrupted.items():
        bad_single[name].update(off_shares(p, grid, limits, domain))
    bad_pair = {n: pair_metrics(history[-2], p) for n, p in corrupted.items()}
    rows = float(np.mean([p.rows for p in history]))
    p_missing = all_null_chance(singles, [p.rows for p in history])
    # every metric with a full history, fitted once (transform, moments, bound) for all targets
    fits: list[_Fit] = []
    for metric in sorted(set().union(*singles)):
        series = [s.get(metric) for s in singles]
        values = [float(v) for v in series if v is not None]
        if len(values) < len(series):  # a value metric of a column that is all NULL in some batches
            fit = _sometimes_missing_fit(
                metric, values, len(series), {n: s.get(metric) for n, s in bad_single.items()}, rows, min_std
            )
            if fit is not None:
                fits.append(fit)
            continue
        if metric in ORDER_STATISTICS and (mostly_tied(values) or on_lattice(values)):
            continue
        rare = _rare_event_fit(
            metric, values, singles, history, {n: s.get(metric) for n, s in bad_single.items()}
        )
        if rare is not None:
            fits.append(rare)
            continue
        fit = _fit_metric(
            metric,
            values,
            {n: s.get(metric) for n, s in bad_single.items()},
            bound_for(metric),
            std_floor(metric, values, rows, min_std),
            two_sided=metric not in UPPER_ONLY,
            holidays=flags if metric in VOLUME_METRICS else (),
        )
        if fit is not None and metric in SOMETIMES_UNDEFINED:
            fit = replace(fit, missing_ok=True)
        if fit is not None:
            fits.append(fit)
    for metric in sorted(set().union(*pairs)) if pairs else []:
        series = [p.get(metric) for p in pairs]
        if any(v is None for v in series) or len(series) < MIN_HISTORY - 1:
            continue
        values = [float(v) for v in series if v is not None]
        caught = {n: p.get(metric) for n, p in bad_pair.items()}
        fit = _log_distance_fit(metric, values, caught, min_std, newest.kind)
        if fit is None:
            fit = _fit_metric(
                metric,
                values,
                caught,
                "cantelli",
                std_floor(metric, values, rows, min_std),
                two_sided=False,
            )
        if fit is not None:
            fits.append(fit)
    level = _off_day_level_fit(singles, bad_single, flags, rows, min_std) if holidays else None
    out = {}
    for fpr in fprs:
        candidates: dict[str, LearnedConstraint] = {}
        for fit in fits:
            _add_candidates(candidates, newest.column, fit, fpr, p_missing)
        off_day = None
        if holidays:  # a calendar: the program judges days off without its volume metrics
            ordinary = {n: c for n, c in candidates.items() if c.metric not in VOLUME_METRICS}
            if level is not None:  # but the row count's level of the ordinary days
                levels: dict[str, LearnedConstraint] = {}
                _add_candidates(levels, newest.column, level, fpr, p_missing)
                ordinary.update({f"level:{n}": c for n, c in levels.items()})
            off_day = _select(ordinary, fpr)
        out[fpr] = Program(
            column=newest.column,
            kind=newest.kind,
            fpr=fpr,
            constraints=_select(candidates, fpr),
            off_day_constraints=off_day,
            reference=newest,
            recent_values=recent,
            history=len(history),
            candidates=len(candidates),
            corruptions=len(corrupted),
            recent_holidays=flags[-stationarity.MAX_LAG :],
            lattice=grid,
            support=limits,
            domain=domain,
        )
    return out


def _select(candidates: Mapping[str, LearnedConstraint], fpr: float) -> tuple[LearnedConstraint, ...]:
    """Greedy budgeted max coverage of the corruptions under ``fpr``, one constraint per metric
    (the tightest chosen), in metric order."""
    chosen = greedy_select(
        {name: c.fpr for name, c in candidates.items()},
        {name: set(c.caught) for name, c in candidates.items()},
        budget=fpr,
        depth=COVER_DEPTH,
        groups={name: cover_group(c.metric) for name, c in candidates.items()},
    )
    tightest: dict[str, LearnedConstraint] = {}
    for name in chosen:
        c = candidates[name]
        if c.metric not in tightest or c.k < tightest[c.metric].k:
            tightest[c.metric] = c
    return tuple(tightest[m] for m in sorted(tightest))


def cover_group(metric: str) -> str:
    """The evidence a metric reads, for the second cover of an issue (``COVER_DEPTH``): the
    distances to the previous batch are one group (``dist``; those over the value patterns of a
    categorical column another, ``dist_pat``), every other metric its own. Two distances read the
    same two distributions, so when one misses a draw of an issue the other misses it too: on the
    weather's origin column (24 readings of each of three stations every day) the chi-squared and
    cosine distances, bounded just above 0, both caught the training draw of a tenfold volume by
    its sampling noise and made its second cover, and the row count (which catches any tenfold
    day) was not bought; a test draw balanced enough passed both (bench/README.md, issue 22).

    >>> cover_group("dist_chi2"), cover_group("dist_pat_l1"), cover_group("row_count")
    ('dist', 'dist_pat', 'row_count')
    """
    if metric.startswith("dist_pat_"):
        return "dist_pat"
    if metric.startswith("dist_"):
        return "dist"
    return metric


def recent_values(singles: Sequence[Mapping[str, float]]) -> dict[str, tuple[float, ...]]:
    """Per metric, its values in the newest ``MAX_LAG`` batches (oldest first), back to the
    newest batch that lacks it: what a program's differenced constraints subtract."""
    out: dict[str, tuple[float, ...]] = {}
    for metrics in singles[-stationarity.MAX_LAG :]:
        out = append_recent(out, metrics)
    return out


def bound_for(metric: str) -> bounds.Bound:
    """The FPR bound of a single-distribution metric: the normal tail for counts, means, ratios
    and quantiles (``CLT_METRICS``), the skewed tail for a spread on its log scale
    (``LOG_PRICED_SCALES``), the extreme value tail for a batch's min and max
    (``EXTREME_METRICS``), Chebyshev for every other metric (sum, range, distinct count)."""
    if metric in CLT_METRICS:
        return "normal"
    if metric in LOG_PRICED_SCALES:
        return "skewed"
    if metric in EXTREME_METRICS:
        return "extreme"
    return "chebyshev"


def mostly_tied(values: Sequence[float], share: float = TIED_SHARE) -> bool:
    """Whether one value makes up at least ``share`` of ``values`` (exact float equality)."""
    if not values:
        return False
    _, counts = np.unique(np.asarray(values, dtype=float), return_counts=True)
    return bool(counts.max() >= share * len(values))


def looks_normal(values: Sequence[float], alpha: float = NORMALITY_ALPHA) -> bool:
    """Whether the Shapiro-Wilk test keeps normality for ``values`` at level ``alpha``. Fewer
    than 8 values, or a series without spread, cannot reject it: True."""
    from scipy.stats import shapiro

    arr = np.asarray(values, dtype=float)
    if len(arr) < 8 or float(np.ptp(arr)) == 0.0:
        return True
    return bool(shapiro(arr).pvalue >= alpha)


def on_lattice(values: Sequence[float], share: float = LATTICE_SHARE) -> bool:
    """Whether ``values`` take at most ``share`` of their count as distinct values (and at most
    two for a short series): a statistic of discrete data moving between a few atoms, not a
    continuous one (continuous values do not tie). Empty: False."""
    if not values:
        return False
    distinct = len(np.unique(np.asarray(values, dtype=float)))
    return distinct <= max(2.0, share * len(values))


def std_floor(metric: str, series: Sequence[float], rows: float, min_std: float) -> float:
    """The smallest spread a metric's history may claim (AUTOVALIDATE-NOTES: near-constant series).

    A constant history does not make a constant future: ratios get the binomial standard
    error of their mean rate at the mean batch size (the rate kept at least one row away
    from 0 and 1), row counts the Poisson one (sqrt of the mean), distinct counts half a
    value, the distinct exponent half a value of its distinct count (``0.5 / (d ln n)``);
    every other metric ``min_std`` relative to its mean's magnitude.
    """
    mean = float(np.mean(series)) if len(series) else 0.0
    relative = min_std * max(1.0, abs(mean))
    n = max(rows, 1.0)
    if metric.endswith("ratio") or metric == "completeness":
        p = min(max(mean, 1.0 / n), 1.0 - 1.0 / n) if n > 1 else 0.5
        return max(relative, math.sqrt(p * (1.0 - p) / n))
    if metric == "distinct_exponent" and n > 2:
        # half a distinct value (the distinct count's floor) carried through log(d) / log(n):
        # a key column's exponent of exactly 1 is not an equality constraint either
        distinct = max(n**mean, 1.0)
        return max(relative, 0.5 / (distinct * math.log(n)))
    if metric == "row_count":
        return max(relative, row_count_floor(series))
    if metric == "distinct_count":
        return max(relative, 0.5)
    return relative


def row_count_floor(series: Sequence[float]) -> float:
    """The least spread of a batch's row count: Poisson (sqrt of the mean), except for a count
    that never moved in its history (readings on a fixed schedule: 72 hourly rows every day),
    which gets the binomial spread of ``N`` slots each filled with probability ``q``,
    ``sqrt(N q (1 - q))``, ``N`` the count and ``q`` kept one slot below 1: about one row, where
    the Poisson floor (8.5 rows at 72) made a halved batch pass.

    Only a count that never moved: one that moved a little (a day with 70 readings among 72s) is
    under-dispersed too, but its dips come in bursts (an outage takes several hours at once), not
    slot by slot, and the slot floor then flagged a day with 60 readings on all six weather
    columns (bench/README.md, ``## autovalidate``, issue 22)."""
    arr = np.asarray(series, dtype=float)
    mean = float(arr.mean()) if len(arr) else 0.0
    poisson = math.sqrt(max(mean, 1.0))
    if len(arr) < 2 or mean <= 0 or float(np.ptp(arr)) > 0.0:
        return poisson
    slots = max(float(arr.max()), 1.0)
    q = min(mean / slots, 1.0 - 1.0 / slots) if slots > 1 else 0.5
    return min(poisson, math.sqrt(slots * q * (1.0 - q)))


# shares of rows (or of letters) whose history sitting exactly on 0 or 1 says "this never happens
# here": no NULL, no zero, no empty or padded value, no upper-case (or no lower-case) letter. They
# are priced by exact counting under the predictive law of the next batch's count
# (``bounds.binomial_count``), not by a normal floor; "any event" (count 0) is one of the candidates
# values off the column's lattice (``lattice.py``), values outside its support (``support.py``) and
# values outside a categorical column's closed domain (``domain.py``) are three more such events:
# none in the history
RARE_EVENT_METRICS = frozenset(
    {
        "completeness",
        "zero_ratio",
        "empty_ratio",
        "padded_ratio",
        "upper_ratio",
        LATTICE_METRIC,
        SUPPORT_METRIC,
        DOMAIN_METRIC,
    }
)


def rare_event_units(
    metric: str, singles: Sequence[Mapping[str, float]], rows: Sequence[float]
) -> list[float]:
    """Per history batch, how many units ``metric`` is a share of: rows for completeness,
    non-null rows for the value shares, letters for the upper-case share."""
    out = []
    for s, n in zip(singles, rows, strict=True):
        units = n if metric == "completeness" else n * s.get("completeness", 1.0)
        if metric == "upper_ratio":
            units *= s.get("char_len", 0.0)
        out.append(units)
    return out


@dataclass(frozen=True)
class _Fit:
    """One metric's history made ready for bounding: its transform, the transformed points it is
    learned from, their moments, its bound, and each corruption's value in the same form."""

    metric: str
    transform: stationarity.Transform
    values: tuple[float, ...]
    bound: bounds.Bound
    mean: float
    std: float
    floor: float
    two_sided: bool
    corrupted: dict[str, float | None]
    # rare events (``bound == "binomial"``): the boundary the history sat on, the mean units of a
    # batch and the units the history saw
    boundary: float = 0.0
    units: float = 0.0
    seen: float = 0.0
    # learned from the batches that have the metric; a batch without it passes
    missing_ok: bool = False
    # a distance fitted on its log (``_log_distance_fit``): ``values``, ``mean`` and ``std`` are
    # the logs', the constraint is ``distance <= exp(mean + k std)`` on the raw distance
    log_scale: bool = False
    # a row count spread by its Poisson floor (``_floor_sets_count``, the
    # count moved): its lower side is the Poisson law's own (``bounds.poisson_lower``)
    poisson: bool = False


def _rare_event_fit(
    metric: str,
    values: Sequence[float],
    singles: Sequence[Mapping[str, float]],
    history: Sequence[ColumnProfile],
    corrupted: Mapping[str, float | None],
) -> _Fit | None:
    """The binomial fit of a ``RARE_EVENT_METRICS`` share whose every history value is exactly 0
    or exactly 1 (None otherwise, or when the batches hold no units)."""
    if metric not in RARE_EVENT_METRICS or not values:
        return None
    boundary = values[0]
    if boundary not in (0.0, 1.0) or any(v != boundary for v in values):
        return None
    units = rare_event_units(metric, singles, [p.rows for p in history])
    mean_units = float(np.mean(units))
    if mean_units < 1.0:
        return None
    # the spread of one event in a batch: what ``k`` is counted in
    unit = 1.0 / mean_units
    return _Fit(
        metric=metric,
        transform=stationarity.Transform(),
        values=tuple(values),
        bound="binomial",
        mean=boundary,
        std=unit,
        floor=unit,
        two_sided=True,
        corrupted=dict(corrupted),
        boundary=boundary,
        units=mean_units,
        seen=float(sum(units)),
    )


def _log_distance_fit(
    metric: str,
    values: Sequence[float],
    corrupted: Mapping[str, float | None],
    min_std: float,
    kind: str = NUMERIC,
) -> _Fit | None:
    """The fit of a distance to the previous batch (``LOG_PRICED_DISTANCES``) on its log scale:
    the upper tail of ``log(distance)`` priced like a single metric's (the normal tail, or the
    skewed tail when Shapiro-Wilk rejects the logs' normality), one-sided, the constraint read
    back as ``distance <= exp(mean + k std)`` on the raw distance (``_Fit.log_scale``). None
    (Cantelli on the raw distance, as before) for another metric or a categorical column (whose
    ``dist_js`` and ``dist_kl`` are over value counts), or when a history distance is 0 or not
    finite (two identical batches: no log).

    Cantelli needs k = 31.6 standard deviations at 1e-3: a KS or JS distance, at most 1, whose
    history moved by 0.03 is then bounded above 1, and no synthetic issue is ever caught by it
    (``features.LOG_PRICED_DISTANCES``; bench/README.md, issue 22 fifth round)."""
    if kind != NUMERIC or metric not in LOG_PRICED_DISTANCES or len(values) < MIN_HISTORY - 1:
        return None
    if min(values) <= 0.0 or not all(math.isfinite(v) for v in values):
        return None
    logs = [math.log(v) for v in values]
    mean = float(np.mean(logs))
    std = float(np.std(logs, ddof=1))
    floor = min_std * max(1.0, abs(mean))
    return _Fit(
        metric=metric,
        transform=stationarity.Transform(),
        values=tuple(logs),
        bound="normal" if looks_normal(logs) else "skewed",
        mean=mean,
        std=max(std, floor),
        floor=floor,
        two_sided=False,
        corrupted=dict(corrupted),
        log_scale=True,
    )


def _off_day_level_fit(
    singles: Sequence[Mapping[str, float]],
    corrupted: Mapping[str, Mapping[str, float]],
    holidays: Sequence[bool],
    rows: float,
    min_std: float,
) -> _Fit | None:
    """The upper side of the row count's level on the ordinary days of the history
    (untransformed, the holiday points left out, one-sided: ``0 <= row_count <= upper``), for
    the selection that judges a day off (``off_day_constraints``).

    A day off (or a batch whose weekly difference reads one) is judged without the volume's
    ordinary constraints: its volume falls by design, by up to a third in the 2013 flights
    (Thanksgiving: 634 rows against 1,000 a week before; the eve and the bridge days 0.74 to
    1.08 of the same weekday), by any amount on a feed that stops on holidays. Without any
    volume constraint a tenfold or doubled day passed on every day off and on the days that
    compare with one, 12 of the flights' 30 January-February test days. A day off is assumed
    to carry no more rows than the ordinary days can, so their level bounds it above (for a
    count on a fixed schedule, its cap: ``schedule_cap``); below, nothing is judged. None when
    too few ordinary days remain."""
    series = [float(s["row_count"]) for s in singles if "row_count" in s]
    if len(series) < len(singles):
        return None
    fit = _fit_metric(
        "row_count",
        series,
        {n: s.get("row_count") for n, s in corrupted.items()},
        bound_for("row_count"),
        std_floor("row_count", series, rows, min_std),
        two_sided=False,
        holidays=holidays,
        stationary=False,
    )
    return None if fit is None else replace(fit, poisson=False)  # no lower side at all


def _sometimes_missing_fit(
    metric: str,
    values: Sequence[float],
    batches: int,
    corrupted: Mapping[str, float | None],
    rows: float,
    min_std: float,
) -> _Fit | None:
    """The fit of a single metric that some history batches lack (a gust or rain column is all
    NULL on calm or dry days, so its mean, min and quantiles are undefined there), from the
    batches that have it: present in at least ``SOMETIMES_MISSING_SHARE`` of them, not a volume
    metric (the calendar reads whole series), no transform (a difference would span the gaps);
    its constraints admit a batch without the metric (``LearnedConstraint.missing_ok``), which the
    history shows is ordinary. None when it does not qualify."""
    if metric in VOLUME_METRICS or len(values) < max(MIN_HISTORY, SOMETIMES_MISSING_SHARE * batches):
        return None
    if metric in ORDER_STATISTICS and (mostly_tied(values) or on_lattice(values)):
        return None
    fit = _fit_metric(
        metric,
        list(values),
        corrupted,
        bound_for(metric),
        std_floor(metric, values, rows, min_std),
        two_sided=True,
        stationary=False,
    )
    return None if fit is None else replace(fit, missing_ok=True)


def _fit_metric(
    metric: str,
    series: list[float],
    corrupted: Mapping[str, float | None],
    bound: bounds.Bound,
    floor: float,
    *,
    two_sided: bool,
    holidays: Sequence[bool] = (),
    stationary: bool = True,
) -> _Fit | None:
    """Transform (two-sided metrics: ``stationarity.fit``, unless ``stationary`` is False; points
    reading a holiday left out), moments and bound (the skewed tail when normality is rejected)
    of one metric's history; None when too few finite points remain."""
    lags = stationarity.SEASONAL_LAGS if metric in SEASONAL_METRICS else ()
    if metric == "row_count" and _on_schedule(series, holidays):
        stationary = False  # it returns to its cap after each dip: no difference
    if two_sided and stationary:
        transform = stationarity.fit(series, seasonal_lags=lags, skip=holidays)
    else:
        transform = stationarity.Transform()
    if metric in LOG_PRICED_SCALES and series and min(series) > 0.0:
        transform = replace(transform, log=True)  # a spread varies by factors: its log scale
    try:
        values = transform.series(series, skip=holidays)
    except (ValueError, FloatingPointError):
        return None
    if len(values) < MIN_HISTORY - 1 or not all(math.isfinite(v) for v in values):
        return None
    std = float(np.std(values, ddof=1)) if len(values) > 1 else 0.0
    floor_sets = _floor_sets_count(metric, transform, values, std, floor)
    if bound == "normal" and not floor_sets and metric not in NORMAL_ALWAYS and not looks_normal(values):
        bound = "skewed"
    before = series[:-1]  # a corrupted copy of the newest batch follows these
    return _Fit(
        metric=metric,
        transform=transform,
        values=tuple(values),
        bound=bound,
        mean=float(np.mean(values)),
        std=max(std, floor),
        floor=floor,
        two_sided=two_sided,
        corrupted={name: transform.value_of(raw, before) for name, raw in corrupted.items()},
        # a count that never moved has the slot floor (``row_count_floor``), not Poisson's
        poisson=floor_sets and float(np.ptp(values)) > 0.0,
    )


def _on_schedule(series: Sequence[float], holidays: Sequence[bool] = ()) -> bool:
    """Whether a row count series (its points on no holiday) sits on a fixed schedule
    (``schedule_cap``). Such a count is bounded as it is, never differenced: after a dip it
    returns to its cap, so ADF's unit root is no trend, and ADF on a series sitting on its cap
    with a few dips often keeps it (no transform rejects it, and lag-1 differencing is the
    fallback). The difference of a 72-row count with a dip got the skewed tail on the Poisson
    floor, ``-70 <= row_count - previous <= 70``, which passed every halved and doubled day
    (bench/README.md, ``## autovalidate``, issue 22, volume on small fixed schedules)."""
    return schedule_cap(stationarity.Transform().series(series, skip=holidays)) is not None


def _floor_sets_count(
    metric: str, transform: stationarity.Transform, values: Sequence[float], std: float, floor: float
) -> bool:
    """Whether a row count (untransformed) is spread by its floor rather than by its history (the
    Poisson floor above the history's own standard deviation: an under-dispersed count, such as
    one on a fixed schedule, ``schedule_cap``, or a calendar's count of weekly readings in a
    quarter, 12 to 14). Such a count keeps the normal tail: Shapiro-Wilk rejects a series sitting
    on its cap with a few dips, but the spread used is the floor's, whose law (Poisson at 72
    rows) is close to normal, not the history's. With the skewed tail a 72-row weather feed
    admitted ``10 <= row_count`` and every halved day passed; the normal tail admits about 42 at
    1e-3, where the year's fewest readings were 57 (bench/README.md, ``## autovalidate``, issue 22
    fourth round). Its upper side is the history's own (``count_ceiling``)."""
    return metric == "row_count" and not (transform.diff or transform.log) and std < floor


def count_ceiling(values: Sequence[float]) -> tuple[float, float] | None:
    """The upper side of an under-dispersed row count (its Poisson floor above its own spread):
    ``(centre, spread)``, the count bounded above by ``centre + k x spread``. On a fixed schedule
    (``schedule_cap``) the cap and its slot spread; otherwise the history's mean and its own
    standard deviation, at least a slot's (about one row, ``row_count_floor`` of a count that
    never moved). Outages take rows away in bursts, so below, the count keeps the Poisson law
    (``bounds.poisson_lower``); nothing in such a history went up by more than its spread, and
    the Poisson floor above (the normal tail on sqrt(13) = 3.6 rows for 13 weekly readings a
    quarter) let a doubled batch pass (bench/README.md, ``## autovalidate``, issue 22, the upper
    side of an under-dispersed count). None for fewer than two values.

    >>> centre, spread = count_ceiling([13.0] * 26 + [14.0, 12.0, 14.0, 12.0])
    >>> round(centre, 2), round(spread, 2)
    (13.0, 0.96)
    """
    if len(values) < 2:
        return None
    cap = schedule_cap(values)
    if cap is not None:
        return cap
    top = float(max(values))
    return float(np.mean(values)), max(float(np.std(values, ddof=1)), row_count_floor([top, top]))


def all_null_chance(singles: Sequence[Mapping[str, float]], rows: Sequence[float]) -> float:
    """The chance that the next batch's column is all NULL, so that its value metrics (mean,
    min, quantiles, distances: all but ``ALWAYS_DEFINED``) are undefined, read from the history:
    the mean over its batches of ``(1 - completeness) ** rows``, each batch's NULL rate taken as
    the next one's, its rows independent. 0 for a column that was always complete; about 0.1 for
    wind gusts, NULL on every calm hour, whose next day may have none at all.

    >>> all_null_chance([{"completeness": 1.0}, {"completeness": 0.0}], [24.0, 24.0])
    0.5
    """
    chances = [
        (1.0 - min(max(float(s["completeness"]), 0.0), 1.0)) ** float(n)
        for s, n in zip(singles, rows, strict=True)
        if s.get("completeness") is not None and n >= 1
    ]
    return float(np.mean(chances)) if chances else 0.0


def schedule_cap(counts: Sequence[float]) -> tuple[float, float] | None:
    """The upper side of a row count on a fixed schedule: ``(N, slot spread)`` when the history's
    maximum ``N`` was reached on at least half of its batches (the others fell short of it: a
    reading or an hour missing), else None. Nothing in such a history went above ``N``, so above
    it the count gets the spread of ``N`` slots, about one row (``row_count_floor`` of a count
    that never moved), while below it the dips keep the Poisson floor (outages come in bursts).

    >>> schedule_cap([24.0] * 28 + [23.0, 23.0])[0]
    24.0
    """
    if not counts:
        return None
    top = float(max(counts))
    if top < 2 or sum(v == top for v in counts) < 0.5 * len(counts):
        return None
    return top, row_count_floor([top, top])


def _missing_terms(metric: str, level: float, p_missing: float) -> tuple[bool, float]:
    """Whether a candidate at ``level`` admits an undefined value (``missing_ok``), and what
    flagging one adds to its FPR: a metric an all-NULL batch leaves undefined with a chance
    ``p_missing`` at or above the level admits it; below, it flags it and pays ``p_missing``."""
    if metric in ALWAYS_DEFINED:
        return False, 0.0
    if p_missing >= level:
        return True, 0.0
    return False, p_missing


def _add_candidates(
    out: dict[str, LearnedConstraint], column: str, fit: _Fit, fpr: float, p_missing: float = 0.0
) -> None:
    """The candidates of one fitted metric at each level of the FPR ladder under ``fpr`` that
    pass leave-one-out, with the corruptions each catches. A batch whose column is all NULL
    leaves the metric undefined, with the chance ``p_missing`` (``all_null_chance``): see
    ``_missing_terms``."""
    n = len(fit.values)
    values = list(fit.values)
    if fit.bound == "binomial":
        _add_rare_event_candidates(out, column, fit, fpr, p_missing)
        return
    for fraction in FPR_LADDER:
        k = bounds.k_for(fpr * fraction, fit.bound, n)
        lower, upper = _domain(
            fit.metric,
            fit.transform,
            fit.mean - k * fit.std if fit.two_sided else (-math.inf if fit.transform.log else 0.0),
            fit.mean + k * fit.std,
        )
        if not _leave_one_out_ok(values, k, fit.two_sided, fit.floor):
            continue
        if fit.log_scale:
            lower, upper = 0.0, math.exp(min(fit.mean + k * fit.std, 700.0))
        untransformed = not (fit.transform.diff or fit.transform.log)
        if fit.poisson:  # an under-dispersed count that moved: its schedule's cap, or its own spread
            cap = count_ceiling(values)
        else:
            cap = schedule_cap(values) if fit.metric == "row_count" and untransformed else None
        if cap is not None:
            upper = min(upper, max(cap[0] + k * cap[1], max(values)))
        if fit.poisson and fit.two_sided:  # the lower side's half of the level, under its Poisson law
            lower = float(bounds.poisson_lower(fpr * fraction / 2.0, fit.mean, n))
            if not _poisson_leave_one_out_ok(values, fpr * fraction / 2.0):
                continue
        missing_ok, missing_cost = _missing_terms(fit.metric, fpr * fraction, p_missing)
        missing_ok = missing_ok or fit.missing_ok
        caught = _caught(fit.corrupted, lower, upper, missing_ok)
        out[f"{fit.metric}@{fraction:g}"] = LearnedConstraint(
            column=column,
            metric=fit.metric,
            lower=lower,
            upper=upper,
            bound=fit.bound,
            k=k,
            fpr=bounds.fpr_at(k, fit.bound, n) + (0.0 if missing_ok else missing_cost),
            transform=fit.transform,
            caught=tuple(sorted(caught)),
            history_mean=fit.mean,
            history_std=fit.std,
            missing_ok=missing_ok,
        )


def _caught(corrupted: Mapping[str, float | None], lower: float, upper: float, missing_ok: bool) -> list[str]:
    """The corruptions a constraint ``lower <= value <= upper`` flags: a value outside the bounds,
    or an undefined one (None) unless ``missing_ok``."""
    return [
        name
        for name, v in corrupted.items()
        if (v is None and not missing_ok) or (v is not None and not (lower <= v <= upper))
    ]


def _add_rare_event_candidates(
    out: dict[str, LearnedConstraint], column: str, fit: _Fit, fpr: float, p_missing: float = 0.0
) -> None:
    """A rare-event share's candidates: at each ladder level, the boundary plus or minus the
    share of ``bounds.binomial_count`` events (and half a unit, so the count itself is admitted)."""
    for fraction in FPR_LADDER:
        count = bounds.binomial_count(fpr * fraction, fit.units, fit.seen)
        width = (count + 0.5) / fit.units
        lower, upper = max(fit.boundary - width, 0.0), min(fit.boundary + width, 1.0)
        missing_ok, missing_cost = _missing_terms(fit.metric, fpr * fraction, p_missing)
        caught = _caught(fit.corrupted, lower, upper, missing_ok)
        out[f"{fit.metric}@{fraction:g}"] = LearnedConstraint(
            column=column,
            metric=fit.metric,
            lower=lower,
            upper=upper,
            bound="binomial",
            k=width / fit.std,
            fpr=bounds.binomial_fpr(count, fit.units, fit.seen) + missing_cost,
            transform=fit.transform,
            caught=tuple(sorted(caught)),
            history_mean=fit.mean,
            history_std=fit.std,
            missing_ok=missing_ok,
        )


# the metrics an all-NULL batch still has (every other one is then undefined: ``all_null_chance``)
ALWAYS_DEFINED = frozenset({"row_count", "completeness"})

NON_NEGATIVE = frozenset(
    {"row_count", "std", "range", "distinct_count", "str_len", "char_len", "digit_len", "punc_len"}
)


def _domain(
    metric: str, transform: stationarity.Transform, lower: float, upper: float
) -> tuple[float, float]:
    """Clip an interval to the values the raw metric can take (readability; same verdicts)."""
    if transform.log or transform.diff:
        return lower, upper
    if metric == "completeness" or metric.endswith("ratio"):
        return max(lower, 0.0), min(upper, 1.0)
    if metric in NON_NEGATIVE or metric.startswith("dist_"):
        return max(lower, 0.0), upper
    return lower, upper


def _poisson_leave_one_out_ok(values: list[float], level: float) -> bool:
    """No history count falls below the Poisson lower bound (``bounds.poisson_lower`` at
    ``level``) learned from the others. The smallest count is the one to check: leaving it out
    gives the highest mean, so the highest bound."""
    n = len(values)
    if n < 3:
        return True
    low = min(values)
    return low >= bounds.poisson_lower(level, (float(sum(values)) - low) / (n - 1), n - 1)


def _leave_one_out_ok(values: list[float], k: float, two_sided: bool, floor: float) -> bool:
    """No history point falls outside the interval learned from the others."""
    arr = np.asarray(values, dtype=float)
    n = len(arr)
    if n < 3:
        return True
    total, total_sq = float(arr.sum()), float((arr * arr).sum())
    for i in range(n):
        m = (total - arr[i]) / (n - 1)
        var = max((total_sq - arr[i] ** 2 - (n - 1) * m * m) / (n - 2), 0.0)
        s = max(math.sqrt(var), floor)
        if arr[i] > m + k * s or (two_sided and arr[i] < m - k * s):
            return False
    return True
