"""Judging ``has_no_anomalies`` constraints with detectors: the bridge between checks and detectors.

``AnomalyEvaluator`` implements the checks' evaluator signature ``(constraint, metric, context) ->
(status, message)``, passed in the check context as ``context["anomaly_evaluator"]``. It keeps one detector state
per watched series, keyed by ``series_key(dataset, constraint)`` (the detector spec is part of the
key: changing the detector configuration starts a fresh state, the old one is left unused).

Where it runs: on the driver, from the engine's judge step, once per point of the series (per
microbatch for ``scope=batch``/``total``, per closed window for ``scope=window``). The engine passes
in ``context``: ``seq`` (int, required: the batch id, or the window index e.g. window start // window
length, strictly increasing), optionally ``time`` (window end / processing time; defaults to ``seq``)
and ``dataset``. It persists ``dump()`` with the other states and restores with ``load()``; since
every detector is replay-safe, re-judging a replayed batch returns the stored verdict and leaves the
state unchanged. The engine passes its own instance per query as ``context["anomaly_evaluator"]``;
there is no process-wide evaluator.

Verdicts: anomalous -> ``Failure`` with the detector's message; warming up -> ``Success`` with the
"waiting for N more points" message; a failed or missing metric -> ``Failure`` with the reason,
except an empty metric under a ``where`` filter -> ``Success`` (the checks' rule for every
constraint); either way the detector is advanced with a missing value so seasonal detectors keep
their phase. Every call returns ``(status, message, verdict)``: the detector's ``Verdict`` lands in
``ConstraintResult.verdict``, from which the engine builds ``report.Anomaly`` records (detector,
value, lower, upper, score); nothing is kept aside for it.

>>> from streamdq.checks.constraint import Constraint
>>> from streamdq.analyzers.metric import Metric
>>> c = Constraint.create("has_no_anomalies", {"metric": {"analyzer": "Size"},
...                       "detector": {"type": "simple_threshold", "upper_bound": 100}})
>>> evaluator = AnomalyEvaluator()
>>> status, message, verdict = evaluator(c, Metric("Dataset", "Size", "*", value=250.0), {"seq": 7})
>>> status, verdict.anomalous, verdict.upper
('Failure', True, 100.0)
>>> AnomalyEvaluator.load(evaluator.dump()).states == evaluator.states
True
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from streamdq.detectors.base import (
    DetectorState,
    Point,
    Verdict,
    dump_state,
    load_state,
)
from streamdq.detectors.register import detector_from_spec
from streamdq.errors import ConfigError

SUCCESS = "Success"  # streamdq.report.SUCCESS / FAILURE (not imported: detectors stay light)
FAILURE = "Failure"


def series_key(dataset: str, constraint: Any) -> str:
    """Stable id of the series a ``has_no_anomalies`` constraint watches (dataset, metric, detector,
    where, scope)."""
    payload = json.dumps(
        {
            "dataset": dataset,
            "params": dict(constraint.params),
            "where": getattr(constraint, "where", None),
            "scope": getattr(constraint, "scope", None),
        },
        sort_keys=True,
        separators=(",", ":"),
        default=str,
    )
    return hashlib.sha256(payload.encode()).hexdigest()[:24]


def validate_detector_spec(spec: Any) -> tuple[str, str] | None:
    """``(key, problem)`` if ``spec`` is not a valid detector spec, else None (for fail-fast config
    validation of ``has_no_anomalies``): the key is the path of the offending spec key under the
    constraint (``detector.lower_factor``), the problem carries the fix.

    >>> validate_detector_spec({"type": "online_normal", "min_points": -1})
    ('detector.min_points', 'must be >= 0, got -1 (detector online_normal); fix: give the number of points to learn before judging')
    >>> validate_detector_spec({"type": "online_normal"}) is None
    True
    """
    try:
        detector_from_spec(spec)
    except ConfigError as exc:
        key = f"detector.{exc.key}" if exc.key else "detector"
        return key, exc.problem + (f"; fix: {exc.fix}" if exc.fix else "")
    return None


class AnomalyEvaluator:
    """Stateful evaluator of ``has_no_anomalies``; see the module docstring for the contract."""

    def __init__(self, states: Mapping[str, DetectorState] | None = None) -> None:
        self.states: dict[str, DetectorState] = dict(states or {})

    def __call__(
        self, constraint: Any, metric: Any, context: Mapping[str, Any]
    ) -> tuple[str, str | None] | tuple[str, str | None, Verdict]:
        if "seq" not in context:
            return FAILURE, (
                "has_no_anomalies: the engine must pass context['seq'] (batch id or window index) "
                "so that the detector can judge the point and stay replay-safe"
            )
        detector = detector_from_spec(constraint.params["detector"])
        key = series_key(str(context.get("dataset", "")), constraint)
        state = self.states.get(key)
        if state is None or state.get("type") != detector.TYPE:
            state = detector.initial_state()
        ok = metric is not None and metric.ok
        value = float(metric.value) if ok and metric.value is not None else None
        seq = int(context["seq"])
        time = context.get("time", float(seq))
        state, verdict = detector.update(state, Point(time=time, value=value, seq=seq))
        self.states[key] = state
        if metric is None:
            return FAILURE, "has_no_anomalies: no metric computed for this point", verdict
        if not ok:
            if getattr(metric, "empty", False) and getattr(constraint, "where", None) is not None:
                return SUCCESS, None, verdict  # as every constraint: a where-filter leaving no row passes
            return FAILURE, str(metric.failure), verdict
        if verdict.anomalous:
            return FAILURE, f"anomaly ({detector.TYPE}): {verdict.message}", verdict
        if verdict.warming_up:
            return SUCCESS, verdict.message, verdict
        return SUCCESS, None, verdict

    def dump(self) -> dict[str, bytes]:
        """Every series' detector state as canonical bytes (for the state store)."""
        return {key: dump_state(state) for key, state in self.states.items()}

    @classmethod
    def load(cls, blobs: Mapping[str, bytes]) -> AnomalyEvaluator:
        """Inverse of ``dump``."""
        return cls({key: load_state(blob) for key, blob in blobs.items()})
