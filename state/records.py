"""What a batch commits: plain frozen records, built from the engine's objects.

* ``StateRecord``: one analyzer state at a scope (``batch`` | ``window`` | ``total``);
  window records carry ``window_start``/``window_end``. ``final=True`` marks the last
  state of a window the watermark has closed: the store keeps it in the ``states`` log
  (for ``merge_range``) and drops the window from ``states_latest`` (so ``load_states``
  no longer returns it).
* ``MetricRecord`` / ``ResultRecord``: flat views of ``ScopedMetric`` / ``ConstraintResult``.
* ``DetectorStateRecord``: a detector's serialized state (bytes; JSON helpers below) and
  the sequence number of the last point it learned from, so a replayed point is skipped.

``metric_records(report)`` and ``result_records(report)`` build the records of a
``BatchReport``; ``state_records(...)`` builds state records from an analyzer->state map;
``records_for_batch(...)`` builds all records of a batch from the runner's running states.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from streamdq.analyzers.base import Analyzer
from streamdq.analyzers.register import analyzer_from_spec
from streamdq.analyzers.state import State
from streamdq.errors import InvalidArgument
from streamdq.report import SCOPES, BatchReport, ConstraintResult, ScopedMetric, Window


def _check_scope(scope: str, window_start: datetime | None, window_end: datetime | None) -> None:
    if scope not in SCOPES:
        raise InvalidArgument(f"unknown scope {scope!r}; expected one of {', '.join(SCOPES)}")
    if (scope == "window") != (window_start is not None):
        raise InvalidArgument(f"scope {scope!r}: window_start must be set exactly for the window scope")
    if window_start is not None and (window_end is None or window_end <= window_start):
        raise InvalidArgument(f"window [{window_start}, {window_end}) is empty or has no end")
    for ts in (window_start, window_end):
        if ts is not None and ts.tzinfo is None:
            raise InvalidArgument(f"window bound {ts} must be timezone-aware (UTC)")


@dataclass(frozen=True)
class StateRecord:
    """An analyzer state at a scope. ``analyzer_spec`` is ``json.dumps(analyzer.to_spec())``."""

    scope: str
    window_start: datetime | None
    window_end: datetime | None
    state_key: str
    analyzer_spec: str
    state: State
    final: bool = False

    def __post_init__(self) -> None:
        _check_scope(self.scope, self.window_start, self.window_end)

    @classmethod
    def of(
        cls,
        analyzer: Analyzer,
        state: State,
        scope: str,
        window: Window | None = None,
        *,
        final: bool = False,
    ) -> StateRecord:
        return cls(
            scope=scope,
            window_start=window.start if window else None,
            window_end=window.end if window else None,
            state_key=analyzer.state_key(),
            analyzer_spec=analyzer.key(),
            state=state,
            final=final,
        )

    def analyzer(self) -> Analyzer:
        return analyzer_from_spec(json.loads(self.analyzer_spec))


def state_records(
    states: Mapping[Analyzer, State], scope: str, window: Window | None = None, *, final: bool = False
) -> list[StateRecord]:
    """One record per distinct ``state_key`` (analyzers sharing a state store it once)."""
    out: dict[str, StateRecord] = {}
    for analyzer, state in states.items():
        out.setdefault(analyzer.state_key(), StateRecord.of(analyzer, state, scope, window, final=final))
    return list(out.values())


def split_value(value: Any) -> tuple[float | None, str | None]:
    """A metric value as (DOUBLE column, JSON column): scalars go to the first, the rest to JSON."""
    if value is None:
        return None, None
    if isinstance(value, bool):
        return float(value), None
    if isinstance(value, int | float):
        return float(value), None
    return None, json.dumps(value, sort_keys=True, default=str, allow_nan=True)


def join_value(value: float | None, value_json: str | None) -> Any:
    if value_json is not None:
        return json.loads(value_json)
    return value


@dataclass(frozen=True)
class MetricRecord:
    scope: str
    window_start: datetime | None
    window_end: datetime | None
    entity: str
    instance: str
    name: str
    value: Any
    failure: str | None = None
    empty: bool = False
    approximate: bool = False
    error_bound: float | None = None
    analyzer_key: str = ""

    @classmethod
    def from_scoped(cls, sm: ScopedMetric) -> MetricRecord:
        m = sm.metric
        return cls(
            scope=sm.scope,
            window_start=sm.window.start if sm.window else None,
            window_end=sm.window.end if sm.window else None,
            entity=m.entity,
            instance=m.instance,
            name=m.name,
            value=m.value,
            failure=m.failure,
            empty=m.empty,
            approximate=m.approximate,
            error_bound=m.error_bound,
            analyzer_key=sm.analyzer_key,
        )


@dataclass(frozen=True)
class ResultRecord:
    check: str
    level: str
    constraint: str
    constraint_id: str
    status: str
    message: str | None
    metric_entity: str | None
    metric_name: str | None
    metric_instance: str | None
    metric_value: Any
    scope: str
    window_start: datetime | None
    window_end: datetime | None
    bound: Any = None

    @classmethod
    def from_constraint_result(cls, cr: ConstraintResult) -> ResultRecord:
        m = cr.metric
        return cls(
            check=cr.check,
            level=cr.level,
            constraint=cr.constraint,
            constraint_id=cr.constraint_id,
            status=cr.status,
            message=cr.message,
            metric_entity=m.entity if m else None,
            metric_name=m.name if m else None,
            metric_instance=m.instance if m else None,
            metric_value=m.value if m else None,
            scope=cr.scope,
            window_start=cr.window.start if cr.window else None,
            window_end=cr.window.end if cr.window else None,
            bound=cr.bound,
        )


@dataclass(frozen=True)
class DetectorStateRecord:
    """A detector's state for one key (e.g. a constraint id or ``scope/name/instance``).

    ``batch_id``/``query_id`` are filled by the store when loading (who wrote it last).
    """

    key: str
    detector: str
    state: bytes
    last_seq: int
    batch_id: int | None = None
    query_id: str | None = None

    @classmethod
    def from_json(cls, key: str, detector: str, state: Any, last_seq: int) -> DetectorStateRecord:
        text = json.dumps(state, sort_keys=True, separators=(",", ":"), allow_nan=True)
        return cls(key, detector, text.encode(), last_seq)

    def json(self) -> Any:
        return json.loads(self.state)


def metric_records(report: BatchReport) -> list[MetricRecord]:
    return [MetricRecord.from_scoped(m) for m in report.metrics]


MEASURE_ENTITY = "Measure"  # the metrics table's entity of SQL measures (name = the measure's name)


def measure_records(report: BatchReport) -> list[MetricRecord]:
    """The report's SQL measures as metric records: entity ``Measure``, name = the measure's
    name, instance = its result type, a scalar value in ``value`` and a list or map in
    ``value_json`` (read back by ``streamdq.state.measure_history``)."""
    return [
        MetricRecord(
            scope=m.scope,
            window_start=datetime.fromisoformat(m.window[0]) if m.window else None,
            window_end=datetime.fromisoformat(m.window[1]) if m.window else None,
            entity=MEASURE_ENTITY,
            instance=m.result_type,
            name=m.name,
            value=list(m.value) if isinstance(m.value, tuple) else m.value,
            failure=m.failure,
            empty=False,
            analyzer_key=f"measure:{m.name}",
        )
        for m in report.measures
    ]


def result_records(report: BatchReport) -> list[ResultRecord]:
    return [
        ResultRecord.from_constraint_result(r) for c in report.check_results for r in c.constraint_results
    ]


def dedupe_keys(records: Iterable[StateRecord]) -> list[StateRecord]:
    """Reject two records for the same (scope, window_start, state_key) in one commit."""
    seen: dict[tuple[str, datetime | None, str], StateRecord] = {}
    for r in records:
        k = (r.scope, r.window_start, r.state_key)
        if k in seen:
            raise InvalidArgument(
                f"two state records for scope={k[0]} window_start={k[1]} key={k[2]} in one batch"
            )
        seen[k] = r
    return list(seen.values())


@dataclass(frozen=True)
class BatchRecords:
    """Everything ``DeltaStateStore.commit`` takes for one batch besides the report."""

    states: list[StateRecord]
    metrics: list[MetricRecord]
    results: list[ResultRecord]


def records_for_batch(
    report: BatchReport,
    *,
    total: Mapping[str, State],
    open_windows: Mapping[Window, Mapping[str, State]],
    closed_windows: Iterable[tuple[Window, Mapping[str, State]]] = (),
    analyzers: Iterable[Analyzer] = (),
) -> BatchRecords:
    """Build the records of a batch from the runner's running states (keyed by ``state_key``).

    ``total``: the total-scope states; ``open_windows``: the states of every window still
    open after this batch; ``closed_windows``: the final states of windows the watermark
    closed in this batch (stored with ``final=True``). ``analyzers`` supply the stored
    spec of each state key (the first analyzer with that key; a key without one is stored
    with an empty spec and cannot be rebuilt by ``merge_range`` from the key alone).
    """
    specs: dict[str, str] = {}
    for a in analyzers:
        specs.setdefault(a.state_key(), a.key())

    def make(
        states: Mapping[str, State], scope: str, window: Window | None, final: bool
    ) -> list[StateRecord]:
        return [
            StateRecord(
                scope=scope,
                window_start=window.start if window else None,
                window_end=window.end if window else None,
                state_key=key,
                analyzer_spec=specs.get(key, ""),
                state=state,
                final=final,
            )
            for key, state in states.items()
        ]

    out = make(total, "total", None, False)
    closed = list(closed_windows)
    closed_starts = {w.start for w, _ in closed}
    for w, states in open_windows.items():
        if w.start not in closed_starts:
            out += make(states, "window", w, False)
    for w, states in closed:
        out += make(states, "window", w, True)
    return BatchRecords(out, metric_records(report) + measure_records(report), result_records(report))
