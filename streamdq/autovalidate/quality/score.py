"""Table-level quality score (Uber's Data Quality Monitor), online: ``QualityScorer``.

All metric series of a dataset are watched together, one point per closed window:
standardize, project with PCA onto the top components (enough for ``variance`` of the
variance, at most ``max_components``), forecast each component one step ahead with additive
Holt-Winters, score each component 0 (normal) to 4 (extreme) by which prediction-interval
width (1, 2, 3, 4 sigma of its one-step residuals) its value leaves, score the part of the
point the components do not explain the same way, and sum the three largest scores into the
table score (0..12). The math and the exact rules are in ``model``; docs/quality_score.md
explains them for users.

Contract of ``QualityScorer.observe(seq, {series: value})``:

* ``seq`` strictly increases (the window index). A ``seq`` <= the last one seen changes
  nothing and returns the stored result of that ``seq`` (the results of the last ``history``
  points are kept), or a not-ready result saying it is no longer stored.
* Values are floats; None, NaN, infinities and non-numbers are missing. Series may appear
  (they enter the model at the first refit where they have values in half the history) and
  disappear (their later values are imputed with their mean until they leave the history).
* Warm-up: until ``min_history`` points have been seen the result is ``ready=False`` with a
  message saying how many more windows it waits for; it never raises on a short series.
* Cost: the model (basis, Holt-Winters per component) is fitted on the bounded history (the
  last ``history`` points) when warm-up ends and every ``refit_every`` points after; between
  refits a point costs O(series * components). State size is bounded by ``history``.
* State: ``dump_state()`` gives versioned JSON bytes (no pickle), ``load_state`` restores
  them; a state written under another configuration keeps its history and refits.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import deque
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from streamdq.autovalidate.quality.model import (
    QualityModel,
    band,
    fit_model,
    scale_floor,
    table_score,
)
from streamdq.errors import ConfigError, InvalidArgument

STATE_VERSION = 1
MAX_SCORE = 12


@dataclass(frozen=True)
class QualityScoreConfig:
    """Settings of the score (run config key ``quality_score``; see ``monitor``)."""

    max_components: int = 5
    variance: float = 0.9
    history: int = 48
    refit_every: int = 12
    period: int | None = None
    alert_at: int = 6
    min_history: int = 16

    def __post_init__(self) -> None:
        problems = config_problems(asdict(self))
        if problems:
            key, problem, fix = problems[0]
            raise ConfigError(f"quality_score.{key}", problem, fix)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def config_problems(raw: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """Every problem of a (complete) settings mapping as (key, problem, fix), in key order."""
    out: list[tuple[str, str, str]] = []
    for key in ("max_components", "history", "refit_every", "min_history", "alert_at"):
        value = raw[key]
        if not _is_int(value) or value < 1:
            out.append((key, f"expected an integer >= 1, got {value!r}", f"set {key} to a positive integer"))
    variance = raw["variance"]
    if isinstance(variance, bool) or not isinstance(variance, int | float) or not 0 < variance <= 1:
        out.append(("variance", f"expected a fraction in (0, 1], got {variance!r}", "use e.g. 0.9"))
    period = raw["period"]
    if period is not None and (not _is_int(period) or period < 2):
        out.append(
            (
                "period",
                f"expected an integer >= 2 or null, got {period!r}",
                "give the windows per season (e.g. 24 for hourly windows with a daily cycle) "
                "or null for no seasonality",
            )
        )
    if out:
        return out
    if raw["alert_at"] > MAX_SCORE:
        out.append(("alert_at", f"the score is at most {MAX_SCORE}, got {raw['alert_at']}", "use 1..12"))
    least = max(4, 2 * period) if period is not None else 4
    if raw["min_history"] < least:
        why = f"2 * period = {2 * period}" if period is not None else "4"
        out.append(
            (
                "min_history",
                f"must be at least {why} windows (Holt-Winters needs them), got {raw['min_history']}",
                f"set min_history >= {least}",
            )
        )
    elif raw["history"] < raw["min_history"]:
        out.append(
            (
                "history",
                f"must be >= min_history ({raw['min_history']}), got {raw['history']}",
                f"set history >= {raw['min_history']}",
            )
        )
    return out


@dataclass(frozen=True)
class ScoreResult:
    """The verdict on one point.

    ``score``: the table score 0..12 (0 while not ready). ``component_scores``: 0..4 per principal
    component, in component order; ``residual_score``: 0..4 for the unexplained part.
    ``explained_variance``: the variance ratio of each component of the current model.
    ``deviations``: each component's one-step error in sigmas (signed). ``drivers``: the (at
    most three) series that deviate most from the model's forecast, as (name, d), largest
    first: ``d = z - V f`` in standard deviations of the series, where ``V f`` maps the
    components' forecasts back to the series (it covers both the components' errors and the
    residual). ``flagged``: ready and ``score >= alert_at``. ``message``: why, in words (also
    says what it waits for).
    """

    seq: int
    score: int = 0
    component_scores: tuple[int, ...] = ()
    residual_score: int = 0
    explained_variance: tuple[float, ...] = ()
    ready: bool = False
    message: str = ""
    flagged: bool = False
    deviations: tuple[float, ...] = ()
    drivers: tuple[tuple[str, float], ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "score": self.score,
            "component_scores": list(self.component_scores),
            "residual_score": self.residual_score,
            "explained_variance": list(self.explained_variance),
            "ready": self.ready,
            "message": self.message,
            "flagged": self.flagged,
            "deviations": [_finite_or_none(d) for d in self.deviations],
            "drivers": [[n, _finite_or_none(z)] for n, z in self.drivers],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ScoreResult:
        return cls(
            seq=int(data["seq"]),
            score=int(data["score"]),
            component_scores=tuple(int(s) for s in data["component_scores"]),
            residual_score=int(data["residual_score"]),
            explained_variance=tuple(float(v) for v in data["explained_variance"]),
            ready=bool(data["ready"]),
            message=str(data["message"]),
            flagged=bool(data["flagged"]),
            deviations=tuple(_from_json_float(d) for d in data["deviations"]),
            drivers=tuple((str(n), _from_json_float(z)) for n, z in data["drivers"]),
        )


def _finite_or_none(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _from_json_float(value: Any) -> float:
    return math.nan if value is None else float(value)


def clean_value(value: Any) -> float:
    """A metric value as a float; None, bools, non-numbers and non-finite values are NaN."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return math.nan
    v = float(value)
    return v if math.isfinite(v) else math.nan


