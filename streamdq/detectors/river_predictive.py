"""RiverPredictive: river's ``anomaly.PredictiveAnomalyDetection`` around a ``river.time_series``
forecaster (SNARIMAX with a scaled linear regressor, or river's HoltWinters).

Each point is scored by river (score in [0, 1]: 1.0 when the squared one-step forecast error reaches
river's dynamic threshold ``mean + n_std * stddev`` of past squared errors) and is anomalous when the
score is >= ``score_threshold``. The expected interval is ``forecast +- sqrt(score_threshold * threshold)``.
Warm-up: the first ``warmup`` points only train the model; then river's threshold statistics need a
few errors (``calibration`` points) before a verdict means anything (river scores the first errors
1.0 because its running variance is still 0), so those are reported as warming up too.
With ``learn_from_anomalies=False`` a flagged point is replaced by the forecast when the model learns
(it keeps its phase but not the spike); the default ``True`` is river's own usage: the online
regressor is still converging early on, and not learning its own errors makes alarms snowball.

State: the river object pickled in the JSON state (``streamdq.detectors.river_state``: pickling is
confined to the river adapters); its size is bounded by the model orders. Cost O(1) per point.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from river import anomaly, linear_model, optim, preprocessing, time_series

from streamdq.detectors.base import Detector, Point, Verdict, require, warming_up
from streamdq.detectors.river_state import dump_river, load_river

MODELS = ("snarimax", "holt_winters")


@dataclass(frozen=True)
class RiverPredictive(Detector):
    """Flags a point whose one-step forecast error river scores at ``score_threshold`` or more.

    Warm-up: ``warmup`` points train the forecaster, ``calibration`` more calibrate the threshold.

    Examples
    --------
    >>> season = [10.0, 20.0, 30.0, 20.0]
    >>> detector = RiverPredictive(model="holt_winters", period=4, warmup=8, calibration=4)
    >>> detector.detect(season * 8 + [10.0, 20.0, 90.0, 20.0] + season)
    [34]
    >>> from streamdq.detectors import Point
    >>> detector.update(detector.initial_state(), Point(0.0, 10.0, 0))[1].message
    'warming up: waiting for 12 more points'
    """

    TYPE: ClassVar[str] = "river_predictive"

    model: str = "snarimax"
    period: int = 24
    p: int = 2
    d: int = 0
    q: int = 0
    sp: int = 1
    sd: int = 0
    sq: int = 0
    learning_rate: float = 0.01
    alpha: float = 0.3
    beta: float = 0.1
    gamma: float = 0.6
    n_std: float = 3.0
    warmup: int = 48
    calibration: int = 24
    score_threshold: float = 1.0
    learn_from_anomalies: bool = True

    def __post_init__(self) -> None:
        kind = self.TYPE
        require(
            self.model in MODELS,
            kind,
            "model",
            f"must be one of {', '.join(MODELS)}, got {self.model!r}",
            f"use one of {', '.join(MODELS)}",
        )
        require(
            self.period >= 1, kind, "period", f"must be >= 1, got {self.period}", "e.g. 24 for hourly points"
        )
        for key in ("p", "d", "q", "sp", "sd", "sq", "calibration"):
            require(
                getattr(self, key) >= 0,
                kind,
                key,
                f"must be >= 0, got {getattr(self, key)}",
                "give 0 or more",
            )
        for key in ("alpha", "beta", "gamma"):
            value = getattr(self, key)
            require(
                0 <= value <= 1, kind, key, f"must be in [0, 1], got {value}", "give a fraction such as 0.3"
            )
        require(
            self.learning_rate > 0,
            kind,
            "learning_rate",
            f"must be > 0, got {self.learning_rate}",
            "e.g. 0.01",
        )
        require(self.n_std > 0, kind, "n_std", f"must be > 0, got {self.n_std}", "e.g. 3.0")
        minimum = self.period + 1 if self.model == "holt_winters" else 1
        require(
            self.warmup >= minimum,
            kind,
            "warmup",
            f"must be >= {minimum} for {self.model}, got {self.warmup}",
            f"give {minimum} points or more",
        )
        require(
            0 < self.score_threshold <= 1,
            kind,
            "score_threshold",
            f"must be in (0, 1], got {self.score_threshold}",
            "e.g. 1.0 (river's own threshold)",
        )

    @classmethod
    def _unit_test_params(cls) -> Iterable[Mapping[str, Any]]:
        yield {"model": "snarimax", "period": 2, "warmup": 2, "calibration": 1}
        yield {
            "model": "holt_winters",
            "period": 4,
            "warmup": 8,
            "calibration": 4,
            "learn_from_anomalies": False,
        }

    def _new_detector(self) -> anomaly.PredictiveAnomalyDetection:
        forecaster: Any
        if self.model == "snarimax":
            regressor = preprocessing.StandardScaler() | linear_model.LinearRegression(
                optimizer=optim.SGD(self.learning_rate), intercept_lr=0.1
            )
            forecaster = time_series.SNARIMAX(
                p=self.p,
                d=self.d,
                q=self.q,
                m=self.period,
                sp=self.sp,
                sd=self.sd,
                sq=self.sq,
                regressor=regressor,
            )
        else:
            forecaster = time_series.HoltWinters(
                alpha=self.alpha, beta=self.beta, gamma=self.gamma, seasonality=self.period
            )
        return anomaly.PredictiveAnomalyDetection(
            forecaster, horizon=1, n_std=self.n_std, warmup_period=self.warmup
        )

    def _initial_core(self) -> dict[str, Any]:
        return {"seen": 0, "model": None}

    def _step(self, core: dict[str, Any], point: Point) -> tuple[dict[str, Any], Verdict]:
        value = float(point.value)  # type: ignore[arg-type]
        restarted = ""
        pad = load_river(core["model"])
        if pad is None:
            if core["model"] is not None:
                restarted = " (model written by another river version: restarted)"
                core["seen"] = 0
            pad = self._new_detector()
        seen = core["seen"]
        waiting = self.warmup + self.calibration - seen
        if seen < self.warmup:
            pad.learn_one(None, value)
            core.update(seen=seen + 1, model=dump_river(pad))
            return core, warming_up(waiting, note=restarted)
        forecaster: Any = pad.predictive_model
        forecast = float(forecaster.forecast(1)[0])
        squared_threshold = pad.dynamic_mae.get() + self.n_std * math.sqrt(pad.dynamic_se_variance.get())
        score = float(pad.score_one({}, value))
        if waiting > 0:
            pad.learn_one(None, value)
            core.update(seen=seen + 1, model=dump_river(pad))
            return core, warming_up(
                waiting, score=score, doing="calibrating the error threshold", note=restarted
            )
        anomalous = score >= self.score_threshold
        half = math.sqrt(max(self.score_threshold * squared_threshold, 0.0))
        lower, upper = forecast - half, forecast + half
        pad.learn_one(None, value if (not anomalous or self.learn_from_anomalies) else forecast)
        core.update(seen=seen + 1, model=dump_river(pad))
        message = (
            f"forecast {forecast} for observed value {value}: score {score:.3f} >= {self.score_threshold}"
            if anomalous
            else f"value {value} within [{lower}, {upper}] (forecast {forecast}, score {score:.3f})"
        )
        return core, Verdict(anomalous, lower, upper, score, message=message + restarted)
