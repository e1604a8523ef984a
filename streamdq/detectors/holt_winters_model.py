"""Additive Holt-Winters (triple exponential smoothing, ETS(A,A,A)): the core math shared by the
online HoltWinters detector and Deequ's batch form.

Follows Deequ's ``HoltWinters.additiveHoltWinters`` exactly: level_0 = mean of the first period,
trend_0 = (sum of the second period - sum of the first) / m^2, the first m seasonal components are the
first period minus level_0; the one-step forecast of point t is ``level_t + trend_t + season_{t-m}``;
for t >= len(series) the forecast itself is fed back as the observation (multi-step forecasts);
residuals are ``series[t] - forecast_t`` for the in-sample points. ``fit`` picks (alpha, beta, gamma)
in [0, 1]^3 with scipy's L-BFGS-B from (0.3, 0.1, 0.1) minimising the residual sum of squares, as Deequ
does with breeze's LBFGSB (approximate gradients; the optimum may differ in the last digits). A fit
costs O(len(series)) per objective evaluation, a few hundred evaluations: tens of milliseconds for
four periods of 24.

The running model is ``HWModel(level, trend, season)`` where ``season[0]`` is the seasonal component
of the next point; ``step`` advances it by one observation in O(1) (plus the O(m) ring rotation).

>>> model = initial_model([10.0, 20.0, 12.0, 22.0], period=2)
>>> model, model.forecast()
(HWModel(level=15.0, trend=1.0, season=(-5.0, 5.0)), 11.0)
>>> initial_model([1.0, 2.0, 3.0], period=2)
Traceback (most recent call last):
...
streamdq.errors.InvalidArgument: Holt-Winters needs at least two full periods (4 points), got 3
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize
from threadpoolctl import ThreadpoolController

from streamdq.errors import InvalidArgument

INITIAL_PARAMETERS = (0.3, 0.1, 0.1)

_controller: ThreadpoolController | None = None


def _blas_controller() -> ThreadpoolController:
    """One controller per process (building it inspects the loaded libraries; using it is cheap)."""
    global _controller
    if _controller is None:
        _controller = ThreadpoolController()
    return _controller


@dataclass(frozen=True)
class HWModel:
    level: float
    trend: float
    season: tuple[float, ...]  # season[0] belongs to the next point

    def forecast(self) -> float:
        return self.level + self.trend + self.season[0]

    def step(self, value: float, alpha: float, beta: float, gamma: float) -> HWModel:
        s = self.season[0]
        level = alpha * (value - s) + (1 - alpha) * (self.level + self.trend)
        trend = beta * (level - self.level) + (1 - beta) * self.trend
        season = gamma * (value - self.level - self.trend) + (1 - gamma) * s
        return HWModel(level, trend, (*self.season[1:], season))


def initial_model(series: Sequence[float], period: int) -> HWModel:
    """Deequ's initialisation from the first two periods (needs ``len(series) >= 2 * period``)."""
    if len(series) < 2 * period:
        raise InvalidArgument(
            f"Holt-Winters needs at least two full periods ({2 * period} points), got {len(series)}"
        )
    first = sum(series[:period])
    second = sum(series[period : 2 * period])
    level = first / period
    trend = (second - first) / (period * period)
    return HWModel(level, trend, tuple(v - level for v in series[:period]))


def smooth(
    series: Sequence[float], period: int, alpha: float, beta: float, gamma: float
) -> tuple[HWModel, list[float]]:
    """Run the model over ``series``: the model after the last point and the in-sample residuals.

    Same arithmetic as ``HWModel.step`` (so the results are bit-identical) on a growing seasonal list
    instead of a ring, which keeps each step O(1): this is the inner loop of ``fit``.
    """
    model = initial_model(series, period)
    level, trend = model.level, model.trend
    season = list(model.season)
    residuals = []
    for t, value in enumerate(series):
        s = season[t]
        residuals.append(value - (level + trend + s))
        new_level = alpha * (value - s) + (1 - alpha) * (level + trend)
        new_trend = beta * (new_level - level) + (1 - beta) * trend
        season.append(gamma * (value - level - trend) + (1 - gamma) * s)
        level, trend = new_level, new_trend
    return HWModel(level, trend, tuple(season[len(series) :])), residuals


def forecasts(model: HWModel, horizon: int, alpha: float, beta: float, gamma: float) -> list[float]:
    """Deequ's multi-step forecasts: each forecast is fed back as the next observation."""
    out = []
    for _ in range(horizon):
        value = model.forecast()
        out.append(value)
        model = model.step(value, alpha, beta, gamma)
    return out


def _rss(params: np.ndarray, series: Sequence[float], period: int) -> float:
    alpha, beta, gamma = (float(p) for p in params)
    _, residuals = smooth(series, period, alpha, beta, gamma)
    return float(sum(r * r for r in residuals))


def fit(series: Sequence[float], period: int) -> tuple[float, float, float]:
    """(alpha, beta, gamma) minimising the in-sample RSS, by L-BFGS-B in [0, 1]^3 from (0.3, 0.1, 0.1)."""
    initial_model(series, period)  # validates the length
    # scipy's L-BFGS-B calls BLAS on 3-vectors: a multi-threaded OpenBLAS makes that ~10x slower on a
    # busy driver, so the fit runs with one BLAS thread.
    with _blas_controller().limit(limits=1, user_api="blas"):
        result = minimize(
            _rss,
            np.array(INITIAL_PARAMETERS),
            args=(list(series), period),
            method="L-BFGS-B",
            bounds=[(0.0, 1.0)] * 3,
        )
    alpha, beta, gamma = (min(max(float(p), 0.0), 1.0) for p in result.x)
    return alpha, beta, gamma
