"""``QualityScoreMonitor``: the table-level quality score as a window monitor (streamdq/monitors.py).

For every closed window of the dataset it feeds all of the window's scalar metrics (one
series per analyzer; failed metrics count as missing; distribution-valued metrics and its own
``QualityScore`` are skipped) to a ``QualityScorer`` and publishes:

* a metric ``QualityScore`` (entity ``Dataset``, instance ``*``) at window scope: the score
  0..12, or a failed metric whose reason says what the scorer waits for (warm-up);
* an ``Anomaly`` (detector ``quality_score``, no constraint id: a one-shot event for the alert
  policy) when the score reaches ``alert_at``; its interval is ``[0, alert_at - 1]`` and its
  message names the component scores and the series that deviate most.

Its own analyzers (``analyzers()``) are ``Size`` plus, for ``columns``, ``Completeness`` and
``ApproxCountDistinct``, and, for ``numeric_columns``, ``Completeness``, ``Mean``, ``Minimum``,
``Maximum`` and ``StandardDeviation`` (Uber's per-column metrics); every other analyzer the
run computes (checks, auto-validation) joins the table as well. State: the scorer's JSON
bytes, persisted by the handler with each batch commit (key ``monitor:quality_score``).

Run config::

    quality_score: {max_components: 5, variance: 0.9, history: 48, refit_every: 12,
                    period: null, alert_at: 6, min_history: 16,
                    columns: [country], numeric_columns: [amount]}

``quality_monitor_from_config`` validates it; mistakes raise ``ConfigError`` naming
``quality_score.<key>`` and the fix.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

from streamdq.analyzers import (
    ApproxCountDistinct,
    Completeness,
    Maximum,
    Mean,
    Minimum,
    Size,
    StandardDeviation,
)
from streamdq.analyzers.base import Analyzer
from streamdq.analyzers.metric import DATASET, Metric, failure
from streamdq.analyzers.state import State
from streamdq.autovalidate.quality.score import (
    QualityScoreConfig,
    QualityScorer,
    ScoreResult,
    config_problems,
    series_names,
)
from streamdq.config_schema import Key, Table, custom, integer
from streamdq.errors import ConfigError, ConfigErrors
from streamdq.monitors import MonitorOutput
from streamdq.report import Anomaly, Window

log = logging.getLogger(__name__)

METRIC_NAME = "QualityScore"
DETECTOR = "quality_score"
CONFIG_KEY = "quality_score"


def window_series(metrics: Mapping[Analyzer, Metric]) -> dict[str, float | None]:
    """The window's metrics as ``{series name: value}`` (None for a failed metric)."""
    items: list[tuple[str, str, float | None]] = []
    for analyzer, metric in metrics.items():
        if metric.name == METRIC_NAME:
            continue
        if metric.ok and metric.scalar is None:
            continue  # distribution-valued metric (Histogram, DataType, ...)
        items.append((f"{metric.name}({metric.instance})", analyzer.key(), metric.scalar))
    items.sort(key=lambda it: (it[0], it[1]))
    names = series_names([(label, key) for label, key, _ in items])
    return {name: value for name, (_, _, value) in zip(names, items, strict=True)}


class QualityScoreMonitor:
    """A ``WindowMonitor`` publishing the table-level quality score of one dataset."""

    key = CONFIG_KEY

    def __init__(
        self,
        dataset: str,
        config: QualityScoreConfig | None = None,
        columns: Sequence[str] = (),
        numeric_columns: Sequence[str] = (),
    ) -> None:
        self.dataset = dataset
        self.config = config or QualityScoreConfig()
        self.columns = tuple(columns)
        self.numeric_columns = tuple(numeric_columns)
        self.scorer = QualityScorer(self.config)

    def analyzers(self) -> Sequence[Analyzer]:
        out: list[Analyzer] = [Size()]
        for c in self.columns:
            out += [Completeness(c), ApproxCountDistinct(c)]
        for c in self.numeric_columns:
            out += [Completeness(c), Mean(c), Minimum(c), Maximum(c), StandardDeviation(c)]
        return list(dict.fromkeys(out))

    def observe(
        self, window: Window, seq: int, metrics: Mapping[Analyzer, Metric], states: Mapping[str, State]
    ) -> MonitorOutput:
        """Score the closed window ``seq`` (a replayed ``seq`` returns the stored verdict)."""
        result = self.scorer.observe(seq, window_series(metrics))
        return self.output(result, window)

    def output(self, result: ScoreResult, window: Window | None) -> MonitorOutput:
        """The metric (and the anomaly, when flagged) of one score."""
        if not result.ready:
            return MonitorOutput(metrics=(failure(DATASET, METRIC_NAME, "*", result.message),))
        metric = Metric(
            DATASET,
            METRIC_NAME,
            "*",
            value=float(result.score),
            extra={
                "component_scores": list(result.component_scores),
                "residual_score": result.residual_score,
                "explained_variance": list(result.explained_variance),
            },
        )
        if not result.flagged:
            return MonitorOutput(metrics=(metric,))
        anomaly = Anomaly(
            detector=DETECTOR,
            metric=metric,
            scope="window",
            value=float(result.score),
            lower=0.0,
            upper=float(self.config.alert_at - 1),
            score=float(result.score),
            window=window,
            message=f"table quality score {result.score} >= alert_at {self.config.alert_at}: {result.message}",
        )
        return MonitorOutput(metrics=(metric,), anomalies=(anomaly,))

    def dump_state(self) -> bytes:
        return self.scorer.dump_state()

    def load_state(self, blob: bytes) -> None:
        """Restore the scorer; an unreadable state (unknown version, corrupt bytes) is logged and
        the score starts afresh (warm-up) instead of stopping the stream at restart."""
        try:
            self.scorer.load_state(blob)
        except (ValueError, KeyError, TypeError):
            log.warning(
                "quality score of %s: cannot restore its state; starting afresh", self.dataset, exc_info=True
            )
            self.scorer = QualityScorer(self.config)


