"""BatchReport and friends: the one frozen object that travels from judgement to sinks.

Everything here is immutable and round-trips through ``to_dict``/``from_dict`` (plain JSON
types; datetimes as ISO-8601 UTC strings), so the state store can keep the report of
each committed batch and re-emit it verbatim when Spark replays that batch.

Scopes: ``batch`` (the microbatch), ``window`` (an event-time tumbling window, with
``window_start``/``window_end``), ``total`` (since the query started).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from streamdq.measure_result import MeasureResult
from streamdq.metric import Metric
from streamdq.result_document import MeasureCheckPass

SCOPES = ("batch", "window", "total")

SUCCESS = "Success"
WARNING = "Warning"
ERROR = "Error"
FAILURE = "Failure"


def _ts(value: datetime | None) -> str | None:
    return value.astimezone(UTC).isoformat() if value is not None else None


def _parse_ts(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


@dataclass(frozen=True)
class Window:
    """An event-time window [start, end)."""

    start: datetime
    end: datetime

    def to_dict(self) -> dict[str, Any]:
        return {"start": _ts(self.start), "end": _ts(self.end)}

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> Window | None:
        if not data:
            return None
        start, end = _parse_ts(data["start"]), _parse_ts(data["end"])
        assert start is not None and end is not None
        return cls(start, end)


@dataclass(frozen=True)
class ScopedMetric:
    """A metric at a scope (and, for the window scope, its window)."""

    scope: str
    metric: Metric
    window: Window | None = None
    analyzer_key: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "scope": self.scope,
            "window": self.window.to_dict() if self.window else None,
            "analyzer_key": self.analyzer_key,
            "metric": self.metric.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ScopedMetric:
        return cls(
            scope=data["scope"],
            metric=Metric.from_dict(data["metric"]),
            window=Window.from_dict(data.get("window")),
            analyzer_key=data.get("analyzer_key", ""),
        )


def _finite(value: Any) -> float | None:
    """``value`` as a float bound; None for None, NaN and the infinities (no bound that side)."""
    if value is None or isinstance(value, bool):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def _numeric_pair(value: Any) -> bool:
    return (
        isinstance(value, list | tuple)
        and len(value) == 2
        and all(v is None or (isinstance(v, int | float) and not isinstance(v, bool)) for v in value)
    )


@dataclass(frozen=True)
class Bounds:
    """An interval an assertion accepts: ``lower`` / ``upper`` (None: open on that side) and
    whether each end is part of it. Pure value; ``Bounds()`` accepts everything.

    >>> Bounds(lower=1000.0).distance(1.0)
    999.0
    >>> Bounds(upper=10.0, upper_inclusive=False).contains(10.0)
    False
    """

    lower: float | None = None
    upper: float | None = None
    lower_inclusive: bool = True
    upper_inclusive: bool = True

    @property
    def known(self) -> bool:
        """True if at least one side is bounded."""
        return self.lower is not None or self.upper is not None

    def contains(self, value: float) -> bool:
        """True if ``value`` passes: inside, or on an inclusive end."""
        lo, hi = self.lower, self.upper
        above = lo is None or value > lo or (value == lo and self.lower_inclusive)
        below = hi is None or value < hi or (value == hi and self.upper_inclusive)
        return above and below

    def distance(self, value: float) -> float:
        """How far ``value`` lies outside the interval (0.0 inside or on an end)."""
        below = self.lower - value if self.lower is not None else 0.0
        above = value - self.upper if self.upper is not None else 0.0
        return max(below, above, 0.0)


@dataclass(frozen=True)
class ConstraintResult:
    """The outcome of one constraint: ``Success`` or ``Failure`` with a message.

    ``constraint_id`` is stable across runs (derived from the constraint's data) and is
    what alert ids and de-duplication key on. ``bound`` describes the assertion or the
    expected interval for display, in words or numbers (e.g. ``">= 0.95"`` or ``[0.9, 1.1]``);
    programs read the structured ``lower`` / ``upper`` (None: no bound on that side, or an
    assertion that is no interval, such as ``!= 0`` or a Python callable) with
    ``lower_inclusive`` / ``upper_inclusive`` (``> 5`` is lower 5.0, not inclusive). A ``bound``
    given as a ``[lower, upper]`` pair of numbers fills ``lower`` / ``upper`` when they are not
    given. A report written before these fields existed reads them back as None.

    >>> r = ConstraintResult("orders", "Error", "Size", "c1", FAILURE, bound="> 5.0", lower=5.0,
    ...                      lower_inclusive=False)
    >>> r.bounds.distance(3.0), r.bounds.contains(5.0)
    (2.0, False)
    >>> ConstraintResult.from_dict({**r.to_dict(), "lower": None, "lower_inclusive": None}).lower is None
    True
    """

    check: str
    level: str
    constraint: str
    constraint_id: str
    status: str
    message: str | None = None
    metric: Metric | None = None
    scope: str = "batch"
    window: Window | None = None
    bound: Any = None
    verdict: Any = field(default=None, compare=False)
    """What a kind's own evaluator said beyond status and message (``has_no_anomalies``: the
    detector's ``Verdict``, which the engine turns into an ``Anomaly``); not serialized."""
    lower: float | None = None
    upper: float | None = None
    lower_inclusive: bool = True
    upper_inclusive: bool = True

    def __post_init__(self) -> None:
        if self.lower is None and self.upper is None and _numeric_pair(self.bound):
            object.__setattr__(self, "lower", _finite(self.bound[0]))
            object.__setattr__(self, "upper", _finite(self.bound[1]))

    @property
    def failed(self) -> bool:
        return self.status != SUCCESS

    @property
    def bounds(self) -> Bounds:
        """The structured bounds as one value."""
        return Bounds(self.lower, self.upper, self.lower_inclusive, self.upper_inclusive)

    def to_dict(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "level": self.level,
            "constraint": self.constraint,
            "constraint_id": self.constraint_id,
            "status": self.status,
            "message": self.message,
            "metric": self.metric.to_dict() if self.metric else None,
            "scope": self.scope,
            "window": self.window.to_dict() if self.window else None,
            "bound": self.bound,
            "lower": self.lower,
            "upper": self.upper,
            "lower_inclusive": self.lower_inclusive,
            "upper_inclusive": self.upper_inclusive,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ConstraintResult:
        return cls(
            check=data["check"],
            level=data["level"],
            constraint=data["constraint"],
            constraint_id=data["constraint_id"],
            status=data["status"],
            message=data.get("message"),
            metric=Metric.from_dict(data["metric"]) if data.get("metric") else None,
            scope=data.get("scope", "batch"),
            window=Window.from_dict(data.get("window")),
            bound=data.get("bound"),
            lower=_finite(data.get("lower")),
            upper=_finite(data.get("upper")),
            lower_inclusive=data.get("lower_inclusive") is not False,
            upper_inclusive=data.get("upper_inclusive") is not False,
        )


@dataclass(frozen=True)
class CheckResult:
    """A check's status: Success, or Warning/Error (its level) if any constraint failed."""

    check: str
    level: str
    status: str
    constraint_results: tuple[ConstraintResult, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "level": self.level,
            "status": self.status,
            "constraint_results": [c.to_dict() for c in self.constraint_results],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CheckResult:
        return cls(
            check=data["check"],
            level=data["level"],
            status=data["status"],
            constraint_results=tuple(
                ConstraintResult.from_dict(c) for c in data.get("constraint_results", [])
            ),
        )


@dataclass(frozen=True)
class Anomaly:
    """A detector's verdict that a metric point is anomalous."""

    detector: str
    metric: Metric
    scope: str
    value: float
    lower: float | None = None
    upper: float | None = None
    score: float | None = None
    window: Window | None = None
    constraint_id: str = ""
    message: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "detector": self.detector,
            "metric": self.metric.to_dict(),
            "scope": self.scope,
            "value": self.value,
            "lower": self.lower,
            "upper": self.upper,
            "score": self.score,
            "window": self.window.to_dict() if self.window else None,
            "constraint_id": self.constraint_id,
            "message": self.message,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Anomaly:
        return cls(
            detector=data["detector"],
            metric=Metric.from_dict(data["metric"]),
            scope=data["scope"],
            value=data["value"],
            lower=data.get("lower"),
            upper=data.get("upper"),
            score=data.get("score"),
            window=Window.from_dict(data.get("window")),
            constraint_id=data.get("constraint_id", ""),
            message=data.get("message"),
        )


@dataclass(frozen=True)
class BadDataSummary:
    """What the bad and drifting records of one batch were, short enough for a console line.

    ``reasons``: the most frequent quarantine reasons (``(reason, rows)``, a reason with its
    offending value cut off, so ``field amount: expected DOUBLE got 'x'`` and ``... got 'y'``
    are one reason), most frequent first; ``other_rows`` the quarantined rows with any other
    reason. ``sample``: where the first quarantined record came from (``file:line``, ``file``
    or ``topic[partition]@offset``) and ``sample_reason`` its full reason.
    ``unknown_fields`` / ``missing_fields``: the names of the new fields the batch's records
    carried that the schema does not name, and of the schema fields they lacked (at most a
    few, sorted). Built by ``streamdq.engine.bad_data``.
    """

    reasons: tuple[tuple[str, int], ...] = ()
    other_rows: int = 0
    sample: str | None = None
    sample_reason: str | None = None
    unknown_fields: tuple[str, ...] = ()
    missing_fields: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.reasons or self.unknown_fields or self.missing_fields)

    def to_dict(self) -> dict[str, Any]:
        return {
            "reasons": [[r, n] for r, n in self.reasons],
            "other_rows": self.other_rows,
            "sample": self.sample,
            "sample_reason": self.sample_reason,
            "unknown_fields": list(self.unknown_fields),
            "missing_fields": list(self.missing_fields),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> BadDataSummary:
        if not data:
            return cls()
        return cls(
            reasons=tuple((str(r), int(n)) for r, n in data.get("reasons") or ()),
            other_rows=int(data.get("other_rows") or 0),
            sample=data.get("sample"),
            sample_reason=data.get("sample_reason"),
            unknown_fields=tuple(data.get("unknown_fields") or ()),
            missing_fields=tuple(data.get("missing_fields") or ()),
        )


@dataclass(frozen=True)
class BatchReport:
    """What one microbatch produced: metrics at every scope, check results, anomalies, timings.

    ``timings`` holds seconds per phase (``compute``, ``commit``, ``total``...);
    ``counters`` holds row counts (``input_rows``, ``late_rows``, ``quarantined_rows``...).
    ``closed_windows`` lists the windows the watermark closed in this batch.
    ``alerts`` are the alert documents (``streamdq.alerts.Alert.to_dict()``) the alert
    policy derived for this batch, stored with the report so a replayed batch re-emits the
    same alerts; ``policy_state`` is the policy's state after this batch (restored on restart).
    ``bad_data`` says which reasons, where, and which new or missing fields (``BadDataSummary``).
    ``measures``: the SQL measures (``MeasureResult``): every measure at ``batch`` scope (not on a
    batch without good rows), and the compiled ones also at ``total`` scope and at ``window``
    scope for each window closed by this batch (``MeasureResult.window`` = its start, end).
    """

    dataset: str
    query_id: str
    batch_id: int
    processing_time: datetime
    metrics: tuple[ScopedMetric, ...] = ()
    check_results: tuple[CheckResult, ...] = ()
    anomalies: tuple[Anomaly, ...] = ()
    timings: dict[str, float] = field(default_factory=dict)
    counters: dict[str, int] = field(default_factory=dict)
    closed_windows: tuple[Window, ...] = ()
    event_time_max: datetime | None = None
    watermark: datetime | None = None
    replayed: bool = False
    alerts: tuple[dict[str, Any], ...] = ()
    policy_state: dict[str, Any] = field(default_factory=dict)
    bad_data: BadDataSummary = field(default_factory=BadDataSummary)
    measures: tuple[MeasureResult, ...] = ()
    measure_check_pass: tuple[MeasureCheckPass, ...] = ()
    """The measure/check/pass documents of this batch: one for the batch scope, one per
    closed window, one for the total scope (each where checks or measures were judged)."""

    def measures_at(self, scope: str) -> list[MeasureResult]:
        return [m for m in self.measures if m.scope == scope]

    @property
    def status(self) -> str:
        statuses = {c.status for c in self.check_results}
        if ERROR in statuses:
            return ERROR
        if WARNING in statuses:
            return WARNING
        return SUCCESS

    def failed_constraints(self) -> list[ConstraintResult]:
        return [r for c in self.check_results for r in c.constraint_results if r.failed]

    def metrics_at(self, scope: str) -> list[ScopedMetric]:
        return [m for m in self.metrics if m.scope == scope]

    def as_replayed(self) -> BatchReport:
        return replace(self, replayed=True)

    def to_dict(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset,
            "query_id": self.query_id,
            "batch_id": self.batch_id,
            "processing_time": _ts(self.processing_time),
            "status": self.status,
            "metrics": [m.to_dict() for m in self.metrics],
            "check_results": [c.to_dict() for c in self.check_results],
            "anomalies": [a.to_dict() for a in self.anomalies],
            "timings": dict(self.timings),
            "counters": dict(self.counters),
            "closed_windows": [w.to_dict() for w in self.closed_windows],
            "event_time_max": _ts(self.event_time_max),
            "watermark": _ts(self.watermark),
            "replayed": self.replayed,
            "alerts": list(self.alerts),
            "policy_state": dict(self.policy_state),
            "bad_data": self.bad_data.to_dict(),
            "measures": [m.to_json() for m in self.measures],
            "measure_check_pass": [d.to_record() for d in self.measure_check_pass],
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True, allow_nan=False, default=str)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> BatchReport:
        processing_time = _parse_ts(data["processing_time"])
        assert processing_time is not None
        return cls(
            dataset=data["dataset"],
            query_id=data["query_id"],
            batch_id=int(data["batch_id"]),
            processing_time=processing_time,
            metrics=tuple(ScopedMetric.from_dict(m) for m in data.get("metrics", [])),
            check_results=tuple(CheckResult.from_dict(c) for c in data.get("check_results", [])),
            anomalies=tuple(Anomaly.from_dict(a) for a in data.get("anomalies", [])),
            timings={k: float(v) for k, v in data.get("timings", {}).items()},
            counters={k: int(v) for k, v in data.get("counters", {}).items()},
            closed_windows=tuple(
                w for w in (Window.from_dict(x) for x in data.get("closed_windows", [])) if w
            ),
            event_time_max=_parse_ts(data.get("event_time_max")),
            watermark=_parse_ts(data.get("watermark")),
            replayed=bool(data.get("replayed", False)),
            alerts=tuple(data.get("alerts", ())),
            policy_state=dict(data.get("policy_state") or {}),
            bad_data=BadDataSummary.from_dict(data.get("bad_data")),
            measures=tuple(MeasureResult.from_json(m) for m in data.get("measures") or ()),
            measure_check_pass=tuple(
                MeasureCheckPass.from_record(d) for d in data.get("measure_check_pass") or ()
            ),
        )

    @classmethod
    def from_json(cls, text: str) -> BatchReport:
        return cls.from_dict(json.loads(text))
