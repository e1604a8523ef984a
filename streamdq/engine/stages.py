"""The frozen values the streaming handler's stages hand each other (DESIGN.md section 1).

One microbatch flows through ``BatchHandler``'s stages, each returning one of these:

* compute -> ``BatchStates``: the good rows' states of the whole batch and of each event-time
  window it touches, counters (rows, bad rows, drift), the batch's max event time, the path
  taken and the Spark jobs run;
* ``ScopeStates.advance`` -> ``ScopeUpdate``: the windows that took rows, the windows the
  watermark closed (with their final states), the late windows and rows, the watermark;
* measure -> ``Measurement``: the metrics of every scope, and per-scope metric maps to judge;
* judge -> ``Judgement``: check results and anomalies (window monitors included);
* then the alert policy, the commit and the emit, which work on the ``BatchReport``.

No stage reads another's leftovers from the handler: what it needs is in these values.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import Any

from streamdq.analyzers.base import Analyzer
from streamdq.analyzers.metric import Metric
from streamdq.analyzers.state import State
from streamdq.measure_result import MeasureResult
from streamdq.report import Anomaly, CheckResult, ScopedMetric, Window
from streamdq.result_document import MeasureCheckPass

StateMap = Mapping[str, State]
_EMPTY: Mapping[Any, Any] = MappingProxyType({})


@dataclass(frozen=True)
class BatchStates:
    """What the compute stage found in one microbatch (good rows only in the states).

    ``windows`` maps a window start to the states of this batch's good rows in it (rows with
    no event time are in ``batch`` only). ``counters`` hold ``input_rows``, ``bad_rows`` and
    the drift counts; ``drift_names`` the new and missing fields' names, found in the same
    pass (see ``engine.bad_data``). An empty microbatch is ``BatchStates.empty()``: no state, zero counts.
    """

    batch: StateMap = field(default_factory=dict)
    windows: Mapping[datetime, StateMap] = field(default_factory=dict)
    window_rows: Mapping[datetime, int] = field(default_factory=dict)
    failures: Mapping[Analyzer, str] = field(default_factory=dict)
    counters: Mapping[str, int] = field(default_factory=dict)
    event_time_max: datetime | None = None
    path: str = "empty"
    spark_jobs: int = 0
    # names of new and missing fields ({"unknown_fields": (...), "missing_fields": (...)})
    drift_names: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def good_rows(self) -> int:
        return int(self.counters.get("input_rows", 0)) - int(self.counters.get("bad_rows", 0))


@dataclass(frozen=True)
class ScopeUpdate:
    """How one batch moved the running scopes.

    ``touched``: open windows that took rows; ``closed``: (window, final states) of every
    window the watermark passed, oldest first; ``late``: windows already closed before this
    batch whose rows arrived now (``late_rows`` of them: counted, quarantined, kept in the
    batch and total scopes only); ``watermark`` and ``event_time_max`` after the batch.
    """

    touched: tuple[datetime, ...] = ()
    closed: tuple[tuple[Window, StateMap], ...] = ()
    late: tuple[datetime, ...] = ()
    late_rows: int = 0
    watermark: datetime | None = None
    event_time_max: datetime | None = None


@dataclass(frozen=True)
class Measurement:
    """Metrics of one batch: everything reported, and the per-scope maps the judge reads;
    ``measures``: the SQL measures of every scope (``BatchReport.measures``)."""

    metrics: tuple[ScopedMetric, ...]
    batch: Mapping[Analyzer, Metric]
    total: Mapping[Analyzer, Metric]
    closed: tuple[tuple[Window, Mapping[Analyzer, Metric], StateMap], ...] = ()
    measures: tuple[MeasureResult, ...] = ()


@dataclass(frozen=True)
class Judgement:
    """Check results and anomalies of one batch, plus metrics the window monitors published
    and the measure/check/pass documents (batch, each closed window, total)."""

    check_results: tuple[CheckResult, ...] = ()
    anomalies: tuple[Anomaly, ...] = ()
    metrics: tuple[ScopedMetric, ...] = ()
    documents: tuple[MeasureCheckPass, ...] = ()


@dataclass(frozen=True)
class Computed:
    """Everything the handler's tail (measure, judge, policy, commit, emit) needs from the part
    of a batch that reads its frame: the batch's states and their scope update, its quarantined
    rows (a ``pyarrow.Table`` or None), the SQL measures run on the frame, the row-level
    metrics, the processing time, and how long its compute took (and, pipelined, how long it
    first waited for the tail of the batch before). The pipelined tail runs from this alone."""

    batch_id: int
    processing_time: datetime
    states: BatchStates
    update: ScopeUpdate
    quarantine_rows: Any
    sql_measures: tuple[MeasureResult, ...] = ()
    row_level_metrics: tuple[ScopedMetric, ...] = ()
    compute_seconds: float = 0.0
    waited_seconds: float = 0.0  # pipelined: the wait for the batch before's tail
