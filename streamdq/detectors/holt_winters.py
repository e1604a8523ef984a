"""HoltWinters: seasonal anomaly detection with additive Holt-Winters (Deequ's HoltWinters strategy,
made online).

Online form (runs on the driver, once per point of an equally spaced series, e.g. closed hourly
windows with ``period=24``, daily with ``period=7``, monthly with ``period=12``, or any custom period):

* Warm-up: the first ``min_history`` points (default two full periods, the least Holt-Winters can be
  initialised from) are only stored; the verdict says how many more points it waits for. Short
  series never raise.
* Fit: (alpha, beta, gamma) are fitted by L-BFGS-B on the stored recent history (a bounded buffer of
  ``history_periods`` periods) when warm-up ends and again every ``refit_every`` points; between fits
  the level, trend and seasonal components are updated online with each point (O(1)).
* Decision: the forecast ``f`` of the point and a prediction interval ``f +- z * scale`` where scale is
  the root mean square of the one-step residuals (``residual_scale="rmse"``, default, with ``z=3``) or
  the sample stddev of the absolute residuals (``"abs_stddev"``: Deequ's rule with ``z=1.96``, see
  ``HoltWinters.deequ``); the residual statistics come from the fit and are updated with each accepted
  point. ``min_width`` (default 0, Deequ) is a floor on the half-width ``z * scale``: a perfectly
  regular series has residuals of 0, and without a floor any deviation at all is anomalous.
  Deequ's rule flags about a quarter of the points of a Gaussian series (1.96 * 0.6 sigma),
  which online, where flagged points are not learned, snowballs: hence the different default.
* With ``learn_from_anomalies=False`` (default) an anomalous point is replaced by its forecast in the
  model update and in the history buffer, so a spike neither bends the model nor enters later refits.
  A missing value (None/NaN) is also replaced by its forecast so that the seasonal phase is kept.
* State: model, parameters, residual statistics and the buffer (at most ``history_periods * period``
  values): constant size and constant amortised cost per point, whatever the history length.

Batch form ``detect(series, start, end)`` is Deequ's (exactly so with ``HoltWinters.deequ(period)``): fit on ``series[:start]``; forecast
horizon ``min(end, len) - start`` (1 if ``start >= len``); anomalous if ``|x - forecast| > z * scale``;
errors if the series is empty, ``start >= end``, the interval is negative or ``start < 2 * period``.
It uses the same model code, so the online verdict of the first point after the initial fit equals
``detect(series, s, s + 1)`` for ``s = min_history`` (when the buffer holds the whole warm-up).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from streamdq.detectors.base import (
    INT_MAX,
    Detector,
    Point,
    Verdict,
    is_missing,
    require,
    require_relearn_after,
    warming_up,
)
from streamdq.detectors.holt_winters_model import HWModel, fit, forecasts, smooth
from streamdq.detectors.running_stats import sample_stddev, welford_add, welford_of
from streamdq.errors import InvalidArgument

RESIDUAL_SCALES = ("abs_stddev", "rmse")


@dataclass(frozen=True)
class HoltWinters(Detector):
    """Flags a point outside ``forecast +- z * scale`` of an additive Holt-Winters model.

    Warm-up: ``min_history`` points (default two periods) are stored, then the model is fitted.
    Missing values advance the model with its forecast (the seasonal phase is kept).

    Examples
    --------
    >>> season = [10.0, 20.0, 30.0, 20.0]
    >>> series = season * 3 + [10.0, 20.0, 90.0, 20.0]
    >>> HoltWinters.deequ(period=4).detect(series, start=12)
    [14]
    >>> from streamdq.detectors import Point
    >>> detector = HoltWinters(period=4, refit_every=4)
    >>> state = detector.initial_state()
    >>> verdicts = []
    >>> for seq, value in enumerate(series):
    ...     state, verdict = detector.update(state, Point(float(seq), value, seq))
    ...     verdicts.append(verdict)
    >>> verdicts[0].message
    'warming up: waiting for 7 more points (Holt-Winters needs 8 points, period 4)'
    >>> [seq for seq, v in enumerate(verdicts) if v.anomalous]
    [14]
    """

    TYPE: ClassVar[str] = "holt_winters"
    HANDLES_MISSING: ClassVar[bool] = True

    period: int = 24
    z: float = 3.0
    residual_scale: str = "rmse"
    min_width: float = 0.0
    min_history: int | None = None
    history_periods: int = 4
    refit_every: int = 24
    learn_from_anomalies: bool = False
    relearn_after: int | None = None

    def __post_init__(self) -> None:
        require_relearn_after(self)
        kind = self.TYPE
        require(
            self.period >= 1, kind, "period", f"must be >= 1, got {self.period}", "e.g. 24 for hourly windows"
        )
        require(self.z > 0, kind, "z", f"must be > 0, got {self.z}", "e.g. 3.0")
        require(self.min_width >= 0, kind, "min_width", f"must be >= 0, got {self.min_width}", "e.g. 0.0")
        require(
            self.residual_scale in RESIDUAL_SCALES,
            kind,
            "residual_scale",
            f"must be one of {', '.join(RESIDUAL_SCALES)}, got {self.residual_scale!r}",
            f"use one of {', '.join(RESIDUAL_SCALES)}",
        )
        require(
            self.min_history is None or self.min_history >= 2 * self.period,
            kind,
            "min_history",
            f"must be >= 2 * period = {2 * self.period}, got {self.min_history}",
            "give two periods or more, or null for two periods",
        )
        require(
            self.history_periods >= 2,
            kind,
            "history_periods",
            f"must be >= 2, got {self.history_periods}",
            "keep two periods or more",
        )
        require(
            self.refit_every >= 1, kind, "refit_every", f"must be >= 1, got {self.refit_every}", "e.g. 24"
        )

    @classmethod
    def _unit_test_params(cls) -> Iterable[Mapping[str, Any]]:
        yield {"period": 4, "refit_every": 4}
        yield {"period": 2, "refit_every": 2}
        yield {"period": 3, "z": 1.96, "residual_scale": "abs_stddev", "min_width": 0.5, "relearn_after": 2}

    @classmethod
    def deequ(cls, period: int = 7, **kwargs: Any) -> HoltWinters:
        """Deequ's decision rule: ``|x - forecast| > 1.96 * sample-stddev(|residuals|)``.
        Periods: (Daily, Weekly) = 7, (Monthly, Yearly) = 12, (Hourly, Daily) = 24."""
        return cls(period=period, z=1.96, residual_scale="abs_stddev", **kwargs)

    @property
    def warm_up_points(self) -> int:
        return 2 * self.period if self.min_history is None else self.min_history

    @property
    def buffer_size(self) -> int:
        return max(self.history_periods * self.period, self.warm_up_points)

    # -- shared decision rule --------------------------------------------------------------------
    def _scale(self, resid: list[float]) -> float:
        """resid = [n, mean |r|, m2 |r|, sum r^2]"""
        if self.residual_scale == "rmse":
            return math.sqrt(resid[3] / resid[0]) if resid[0] > 0 else 0.0
        return sample_stddev(resid[:3])

    @staticmethod
    def _resid_stats(residuals: Sequence[float]) -> list[float]:
        return [*welford_of(abs(r) for r in residuals), sum(r * r for r in residuals)]

    # -- online form -----------------------------------------------------------------------------
    def _initial_core(self) -> dict[str, Any]:
        return {"buffer": [], "model": None, "params": None, "resid": None, "since_fit": 0}

    def _refit(self, core: dict[str, Any]) -> None:
        buffer = core["buffer"]
        alpha, beta, gamma = fit(buffer, self.period)
        model, residuals = smooth(buffer, self.period, alpha, beta, gamma)
        core["params"] = [alpha, beta, gamma]
        core["model"] = [model.level, model.trend, list(model.season)]
        core["resid"] = self._resid_stats(residuals)
        core["since_fit"] = 0

    def _step(self, core: dict[str, Any], point: Point) -> tuple[dict[str, Any], Verdict]:
        missing = is_missing(point.value)
        if core["model"] is None:
            if not missing:
                core["buffer"] = [*core["buffer"], float(point.value)]  # type: ignore[arg-type]
            waiting = self.warm_up_points - len(core["buffer"])
            if waiting > 0:
                needs = f" (Holt-Winters needs {self.warm_up_points} points, period {self.period})"
                return core, warming_up(waiting, note=needs)
            self._refit(core)
            return core, Verdict(
                False,
                message=f"fitted Holt-Winters on {len(core['buffer'])} points; judging from the next point",
            )

        level, trend, season = core["model"]
        model = HWModel(level, trend, tuple(season))
        alpha, beta, gamma = core["params"]
        forecast = model.forecast()
        width = max(self.z * self._scale(core["resid"]), self.min_width)
        lower, upper = forecast - width, forecast + width
        if missing:
            verdict = Verdict(
                False, lower, upper, None, message=f"missing value: advanced with forecast {forecast}"
            )
            learned, anomalous = forecast, False
        else:
            value = float(point.value)  # type: ignore[arg-type]
            error = value - forecast
            anomalous = abs(error) > width
            score = abs(error) / width * self.z if width > 0 else (0.0 if error == 0 else math.inf)
            if anomalous:
                message = f"forecasted {forecast} for observed value {value}, outside [{lower}, {upper}]"
            else:
                message = f"value {value} within [{lower}, {upper}] (forecast {forecast})"
            verdict = Verdict(anomalous, lower, upper, score, message=message)
            learned = value if (not anomalous or self.learn_from_anomalies) else forecast
            if not anomalous or self.learn_from_anomalies:
                resid = core["resid"]
                core["resid"] = [*welford_add(resid[:3], abs(error)), resid[3] + error * error]
        model = model.step(learned, alpha, beta, gamma)
        core["model"] = [model.level, model.trend, list(model.season)]
        core["buffer"] = [*core["buffer"], learned][-self.buffer_size :]
        core["since_fit"] += 1
        if core["since_fit"] >= self.refit_every:
            self._refit(core)
        return core, verdict

    # -- batch form (Deequ) ----------------------------------------------------------------------
    def detect(self, series: Sequence[float], start: int = 0, end: int | None = None) -> list[int]:
        stop = INT_MAX if end is None else end
        if not series:
            raise InvalidArgument(f"detector {self.TYPE!r}: provided data series is empty")
        if not start < stop:
            raise InvalidArgument(f"detector {self.TYPE!r}: start ({start}) must be before end ({stop})")
        if start < 0 or stop < 0:
            raise InvalidArgument(f"detector {self.TYPE!r}: the search interval needs to be non-negative")
        if start < 2 * self.period:
            raise InvalidArgument(
                f"detector {self.TYPE!r}: need at least two full cycles of data ({2 * self.period} points "
                f"before start) to estimate the model, start is {start}"
            )
        horizon = 1 if start >= len(series) else min(stop, len(series)) - start
        training = [float(v) for v in series[:start]]
        alpha, beta, gamma = fit(training, self.period)
        model, residuals = smooth(training, self.period, alpha, beta, gamma)
        width = max(self.z * self._scale(self._resid_stats(residuals)), self.min_width)
        predicted = forecasts(model, horizon, alpha, beta, gamma)
        tested = series[start : start + horizon]
        return [
            start + i for i, (x, f) in enumerate(zip(tested, predicted, strict=False)) if abs(x - f) > width
        ]