def _column_list(path: str, value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(c, str) and c for c in value):
        key = path.rsplit(".", 1)[-1]
        raise ConfigError(path, f"expected a list of column names, got {value!r}", f"e.g. {key}: [amount]")
    return tuple(value)


def _variance(path: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 1:
        raise ConfigError(path, f"expected a fraction in (0, 1], got {value!r}", "use e.g. 0.9")
    return float(value)


def _period(path: str, value: Any) -> int | None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 2):
        raise ConfigError(
            path,
            f"expected an integer >= 2 or null, got {value!r}",
            "give the windows per season (e.g. 24 for hourly windows with a daily cycle) "
            "or null for no seasonality",
        )
    return value


def _score_rules(values: dict[str, Any], where: str) -> None:
    """The settings across keys (alert_at at most the score's maximum; enough history for the
    season), as the score's own ``config_problems`` states them."""
    settings = {f.name: values[f.name] for f in fields(QualityScoreConfig)}
    problems = config_problems(settings)
    if problems:
        raise ConfigErrors(ConfigError(f"{where}.{key}", problem, fix) for key, problem, fix in problems)


_DEFAULTS = QualityScoreConfig()


def _positive(key: str, doc: str) -> Key:
    return Key(
        key, integer(low=1), default=getattr(_DEFAULTS, key), fix=f"set {key} to a positive integer", doc=doc
    )


QUALITY_TABLE = Table(
    CONFIG_KEY,
    (
        _positive("max_components", "principal components of the metric series kept"),
        Key(
            "variance",
            custom(_variance, "fraction in (0, 1]"),
            default=_DEFAULTS.variance,
            doc="the variance they explain",
        ),
        _positive("history", "windows the model is fitted on"),
        _positive("refit_every", "windows between two fits"),
        Key(
            "period",
            custom(_period, "integer >= 2 | null"),
            default=_DEFAULTS.period,
            doc="windows per season (none: no seasonality)",
        ),
        _positive("alert_at", "the score (1..12) that alerts"),
        _positive("min_history", "windows before the first score"),
        Key(
            "columns",
            custom(_column_list, "list of columns"),
            default=(),
            shown="[]",
            doc="columns whose profile is scored",
        ),
        Key(
            "numeric_columns",
            custom(_column_list, "list of columns"),
            default=(),
            shown="[]",
            doc="numeric columns whose mean and spread are scored",
        ),
    ),
    known_label="use one of",
    rules=(_score_rules,),
)
"""The keys of ``quality_score:`` (streamdq.config_schema; docs/configuration.md)."""


def quality_config_from_raw(raw: Mapping[str, Any]) -> QualityScoreConfig:
    """The scorer settings of a ``quality_score:`` mapping (defaults for absent keys), validated
    by ``QUALITY_TABLE`` (every mistake at once)."""
    values = QUALITY_TABLE.parse(raw, CONFIG_KEY)
    return QualityScoreConfig(**{f.name: values[f.name] for f in fields(QualityScoreConfig)})


@dataclass(frozen=True)
class QualitySettings:
    """``quality_score:`` parsed: the scorer's settings and the columns it reads."""

    config: QualityScoreConfig
    columns: tuple[str, ...] = ()
    numeric_columns: tuple[str, ...] = ()


def quality_settings(raw: Mapping[str, Any] | None) -> QualitySettings | None:
    """Parse ``quality_score:`` once (None when absent; ``{}`` means all defaults); raises
    ``ConfigError`` naming ``quality_score.<key>`` and the fix. Builds no monitor."""
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise ConfigError(
            CONFIG_KEY,
            f"expected a mapping, got {raw!r}",
            "e.g. quality_score: {history: 48, alert_at: 6} (or {} for the defaults)",
        )
    values = QUALITY_TABLE.parse(raw, CONFIG_KEY)
    config = QualityScoreConfig(**{f.name: values[f.name] for f in fields(QualityScoreConfig)})
    return QualitySettings(config, values["columns"], values["numeric_columns"])


def quality_monitor(settings: QualitySettings | None, dataset: str) -> QualityScoreMonitor | None:
    """The monitor of parsed settings (None for none)."""
    if settings is None:
        return None
    return QualityScoreMonitor(
        dataset, settings.config, columns=settings.columns, numeric_columns=settings.numeric_columns
    )


def quality_monitor_from_config(raw: Mapping[str, Any] | None, dataset: str) -> QualityScoreMonitor | None:
    """The monitor for the run config's ``quality_score:`` mapping; None when absent (None).

    ``{}`` means all defaults. Raises ``ConfigError`` naming ``quality_score.<key>`` and the fix.
    """
    return quality_monitor(quality_settings(raw), dataset)
