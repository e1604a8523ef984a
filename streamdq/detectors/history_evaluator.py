"""Judging ``has_no_anomalies`` in a one-shot batch ``verify``: the new point against stored history.

A batch verify computes ONE point per metric. A detector cannot call one point anomalous: it
needs the series before it. ``HistoryAnomalyEvaluator`` (the checks' evaluator signature
``(constraint, metric, context) -> (status, message)``) therefore:

* asks ``history(constraint)`` for the earlier values of the constraint's metric (e.g. the closed
  windows of a streaming run's state store, ``streamdq verify --state PATH --dataset NAME``),
  oldest first; ``None`` / no callable means no history;
* replays them through a fresh detector of the constraint's spec (warm-up and "do not learn from
  flagged points" apply as in a stream), then judges the verified table's value as the next point;
* while the detector is still warming up (no or too little history) the outcome is **Success**
  with the message ``not enough history: N earlier point(s) of <metric> ... (<detector's
  warm-up message>)``: a batch verify without history is not a failure by default;
  ``strict=True`` (``verify --anomalies-need-history``) makes it a Failure.

A failed metric is a Failure with its reason (an empty metric under a ``where`` filter passes, as
for every constraint). Nothing is stored: the verified table's point is not added to the history.

>>> from streamdq.analyzers.metric import Metric
>>> from streamdq.checks.constraint import Constraint
>>> c = Constraint.create("has_no_anomalies", {"metric": {"analyzer": "Size"}, "detector": {"type": "batch_normal"}})
>>> size = Metric("Dataset", "Size", "*", value=300.0)
>>> HistoryAnomalyEvaluator(lambda c: [100.0, 102.0, 98.0, 101.0, 99.0])(c, size, {})[0]
'Failure'
>>> status, message, _ = HistoryAnomalyEvaluator()(c, size, {})
>>> status, message.split(" (")[0]
('Success', 'not enough history: no history given of Size(*)')
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from streamdq.detectors.base import Point
from streamdq.detectors.register import detector_from_spec

SUCCESS = "Success"
FAILURE = "Failure"

History = Callable[[Any], Sequence[float | None]]


class HistoryAnomalyEvaluator:
    """See the module docstring. Each call returns ``(status, message, verdict)`` once the
    detector has judged the point (the verdict lands in ``ConstraintResult.verdict``)."""

    def __init__(self, history: History | None = None, *, strict: bool = False) -> None:
        self.history = history
        self.strict = strict

    def __call__(
        self, constraint: Any, metric: Any, context: Mapping[str, Any]
    ) -> tuple[str, str | None] | tuple[str, str | None, Any]:
        if metric is None:
            return FAILURE, "has_no_anomalies: no metric computed for this table"
        if not metric.ok:
            if getattr(metric, "empty", False) and getattr(constraint, "where", None) is not None:
                return SUCCESS, None
            return FAILURE, str(metric.failure)
        detector = detector_from_spec(constraint.params["detector"])
        earlier = list(self.history(constraint) if self.history is not None else [])
        state = detector.initial_state()
        for seq, value in enumerate(earlier):
            state, _ = detector.update(
                state, Point(time=float(seq), value=None if value is None else float(value), seq=seq)
            )
        seq = len(earlier)
        value = float(metric.value) if metric.value is not None else None
        state, verdict = detector.update(state, Point(time=float(seq), value=value, seq=seq))
        if verdict.warming_up:
            name = f"{metric.name}({metric.instance})"
            where = "no history given" if self.history is None else f"{len(earlier)} earlier point(s)"
            message = f"not enough history: {where} of {name} ({verdict.message})"
            if self.history is None:
                message += "; give the stored history (verify --state PATH --dataset NAME) to judge it"
            return (FAILURE if self.strict else SUCCESS), message, verdict
        if verdict.anomalous:
            return (
                FAILURE,
                f"anomaly ({detector.TYPE}) against {len(earlier)} earlier point(s): {verdict.message}",
                verdict,
            )
        return SUCCESS, None, verdict
