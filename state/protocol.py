"""The ``StateStore`` protocol (DESIGN.md section 3): what the streaming runner needs.

Implemented by ``streamdq.state.delta_store.DeltaStateStore``. All methods run on the
driver. ``commit`` is exactly once per ``(query_id, batch_id)``; readers only ever see
committed batches (a batch is committed when its report is stored and, in a store that
writes some tables beside the report, when those hold the batch too).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

import pyarrow as pa
from streamdq.state.records import DetectorStateRecord, MetricRecord, ResultRecord, StateRecord

from streamdq.analyzers.state import State
from streamdq.report import BatchReport

StateKey = tuple[str, datetime | None, str]  # (scope, window_start, state_key)


@runtime_checkable
class StateStore(Protocol):
    def last_committed_batch(self, query_id: str) -> int | None: ...

    def commit(
        self,
        query_id: str,
        batch_id: int,
        *,
        dataset: str,
        states: Sequence[StateRecord],
        metrics: Sequence[MetricRecord],
        results: Sequence[ResultRecord],
        report: BatchReport,
        quarantine: pa.Table | None = None,
        detector_states: Sequence[DetectorStateRecord] = (),
    ) -> bool: ...

    def load_states(self, dataset: str) -> dict[StateKey, State]: ...

    def report(self, query_id: str, batch_id: int) -> BatchReport | None: ...

    def load_detector_states(self, dataset: str) -> dict[str, DetectorStateRecord]: ...

    def history(
        self,
        dataset: str,
        metric: str,
        *,
        instance: str | None = None,
        scope: str | None = None,
        start: datetime | None = None,
        end: datetime | None = None,
    ) -> pa.Table: ...

    def merge_range(
        self, dataset: str, state_key_or_analyzer: Any, start: datetime, end: datetime
    ) -> State: ...

    def maintain(self, retention_hours: float | None = None) -> None: ...

    def recover(self, query_id: str) -> None:
        """Write whatever a crash cut short of the query's last committed batch (a store whose
        commit is all-or-nothing has nothing to do)."""
        ...

    def settle(self) -> None:
        """Write every row of the committed batches now and wait for it (a store may keep a
        batch's report-derived rows to write them after its report, with later batches', in
        the background; its own reads always do this first)."""
        ...
