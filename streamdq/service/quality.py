"""The table quality score per window with what drove it (Uber's DQM pointer to abnormal metrics).

Per closed window in the range: the ``QualityScore`` metric the job stored (0..12, or the
reason it is not ready: warm-up), and, from the scorer's state (``monitor:quality_score`` in
the detectors table; it keeps the last ``quality_score.history`` windows), each principal
component's score (0..4) with its explained variance and one-step deviation in sigmas, the
residual's score, and the *drivers*: the metric series that deviate most from the model's
forecast, ``d = z - V f`` in standard deviations of the series (the loadings ``V`` times the
components' forecasts mapped back onto the standardized metrics, so it covers the components'
errors and the residual), largest first. Windows older than the scorer's history have the
score but no components or drivers (``detail: false``).

A window's position in the scorer's series is ``window start // window length`` (epoch
seconds), as the job's handler numbers them.
"""

from __future__ import annotations

from typing import Any

from streamdq.service.reader import QUALITY_KEY, QUALITY_METRIC, StateReader, plain
from streamdq.service.times import TimeRange


def scorer_results(reader: StateReader, dataset: str) -> dict[int, dict[str, Any]]:
    """``{seq: ScoreResult dict}`` of the windows the scorer still holds."""
    doc = reader.monitor_state(dataset, QUALITY_KEY) or {}
    out: dict[int, dict[str, Any]] = {}
    for row in doc.get("rows", ()):
        try:
            out[int(row["seq"])] = dict(row["result"])
        except (KeyError, TypeError, ValueError):
            continue
    return out


def quality(reader: StateReader, dataset: str, rng: TimeRange) -> list[dict[str, Any]]:
    """One entry per window in ``rng`` with a stored quality score (see the module docstring)."""
    reader.require(dataset)
    points = reader.window_series(dataset, "*", "", QUALITY_METRIC, rng) or []
    results = scorer_results(reader, dataset)
    out = []
    for p in points:
        entry: dict[str, Any] = {
            "timestamp": p["timestamp"],
            "windowEnd": p["windowEnd"],
            "score": p["value"] if p["failure"] is None else None,
            "ready": p["failure"] is None,
            "message": p["failure"],
            "detail": False,
            "components": [],
            "residualScore": None,
            "drivers": [],
        }
        start, end = p["timestamp"], p["windowEnd"]
        if isinstance(start, float) and isinstance(end, float) and end > start:
            result = results.get(int(start // (end - start)))
            if result is not None:
                entry.update(_detail(result))
        out.append(entry)
    return out


def _detail(result: dict[str, Any]) -> dict[str, Any]:
    scores = list(result.get("component_scores") or [])
    explained = list(result.get("explained_variance") or [])
    deviations = list(result.get("deviations") or [])
    components = [
        {
            "component": f"PC{i + 1}",
            "score": s,
            "explainedVariance": explained[i] if i < len(explained) else None,
            "deviation": deviations[i] if i < len(deviations) else None,
        }
        for i, s in enumerate(scores)
    ]
    drivers = [{"series": name, "deviation": d} for name, d in (result.get("drivers") or [])]
    return plain(
        {
            "detail": True,
            "components": components,
            "residualScore": result.get("residual_score"),
            "drivers": drivers,
            "message": result.get("message"),
            "flagged": bool(result.get("flagged")),
        }
    )
