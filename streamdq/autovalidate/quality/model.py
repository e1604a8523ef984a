"""The math of the table-level quality score (Uber's Data Quality Monitor), pure numpy.

``fit_model(rows, names, ...)`` turns a bounded history of closed windows (a matrix: rows =
windows in time order, columns = metric series, NaN = missing) into a ``QualityModel``:

1. **Series kept.** A series is modelled when it has a finite value in at least half of the
   rows (``MIN_PRESENT``); a series that appeared later enters the model at the first refit
   where it does. Missing values of a kept series (NaN: a failed metric, a window without it)
   are imputed with the series mean, i.e. 0 after standardization.
2. **Standardize.** ``z = (x - mean) / scale`` with ``scale = max(std, 1e-9 * max(1, |mean|))``:
   a constant series (no spread) is kept with a tiny scale, so it has no weight in the PCA
   (its column of ``z`` is 0) but any later change of it shows in the reconstruction residual
   (step 5) as an extreme deviation, as it would in Uber's re-projection with the latest point.
3. **PCA** by ``numpy.linalg.svd`` of the standardized matrix: the top ``k`` components, ``k``
   the least number whose cumulative explained-variance ratio reaches ``variance``, at most
   ``max_components`` and at most the number of non-zero singular values. Each loading vector's
   largest-magnitude entry is made positive (a deterministic sign).
4. **Forecast** each component series one step ahead with additive Holt-Winters
   (``streamdq.detectors.holt_winters_model``): with ``period`` the seasonal ETS(A,A,A) fitted
   by L-BFGS-B; with ``period=None`` Holt's linear trend, the same model with period 1 and
   the seasonal smoothing ``gamma`` fixed at 0 (only alpha and beta fitted). ``sigma`` is the
   root mean square of the in-sample one-step residuals after the initialisation points (the
   first period, or the first two points for Holt), floored at ``SIGMA_FLOOR`` times the
   component's own standard deviation (a perfectly regular component would otherwise flag
   any rounding error).
5. **Residual.** What the top components do not explain, ``r = ||z - V V^T z||``, is scored as
   an extra pseudo-component. Its reference (mean and standard deviation of ``r`` for normal
   windows) comes from a blocked cross-validation over the history (each block projected on
   a basis fitted without it), because in-sample residuals are biased low. Between refits the
   basis is fixed (constant cost per point), so a deviation orthogonal to it, e.g. a
   constant series that moves or a correlation that breaks, lands here instead of in a
   component.

Scoring rule (``band``): with the one-step error ``e`` and the residual scale ``sigma``, a
component scores the number of the prediction-interval half-widths ``1, 2, 3, 4 * sigma`` that
``|e|`` exceeds: ``|e| <= sigma`` -> 0, ``sigma < |e| <= 2 sigma`` -> 1, ... , ``|e| > 4 sigma``
-> 4. The residual scores ``band(max(r - mean_r, 0) / sd_r)`` (one-sided: a small residual is
never anomalous). The table score is the sum of the three largest of these scores (0..12).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.optimize import minimize

from streamdq.detectors.holt_winters_model import HWModel, _blas_controller, fit, smooth
from streamdq.errors import InvalidArgument

MIN_PRESENT = 0.5  # fraction of the fit rows a series needs values in to be modelled
SIGMA_FLOOR = 0.05  # sigma >= SIGMA_FLOOR * the spread of the scored series
ABS_FLOOR = 1e-9
BANDS = (1.0, 2.0, 3.0, 4.0)
MAX_BAND = len(BANDS)
TOP_SCORES = 3
CV_FOLDS = 4


def band(deviation: float) -> int:
    """Number of the interval half-widths (1, 2, 3, 4 sigma) that ``|deviation|`` (in sigmas) exceeds."""
    if math.isnan(deviation):
        return 0
    d = abs(deviation)
    return sum(1 for w in BANDS if d > w)


def table_score(scores: Sequence[int]) -> int:
    """The sum of the ``TOP_SCORES`` largest scores (0..12)."""
    return int(sum(sorted(scores, reverse=True)[:TOP_SCORES]))


def scale_floor(center: float) -> float:
    return ABS_FLOOR * max(1.0, abs(center))


@dataclass(frozen=True)
class ComponentModel:
    """Holt-Winters of one principal-component series: parameters, running model, residual sigma."""

    alpha: float
    beta: float
    gamma: float
    level: float
    trend: float
    season: tuple[float, ...]
    sigma: float

    def model(self) -> HWModel:
        return HWModel(self.level, self.trend, self.season)

    def forecast(self) -> float:
        return self.model().forecast()

    def advance(self, value: float) -> ComponentModel:
        """The model after observing ``value`` (clipped to forecast +- 4 sigma, so a spike does
        not bend the level; a lasting shift is learned gradually and at the next refit)."""
        f = self.forecast()
        width = MAX_BAND * self.sigma
        learned = min(max(value, f - width), f + width)
        m = self.model().step(learned, self.alpha, self.beta, self.gamma)
        return ComponentModel(self.alpha, self.beta, self.gamma, m.level, m.trend, m.season, self.sigma)

    def to_dict(self) -> dict[str, Any]:
        return {
            "params": [self.alpha, self.beta, self.gamma],
            "level": self.level,
            "trend": self.trend,
            "season": list(self.season),
            "sigma": self.sigma,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ComponentModel:
        a, b, g = (float(p) for p in data["params"])
        return cls(
            a,
            b,
            g,
            float(data["level"]),
            float(data["trend"]),
            tuple(float(s) for s in data["season"]),
            float(data["sigma"]),
        )


def _holt_rss(params: np.ndarray, series: list[float]) -> float:
    _, residuals = smooth(series, 1, float(params[0]), float(params[1]), 0.0)
    return float(sum(r * r for r in residuals))


def fit_component(series: Sequence[float], period: int | None) -> ComponentModel:
    """Fit additive Holt-Winters (``period``) or Holt's linear trend (``period=None``) to a series.

    Needs ``len(series) >= 2 * period`` (seasonal) or ``>= 3`` (Holt).
    """
    values = [float(v) for v in series]
    if period is None:
        if len(values) < 3:
            raise InvalidArgument(f"Holt's linear trend needs at least 3 points, got {len(values)}")
        result = minimize(
            _holt_rss, np.array([0.3, 0.1]), args=(values,), method="L-BFGS-B", bounds=[(0.0, 1.0)] * 2
        )
        alpha, beta = (min(max(float(p), 0.0), 1.0) for p in result.x)
        gamma, m, skip = 0.0, 1, 2
    else:
        alpha, beta, gamma = fit(values, period)
        m, skip = period, period
    model, residuals = smooth(values, m, alpha, beta, gamma)
    tail = residuals[skip:] or residuals
    rmse = math.sqrt(sum(r * r for r in tail) / len(tail))
    spread = float(np.std(values))
    sigma = max(rmse, SIGMA_FLOOR * spread, ABS_FLOOR)
    return ComponentModel(alpha, beta, gamma, model.level, model.trend, model.season, sigma)


@dataclass(frozen=True)
class QualityModel:
    """A fitted basis and forecasters: fixed between refits, applied in O(series * components)."""

    names: tuple[str, ...]
    center: tuple[float, ...]
    scale: tuple[float, ...]
    loadings: tuple[tuple[float, ...], ...]  # one vector (len(names)) per component
    explained: tuple[float, ...]
    components: tuple[ComponentModel, ...]
    residual_mean: float
    residual_sigma: float
    rows: int

    @property
    def k(self) -> int:
        return len(self.components)

    def standardize(self, values: dict[str, float]) -> tuple[np.ndarray, int]:
        """``z`` of a point over the model's series (missing -> 0) and the number missing."""
        x = np.array([values.get(n, math.nan) for n in self.names], dtype=float)
        missing = ~np.isfinite(x)
        z = (x - np.asarray(self.center)) / np.asarray(self.scale)
        z[missing] = 0.0
        return z, int(missing.sum())

    def project(self, z: np.ndarray) -> tuple[np.ndarray, float]:
        """Component values and the residual norm of a standardized point."""
        if self.k == 0:
            return np.zeros(0), float(np.linalg.norm(z))
        v = np.asarray(self.loadings, dtype=float).T  # (series, k)
        p = z @ v
        return p, float(np.linalg.norm(z - v @ p))

    def expected(self, forecasts: np.ndarray) -> np.ndarray:
        """The standardized point the component forecasts stand for (``V f``; 0 without components)."""
        if self.k == 0:
            return np.zeros(len(self.names))
        return np.asarray(self.loadings, dtype=float).T @ forecasts

    def with_components(self, components: tuple[ComponentModel, ...]) -> QualityModel:
        return QualityModel(
            self.names,
            self.center,
            self.scale,
            self.loadings,
            self.explained,
            components,
            self.residual_mean,
            self.residual_sigma,
            self.rows,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "names": list(self.names),
            "center": list(self.center),
            "scale": list(self.scale),
            "loadings": [list(v) for v in self.loadings],
            "explained": list(self.explained),
            "components": [c.to_dict() for c in self.components],
            "residual": [self.residual_mean, self.residual_sigma],
            "rows": self.rows,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> QualityModel:
        return cls(
            names=tuple(str(n) for n in data["names"]),
            center=tuple(float(v) for v in data["center"]),
            scale=tuple(float(v) for v in data["scale"]),
            loadings=tuple(tuple(float(x) for x in v) for v in data["loadings"]),
            explained=tuple(float(v) for v in data["explained"]),
            components=tuple(ComponentModel.from_dict(c) for c in data["components"]),
            residual_mean=float(data["residual"][0]),
            residual_sigma=float(data["residual"][1]),
            rows=int(data["rows"]),
        )


def select_components(singular: np.ndarray, variance: float, max_components: int) -> int:
    """The least ``k`` whose cumulative explained-variance ratio reaches ``variance`` (capped)."""
    energy = singular**2
    total = float(energy.sum())
    if total <= 0.0:
        return 0
    nonzero = int((singular > 1e-10 * singular[0]).sum())
    cumulative = np.cumsum(energy) / total
    k = int(np.searchsorted(cumulative, variance - 1e-12) + 1)
    return max(0, min(k, max_components, nonzero))


def _basis(z: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(singular values, top-k right singular vectors as columns) of ``z``."""
    _, s, vt = np.linalg.svd(z, full_matrices=False)
    return s, vt[:k].T


def _cv_residuals(z: np.ndarray, k: int) -> np.ndarray:
    """Residual norms of each row projected on a basis fitted without its block (blocked CV)."""
    n = z.shape[0]
    folds = max(2, min(CV_FOLDS, n // 2))
    out = np.zeros(n)
    for block in np.array_split(np.arange(n), folds):
        train = np.setdiff1d(np.arange(n), block)
        mu = z[train].mean(axis=0)
        held = z[block] - mu
        if k == 0:
            out[block] = np.linalg.norm(held, axis=1)
            continue
        s, v = _basis(z[train] - mu, k)
        v = v[:, : int((s > 1e-10 * (s[0] if s.size else 1.0)).sum())]
        out[block] = np.linalg.norm(held - (held @ v) @ v.T, axis=1)
    return out


def kept_series(matrix: np.ndarray) -> np.ndarray:
    """Indices of the columns with a finite value in at least ``MIN_PRESENT`` of the rows."""
    n = matrix.shape[0]
    present = np.isfinite(matrix).sum(axis=0)
    return np.flatnonzero(present >= max(2, math.ceil(MIN_PRESENT * n)))


def fit_model(
    matrix: np.ndarray,
    names: Sequence[str],
    *,
    variance: float,
    max_components: int,
    period: int | None,
) -> QualityModel | None:
    """Fit the basis and the component forecasters to ``matrix`` (rows in time order, NaN =
    missing). None when no series has values in enough rows.

    Runs with one BLAS thread: the matrices are small, and a multi-threaded BLAS on a busy
    driver makes L-BFGS-B on 2-3 parameters an order of magnitude slower.
    """
    with _blas_controller().limit(limits=1, user_api="blas"):
        return _fit_model(matrix, names, variance=variance, max_components=max_components, period=period)


def _fit_model(
    matrix: np.ndarray,
    names: Sequence[str],
    *,
    variance: float,
    max_components: int,
    period: int | None,
) -> QualityModel | None:
    keep = kept_series(matrix)
    if keep.size == 0:
        return None
    x = matrix[:, keep]
    finite = np.isfinite(x)
    counts = finite.sum(axis=0)
    center = np.where(finite, x, 0.0).sum(axis=0) / counts
    dev = np.where(finite, x - center, 0.0)
    std = np.sqrt((dev**2).sum(axis=0) / counts)
    floor = np.array([scale_floor(c) for c in center])
    scale = np.maximum(std, floor)
    z = dev / scale
    s, v = _basis(z, min(z.shape))
    k = select_components(s, variance, max_components)
    v = v[:, :k]
    for j in range(k):  # deterministic sign: largest-magnitude loading positive
        if v[np.argmax(np.abs(v[:, j])), j] < 0:
            v[:, j] = -v[:, j]
    total = float((s**2).sum())
    explained = tuple(float(e) / total for e in (s[:k] ** 2)) if total > 0 else ()
    scores = z @ v
    components = tuple(fit_component(scores[:, j].tolist(), period) for j in range(k))
    ref = _cv_residuals(z, k)
    r_mean = float(ref.mean())
    r_sd = float(ref.std(ddof=1)) if ref.size > 1 else 0.0
    rms = float(np.sqrt((z**2).sum(axis=1).mean()))
    r_sigma = max(r_sd, SIGMA_FLOOR * rms, ABS_FLOOR)
    return QualityModel(
        names=tuple(names[i] for i in keep),
        center=tuple(float(c) for c in center),
        scale=tuple(float(c) for c in scale),
        loadings=tuple(tuple(float(x) for x in v[:, j]) for j in range(k)),
        explained=explained,
        components=components,
        residual_mean=r_mean,
        residual_sigma=r_sigma,
        rows=int(matrix.shape[0]),
    )