def series_names(items: list[tuple[str, str]]) -> list[str]:
    """Readable, unique series names for (label, key) pairs: the label (e.g. ``Mean(amount)``),
    suffixed with a short hash of the key when two keys share a label. Deterministic, so the
    streaming monitor and the backtest name the same analyzers alike."""
    counts: dict[str, int] = {}
    for label, _ in items:
        counts[label] = counts.get(label, 0) + 1
    return [
        label if counts[label] == 1 else f"{label}[{hashlib.sha256(key.encode()).hexdigest()[:8]}]"
        for label, key in items
    ]


class QualityScorer:
    """The online table score of one dataset (see the module docstring for the contract)."""

    def __init__(self, config: QualityScoreConfig | None = None) -> None:
        self.config = config or QualityScoreConfig()
        self._reset()

    def _reset(self) -> None:
        self.names: list[str] = []  # every series name in the buffer, first-seen order
        self._index: dict[str, int] = {}
        self.buffer: deque[tuple[int, list[float], ScoreResult]] = deque(maxlen=self.config.history)
        self.model: QualityModel | None = None
        self.since_fit = 0
        self.seen = 0
        self.last_seq: int | None = None

    # -- the online step ---------------------------------------------------------------
    def observe(self, seq: int, values: Mapping[str, Any]) -> ScoreResult:
        """Score the point ``seq`` (see the contract); the state advances unless it is a replay."""
        seq = int(seq)
        if self.last_seq is not None and seq <= self.last_seq:
            for s, _, result in self.buffer:
                if s == seq:
                    return result
            return ScoreResult(
                seq,
                message=f"window {seq} was already observed (last seen {self.last_seq}); "
                "its result is no longer stored",
            )
        point = {str(k): clean_value(v) for k, v in values.items()}
        cfg = self.config
        if self.model is None and len(self.buffer) >= cfg.min_history:
            self._refit()
        if self.model is None:
            result = self._waiting(seq)
        else:
            result, projected = self._score(seq, point)
            self.model = self._advance(self.model, projected)
        self._append(seq, point, result)
        self.seen += 1
        self.last_seq = seq
        if self.model is not None:
            self.since_fit += 1
            if self.since_fit >= cfg.refit_every:
                self._refit()
        return result

    def _waiting(self, seq: int) -> ScoreResult:
        cfg = self.config
        have = len(self.buffer)
        if have < cfg.min_history:
            more = cfg.min_history - have
            message = (
                f"waiting for history: {have} of {cfg.min_history} windows seen (min_history); "
                f"scoring starts after {more} more"
            )
        else:
            message = (
                f"waiting for metric series: none has values in at least half of the last {have} windows"
            )
        return ScoreResult(seq, message=message)

    def _score(self, seq: int, point: dict[str, float]) -> tuple[ScoreResult, np.ndarray]:
        """The verdict on a point and its component values (O(series * components))."""
        model = self.model
        assert model is not None
        z, missing = model.standardize(point)
        p, r = model.project(z)
        deviations = []
        scores = []
        for value, comp in zip(p, model.components, strict=True):
            d = (float(value) - comp.forecast()) / comp.sigma
            deviations.append(d)
            scores.append(band(d))
        r_dev = max(r - model.residual_mean, 0.0) / model.residual_sigma
        r_score = band(r_dev)
        score = table_score([*scores, r_score])
        flagged = score >= self.config.alert_at
        expected = model.expected(np.array([c.forecast() for c in model.components]))
        gap = z - expected
        order = np.argsort(-np.abs(gap), kind="stable")[:3]
        drivers = tuple((model.names[i], float(gap[i])) for i in order if gap[i] != 0.0)
        parts = [f"PC{i + 1} {s}" for i, s in enumerate(scores)] + [f"residual {r_score}"]
        message = f"score {score} ({', '.join(parts)})"
        if drivers:
            message += "; largest deviations from the forecast: " + ", ".join(
                self._describe(model, n, v, point) for n, v in drivers
            )
        modelled = set(model.names)
        new = [n for n, v in point.items() if n not in modelled and not math.isnan(v)]
        notes = []
        if missing:
            notes.append(f"{missing} series missing (imputed with their mean)")
        if new:
            notes.append(f"{len(new)} new series not yet modelled (enter at a refit)")
        if notes:
            message += "; " + "; ".join(notes)
        result = ScoreResult(
            seq,
            score=score,
            component_scores=tuple(scores),
            residual_score=r_score,
            explained_variance=model.explained,
            ready=True,
            message=message,
            flagged=flagged,
            deviations=tuple(deviations),
            drivers=drivers,
        )
        return result, p

    @staticmethod
    def _describe(model: QualityModel, name: str, gap: float, point: Mapping[str, float]) -> str:
        """``Size(*) -4.2 sd``, or, for a series that was constant over the history,
        ``Completeness(id) 1 -> 0.9 (constant until now)``."""
        i = model.names.index(name)
        if model.scale[i] <= scale_floor(model.center[i]):
            return f"{name} {model.center[i]:.6g} -> {point.get(name, math.nan):.6g} (constant until now)"
        return f"{name} {gap:+.3g} sd"

    @staticmethod
    def _advance(model: QualityModel, p: np.ndarray) -> QualityModel:
        """The model with every component's Holt-Winters advanced by its value ``p``."""
        if model.k == 0:
            return model
        return model.with_components(
            tuple(c.advance(float(v)) for c, v in zip(model.components, p, strict=True))
        )

    def _append(self, seq: int, point: dict[str, float], result: ScoreResult) -> None:
        for name in point:
            if name not in self._index:
                self._index[name] = len(self.names)
                self.names.append(name)
        row = [math.nan] * len(self.names)
        for name, value in point.items():
            row[self._index[name]] = value
        self.buffer.append((seq, row, result))

    def _compact_names(self) -> None:
        """Forget series with no value left in the buffer (at refits: bounds the state)."""
        live = [
            j
            for j in range(len(self.names))
            if any(not math.isnan(r[j]) for _, r, _ in self.buffer if j < len(r))
        ]
        if len(live) == len(self.names):
            return
        self.names = [self.names[j] for j in live]
        self._index = {n: i for i, n in enumerate(self.names)}
        rows = [(s, [r[j] if j < len(r) else math.nan for j in live], res) for s, r, res in self.buffer]
        self.buffer = deque(rows, maxlen=self.config.history)

    def matrix(self) -> np.ndarray:
        """The buffered history as a (windows x series) matrix, NaN where missing."""
        width = len(self.names)
        out = np.full((len(self.buffer), width), np.nan)
        for i, (_, row, _) in enumerate(self.buffer):
            out[i, : len(row)] = row
        return out

    def _refit(self) -> None:
        cfg = self.config
        self._compact_names()
        self.model = fit_model(
            self.matrix(),
            self.names,
            variance=cfg.variance,
            max_components=cfg.max_components,
            period=cfg.period,
        )
        self.since_fit = 0

    # -- state -------------------------------------------------------------------------
    def dump_state(self) -> bytes:
        """Versioned canonical JSON bytes (no pickle); NaN is written as null."""
        state = {
            "version": STATE_VERSION,
            "config": self.config.to_dict(),
            "names": self.names,
            "rows": [
                {"seq": s, "values": [_finite_or_none(v) for v in row], "result": res.to_dict()}
                for s, row, res in self.buffer
            ],
            "model": self.model.to_dict() if self.model is not None else None,
            "since_fit": self.since_fit,
            "seen": self.seen,
            "last_seq": self.last_seq,
        }
        return json.dumps(state, sort_keys=True, separators=(",", ":"), allow_nan=False).encode()

    def load_state(self, blob: bytes) -> None:
        """Restore ``dump_state`` bytes; ``ValueError`` (state unchanged) for an unknown version or
        bad bytes.

        A state written under another configuration keeps its history (the last ``history``
        points) and refits at the next point instead of using the old model.
        """
        try:
            data = json.loads(blob)
        except (ValueError, UnicodeDecodeError) as exc:
            raise InvalidArgument(f"quality score state is not valid JSON: {exc}") from exc
        if not isinstance(data, dict) or data.get("version") != STATE_VERSION:
            version = data.get("version") if isinstance(data, dict) else None
            raise InvalidArgument(
                f"quality score state: unsupported version {version!r} (expected {STATE_VERSION})"
            )
        try:
            names = [str(n) for n in data["names"]]
            rows = [
                (
                    int(r["seq"]),
                    [_from_json_float(v) for v in r["values"]],
                    ScoreResult.from_dict(r["result"]),
                )
                for r in data["rows"]
            ]
            seen = int(data["seen"])
            last_seq = None if data["last_seq"] is None else int(data["last_seq"])
            same_config = data.get("config") == self.config.to_dict()
            model = (
                QualityModel.from_dict(data["model"]) if same_config and data["model"] is not None else None
            )
            since_fit = int(data["since_fit"])
        except (KeyError, TypeError, IndexError, ValueError) as exc:
            raise InvalidArgument(f"quality score state is malformed: {exc!r}") from exc
        self._reset()
        self.names = names
        self._index = {n: i for i, n in enumerate(names)}
        self.buffer.extend(rows)
        self.seen, self.last_seq = seen, last_seq
        if model is not None:
            self.model, self.since_fit = model, since_fit
        # otherwise the model is None and the next point refits on the restored history
