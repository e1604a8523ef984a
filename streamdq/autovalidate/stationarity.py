"""Make a metric series stationary before bounding it (AVH, Sec. 3.3).

Runs on the driver over a short history of floats. ``fit(history)`` tries, in order,
the raw series, its lag-1 difference, the log series and the differenced log series
(log only when all values are > 0) and keeps the first one the Augmented Dickey-Fuller
test (statsmodels ``adfuller``) calls stationary at ``alpha``. The chosen transform is
remembered in a ``Transform`` so a new point can be mapped the same way:
``transform.apply_next(history, x)``. Histories shorter than ``min_points`` or constant
series keep the identity transform (ADF is undefined there).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from statsmodels.tools.sm_exceptions import SingularMatrixWarning
from statsmodels.tsa.stattools import adfuller

# warnings after which an ADF p-value is not trusted
INCONCLUSIVE: tuple[type[Warning], ...] = (SingularMatrixWarning, RuntimeWarning)


@dataclass(frozen=True)
class Transform:
    """A remembered transform: ``log`` then ``diff`` (lag-1) when set."""

    log: bool = False
    diff: bool = False

    def series(self, history: Sequence[float]) -> list[float]:
        """The transformed history (one value shorter when ``diff``)."""
        x = np.asarray(history, dtype=float)
        if self.log:
            x = np.log(x)
        if self.diff:
            x = np.diff(x)
        return [float(v) for v in x]

    def apply_next(self, history: Sequence[float], value: float) -> float:
        """The transformed value of a new point following ``history``."""
        v = math.log(value) if self.log else float(value)
        if self.diff:
            prev = math.log(history[-1]) if self.log else float(history[-1])
            v -= prev
        return v

    def value_of(self, raw: float | None, last: float | None) -> float | None:
        """A new raw metric value in the learned form, given the previous raw value ``last``.

        None when there is no value, when ``diff`` has no previous value, or when ``log``
        meets a non-positive value (outside the learned domain); a non-finite raw value is
        returned as is (it is outside every finite interval).
        """
        if raw is None or not math.isfinite(raw):
            return raw
        if self.diff and last is None:
            return None
        try:
            return self.apply_next([last] if last is not None else [], raw)
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


def fit(history: Sequence[float], alpha: float = 0.05, min_points: int = 8) -> Transform:
    """First transform (identity, diff, log, log+diff) that ADF calls stationary."""
    if len(history) < min_points or float(np.ptp(np.asarray(history, dtype=float))) == 0.0:
        return Transform()
    candidates = [Transform(), Transform(diff=True)]
    if all(v > 0 for v in history):
        candidates += [Transform(log=True), Transform(log=True, diff=True)]
    for t in candidates:
        if is_stationary(t.series(history), alpha):
            return t
    return Transform(diff=True)
