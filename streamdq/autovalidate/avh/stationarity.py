"""Make a metric series stationary before bounding it (AVH, Sec. 3.3).

Runs on the driver over a short history of floats. ``fit(history)`` tries, in order,
the raw series, its lag-1 difference, the log series and the differenced log series
(log only when all values are > 0) and keeps the first one the Augmented Dickey-Fuller
test (statsmodels ``adfuller``) calls stationary at ``alpha``. The chosen transform is
remembered in a ``Transform`` so a new point can be mapped the same way:
``transform.apply_next(history, x)``. Histories shorter than ``min_points`` or constant
series keep the identity transform (ADF is undefined there).

Seasonal differencing: a series with a period (flights per day: fewer on Saturdays; per hour:
fewer at night) is compared with the same point one period back, ``x[t] - x[t - s]`` for
``s`` in ``SEASONAL_LAGS`` (7: a week of daily batches; 24: a day of hourly windows) when
the history leaves at least ``min_points`` differences. ADF on 20-odd points rarely rejects
a unit root, so the seasonal form is judged by its spread instead: it replaces the ADF
choice when its variance is at most ``SEASONAL_MAX_VARIANCE`` (a half) of both that form's
and the undifferenced series' (same scale, log or not). For a series without the period
the seasonal difference has about twice the variance of the undifferenced series, so a
chance pick needs a four-fold sampling error.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from statsmodels.tools.sm_exceptions import SingularMatrixWarning
from statsmodels.tsa.stattools import adfuller

from streamdq.errors import InvalidArgument

# warnings after which an ADF p-value is not trusted
INCONCLUSIVE: tuple[type[Warning], ...] = (SingularMatrixWarning, RuntimeWarning)
SEASONAL_LAGS: tuple[int, ...] = (7, 24)
SEASONAL_MAX_VARIANCE = 0.5
MAX_LAG = max(SEASONAL_LAGS)  # raw values a program keeps per metric to apply any transform


@dataclass(frozen=True)
class Transform:
    """A remembered transform: ``log`` then ``diff`` (the difference with the value ``lag``
    batches back: 1 for the previous batch, a period for seasonal differencing) when set."""

    log: bool = False
    diff: bool = False
    lag: int = 1

    def __post_init__(self) -> None:
        if self.lag < 1:
            raise InvalidArgument(f"a difference lag is >= 1, got {self.lag}")

    @property
    def needs(self) -> int:
        """How many raw values before a new point its transform reads (0, 1 or the lag)."""
        return self.lag if self.diff else 0

    def series(self, history: Sequence[float], skip: Sequence[bool] = ()) -> list[float]:
        """The transformed history (``lag`` values shorter when ``diff``), without the points
        that read a raw value flagged in ``skip`` (parallel to ``history``; a holiday): a raw
        point so flagged, a difference with either end so flagged."""
        x = np.asarray(history, dtype=float)
        if self.log:
            x = np.log(x)
        if self.diff:
            x = x[self.lag :] - x[: -self.lag]
        if not any(skip):
            return [float(v) for v in x]
        lag = self.needs
        return [float(v) for i, v in enumerate(x) if not skip[i + lag] and not (lag and skip[i])]

    def apply_next(self, history: Sequence[float], value: float) -> float:
        """The transformed value of a new point following ``history`` (oldest first)."""
        v = math.log(value) if self.log else float(value)
        if self.diff:
            before = float(history[-self.lag])
            v -= math.log(before) if self.log else before
        return v

    def value_of(self, raw: float | None, recent: Sequence[float] = ()) -> float | None:
        """A new raw metric value in the learned form, given the raw values of the batches
        before it (``recent``, oldest first; only the last ``needs`` are read).

        None when there is no value, when ``diff`` has fewer than ``lag`` earlier values, or
        when ``log`` meets a non-positive value (outside the learned domain); a non-finite raw
        value is returned as is (it is outside every finite interval).
        """
        if raw is None or not math.isfinite(raw):
            return raw
        if len(recent) < self.needs:
            return None
        try:
            return self.apply_next(recent, raw)
        except ValueError:
            return None


def is_stationary(series: Sequence[float], alpha: float = 0.05) -> bool:
    """ADF test: unit-root null rejected at ``alpha``.

    A series the regression cannot fit (a rank-deficient design, e.g. a history that repeats
    one value on most batches, or a numerical warning) is not tested: it counts as
    stationary, so the series keeps its raw form (differencing such a series only adds
    noise), and the warnings statsmodels raises for it are not printed.
    """
    x = np.asarray(series, dtype=float)
    if len(x) < 8 or float(np.ptp(x)) == 0.0:
        return True
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pvalue = adfuller(x, autolag="AIC")[1]  # index 1 stays the p-value across versions
    if any(issubclass(w.category, INCONCLUSIVE) for w in caught):
        return True
    return bool(pvalue < alpha)


def fit(
    history: Sequence[float],
    alpha: float = 0.05,
    min_points: int = 8,
    seasonal_lags: Sequence[int] = SEASONAL_LAGS,
    skip: Sequence[bool] = (),
) -> Transform:
    """First transform (identity, diff, log, log+diff) that ADF calls stationary (lag-1
    differencing when none is), replaced by the seasonal difference of the same scale whose
    variance is smallest when that is at most ``SEASONAL_MAX_VARIANCE`` of the chosen form's
    and of the undifferenced series'. Every form is judged on its points that read no value
    flagged in ``skip`` (``Transform.series``: a holiday's volume says nothing of the weekly
    pattern). The same history gives the same transform (cached)."""
    flags = tuple(bool(f) for f in skip) if any(skip) else ()
    return _fit(tuple(float(v) for v in history), alpha, min_points, tuple(seasonal_lags), flags)


@functools.lru_cache(maxsize=8192)
def _fit(
    history: tuple[float, ...],
    alpha: float,
    min_points: int,
    seasonal_lags: tuple[int, ...],
    skip: tuple[bool, ...],
) -> Transform:
    kept = Transform().series(history, skip)
    if len(kept) < min_points or float(np.ptp(np.asarray(kept, dtype=float))) == 0.0:
        return Transform()
    chosen = _adf_choice(history, alpha, skip)
    spread = min(
        float(np.var(chosen.series(history, skip), ddof=1)),
        float(np.var(Transform(log=chosen.log).series(history, skip), ddof=1)),
    )
    best, best_spread = chosen, spread * SEASONAL_MAX_VARIANCE
    for lag in seasonal_lags:
        if len(history) - lag < min_points:
            continue
        seasonal = Transform(log=chosen.log, diff=True, lag=lag)
        values = seasonal.series(history, skip)
        if len(values) < 2:
            continue
        var = float(np.var(values, ddof=1))
        if var <= best_spread:
            best, best_spread = seasonal, var
    return best


def _adf_choice(history: Sequence[float], alpha: float, skip: Sequence[bool] = ()) -> Transform:
    candidates = [Transform(), Transform(diff=True)]
    if all(v > 0 for v in history):
        candidates += [Transform(log=True), Transform(log=True, diff=True)]
    for t in candidates:
        if is_stationary(t.series(history, skip), alpha):
            return t
    return Transform(diff=True)
