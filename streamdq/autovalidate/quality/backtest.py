"""Backtesting the table-level quality score over a stored window-metric history (pure Python).

``replay_quality(windows, config)`` runs a fresh ``QualityScorer`` over the closed windows in
time order (one ``QualityWindow`` each: start, end, seq and ``{series: value}``) and returns
every window's ``ScoreResult``; ``format_quality_report`` renders them as text lines: the
score of every window (with the message of the flagged ones, of all with ``show_all``), the
flagged windows, then a summary. ``windows_from_rows`` builds
the windows from plain metric rows as the state store returns them (see ``streamdq backtest
--quality-score``). Nothing is written; the output shows what the configuration would have
scored and flagged.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from streamdq.autovalidate.quality.score import QualityScoreConfig, QualityScorer, ScoreResult, series_names

METRIC_NAME = "QualityScore"


@dataclass(frozen=True)
class QualityWindow:
    """One closed window of a dataset with all its scalar metrics (None = failed)."""

    start: datetime
    end: datetime
    seq: int
    values: Mapping[str, float | None]


def windows_from_rows(rows: Iterable[Mapping[str, Any]]) -> list[QualityWindow]:
    """Group stored window-metric rows into windows, in time order.

    A row has ``window_start``, ``window_end``, ``name``, ``instance``, ``analyzer_key``,
    ``value``, ``value_json`` and ``failure`` (the metrics table's columns). Rows without an
    analyzer key (metrics published by monitors, among them ``QualityScore`` itself) and
    distribution-valued rows (``value`` NULL, ``value_json`` set) are skipped; a failed metric
    is a missing value. Series are named like the streaming monitor names them
    (``Name(instance)``, with a key hash when two analyzers share that label).
    """
    by_window: dict[tuple[datetime, datetime], dict[str, float | None]] = {}
    labels: dict[str, str] = {}
    for row in rows:
        key = row.get("analyzer_key") or ""
        if not key or row["name"] == METRIC_NAME:
            continue
        failed = row.get("failure") is not None
        if not failed and row.get("value") is None:
            continue
        labels[key] = f"{row['name']}({row['instance']})"
        value = None if failed else float(row["value"])
        by_window.setdefault((row["window_start"], row["window_end"]), {})[key] = value
    items = sorted(labels.items(), key=lambda kv: (kv[1], kv[0]))
    names = dict(zip([k for k, _ in items], series_names([(label, k) for k, label in items]), strict=True))
    out: list[QualityWindow] = []
    for (start, end), values in sorted(by_window.items()):
        length = (end - start).total_seconds()
        seq = int(start.timestamp() // length) if length > 0 else len(out)
        out.append(QualityWindow(start, end, seq, {names[k]: v for k, v in values.items()}))
    return out


def replay_quality(
    windows: Sequence[QualityWindow], config: QualityScoreConfig | None = None
) -> list[tuple[QualityWindow, ScoreResult]]:
    """Score every window in time order with a fresh scorer (a repeated seq is judged once)."""
    scorer = QualityScorer(config)
    out: list[tuple[QualityWindow, ScoreResult]] = []
    last: int | None = None
    for window in sorted(windows, key=lambda w: w.seq):
        if last is not None and window.seq <= last:
            continue
        out.append((window, scorer.observe(window.seq, window.values)))
        last = window.seq
    return out


def format_quality_report(
    judged: Sequence[tuple[QualityWindow, ScoreResult]],
    config: QualityScoreConfig | None = None,
    *,
    show_all: bool = False,
) -> list[str]:
    """Text lines: one per window (``warmup``/``ok``/``FLAGGED``, its start and score; the
    message for flagged windows, for every window with ``show_all``), the flagged windows, then
    a summary."""
    cfg = config or QualityScoreConfig()
    lines = []
    for window, result in judged:
        if result.flagged:
            mark = "FLAGGED"
        elif result.ready:
            mark = "ok     "
        else:
            mark = "warmup "
        score = str(result.score) if result.ready else "-"
        line = f"{mark} window={window.start.isoformat()} score={score}"
        if result.flagged or show_all:
            line += f" {result.message}"
        lines.append(line)
    flagged = [w.start.isoformat() for w, r in judged if r.flagged]
    lines.append(f"flagged windows: {', '.join(flagged) if flagged else 'none'}")
    scored = [r.score for _, r in judged if r.ready]
    waiting = len(judged) - len(scored)
    summary = f"quality_score: {len(flagged)} flagged (score >= {cfg.alert_at}) of {len(judged)} windows"
    summary += f" ({waiting} while warming up"
    if scored:
        summary += f"; max score {max(scored)}, mean {sum(scored) / len(scored):.2f}"
    lines.append(summary + ")")
    return lines
