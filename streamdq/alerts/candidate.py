"""What the alert policy judges: a failing or passing constraint (with the detector anomaly that
carries its id, if any), a free-standing anomaly, or the dataset's pass verdict.

``Candidate`` is a frozen view over a ``ConstraintResult`` and/or an ``Anomaly`` of one report:
its scope, window, metric, value, the expected bound as display text (``expected``, what the
alert shows) and as numbers (``bounds``: the anomaly's interval, else the constraint's
structured ``lower``/``upper``; never parsed back from text). ``pass_results`` turns a report's
measure/check/pass documents into constraint results of a check ``pass``. Pure; no I/O.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from streamdq.report import (
    FAILURE,
    SUCCESS,
    Anomaly,
    BatchReport,
    Bounds,
    CheckResult,
    ConstraintResult,
    Window,
)

PASS_CHECK = "pass"
PASS_ID_PREFIX = "pass:"


def step_key(scope: str, window: Window | None) -> datetime | None:
    """The step an observation belongs to: its window's start at window scope, else None.

    >>> from datetime import UTC, datetime
    >>> w = Window(datetime(2026, 11, 22, 12, tzinfo=UTC), datetime(2026, 11, 22, 13, tzinfo=UTC))
    >>> step_key("window", w).hour, step_key("total", w)
    (12, None)
    """
    return window.start if scope == "window" and window is not None else None


def pass_results(report: BatchReport) -> list[tuple[CheckResult, ConstraintResult]]:
    """The dataset-level pass verdicts of ``report`` (its measure/check/pass documents) as
    results of a check ``pass``, constraint id ``pass:<scope>``: a dataset whose pass turns
    false alerts once (a ``violation`` at level Error) and once more (``resolved``) when it
    is true again, with the hygiene of any constraint; its alert ids are as deterministic."""
    out = []
    for doc in report.measure_check_pass:
        scope = doc.scope or "batch"
        window = (
            Window(datetime.fromisoformat(doc.window[0]), datetime.fromisoformat(doc.window[1]))
            if doc.window
            else None
        )
        failed = [name for name, ok in doc.check.items() if not ok]
        result = ConstraintResult(
            check=PASS_CHECK,
            level="Error",
            constraint="the dataset's pass policy",
            constraint_id=f"{PASS_ID_PREFIX}{scope}",
            status=SUCCESS if doc.passed else FAILURE,
            message=None if doc.passed else f"failed checks: {', '.join(failed) or 'none'}",
            scope=scope,
            window=window,
        )
        out.append((CheckResult(PASS_CHECK, "Error", result.status, (result,)), result))
    return out


def anomaly_key(anomaly: Anomaly) -> str:
    """The key of an anomaly that belongs to no constraint: same detector, metric and scope."""
    raw = json.dumps([anomaly.detector, anomaly.metric.name, anomaly.metric.instance, anomaly.scope])
    return "anomaly-" + hashlib.sha256(raw.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Candidate:
    """A failing constraint (possibly with its anomaly), or a free-standing anomaly.

    >>> from streamdq.metric import Metric
    >>> r = ConstraintResult("orders", "Error", "Size", "c1", FAILURE, bound=">= 1000.0", lower=1000.0,
    ...                      metric=Metric("Dataset", "Size", "*", value=995.0))
    >>> c = Candidate("c1", "orders", "Error", "Size", r, None)
    >>> c.kind, c.expected, c.distance_outside()
    ('violation', '>= 1000.0', 5.0)
    """

    constraint_id: str
    check: str
    severity: str
    constraint: str
    result: ConstraintResult | None
    anomaly: Anomaly | None

    @property
    def scope(self) -> str:
        if self.result is not None:
            return self.result.scope
        assert self.anomaly is not None
        return self.anomaly.scope

    @property
    def window(self) -> Window | None:
        if self.result is not None and self.result.window is not None:
            return self.result.window
        return self.anomaly.window if self.anomaly is not None else None

    @property
    def metric(self) -> Any:
        if self.result is not None and self.result.metric is not None:
            return self.result.metric
        return self.anomaly.metric if self.anomaly is not None else None

    @property
    def value(self) -> Any:
        if self.anomaly is not None:
            return self.anomaly.value
        metric = self.metric
        return metric.value if metric is not None else None

    @property
    def _anomaly_interval(self) -> bool:
        return self.anomaly is not None and (self.anomaly.lower is not None or self.anomaly.upper is not None)

    @property
    def expected(self) -> Any:
        """The bound as the alert shows it: the detector's interval, else the constraint's text."""
        if self._anomaly_interval:
            assert self.anomaly is not None
            return {"lower": self.anomaly.lower, "upper": self.anomaly.upper}
        return self.result.bound if self.result is not None else None

    @property
    def bounds(self) -> Bounds:
        """The bound as numbers: the detector's interval, else the constraint's ``lower``/``upper``."""
        if self._anomaly_interval:
            assert self.anomaly is not None
            return Bounds(self.anomaly.lower, self.anomaly.upper)
        return self.result.bounds if self.result is not None else Bounds()

    def distance_outside(self) -> float | None:
        """How far the value lies outside ``bounds`` (0.0 inside); None if either is unknown."""
        value, bounds = self.value, self.bounds
        if not bounds.known or not isinstance(value, int | float) or isinstance(value, bool):
            return None
        return bounds.distance(float(value)) if math.isfinite(value) else None

    @property
    def kind(self) -> str:
        return "anomaly" if self.anomaly is not None else "violation"
