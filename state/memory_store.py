"""``InMemoryStateStore``: the ``StateStore`` protocol in process memory (after Deequ's
``InMemoryStateProvider``), for fast tests of the streaming handler's commit order, restore
and replay without Delta.

Same contract as ``DeltaStateStore`` (docs/state.md, "Exactly once"):

* ``commit(query_id, batch_id, ...)`` is atomic and idempotent per ``(query_id, batch_id)``:
  it returns ``False`` and changes nothing when the batch (or a later one) of that query is
  already committed. Inputs are validated exactly as the Delta store does (the report must
  belong to the batch, one record per state key, known quarantine columns), before anything
  is stored.
* ``last_committed_batch`` is the highest committed batch id of a query (None before any).
* ``load_states(dataset)`` returns the latest state per ``(scope, window_start, state_key)``
  for the total scope and every open window; a window leaves it once a record with
  ``final=True`` arrives or the report lists it in ``closed_windows``.
* ``load_detector_states`` returns the latest record per key; a record whose detector and
  state bytes equal the stored ones is not rewritten (its ``batch_id``/``last_seq`` stay those
  of the commit that changed it), as in the Delta store.
* ``history`` and ``merge_range`` run the Delta store's own query code (``state.queries``) over
  the rows the Delta store would hold, so their results are the same.
* ``maintain`` is a no-op. Nothing survives the process; ``crash_before_report()`` lets a
  test simulate a driver killed mid-commit (nothing of the batch becomes visible).

Example (a commit, its replay, a restore):

>>> from streamdq.analyzers import Size
>>> from streamdq.analyzers.basic_states import NumMatches
>>> from streamdq.report import BatchReport
>>> from streamdq.state import InMemoryStateStore, StateRecord
>>> from datetime import UTC, datetime
>>> store = InMemoryStateStore()
>>> rep = BatchReport("orders", "q1", 0, datetime(2026, 1, 1, tzinfo=UTC))
>>> total = StateRecord.of(Size(), NumMatches(3), "total")
>>> store.commit("q1", 0, dataset="orders", states=[total], metrics=[], results=[], report=rep)
True
>>> store.commit("q1", 0, dataset="orders", states=[total], metrics=[], results=[], report=rep)
False
>>> store.last_committed_batch("q1"), store.report("q1", 0) == rep
(0, True)
>>> store.load_states("orders") == {("total", None, Size().state_key()): NumMatches(3)}
True
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar

import pyarrow as pa
import pyarrow.compute as pc
from streamdq.state import queries
from streamdq.state import schemas as S
from streamdq.state import tables as T
from streamdq.state.protocol import StateKey
from streamdq.state.records import (
    DetectorStateRecord,
    MetricRecord,
    ResultRecord,
    StateRecord,
    dedupe_keys,
)
from streamdq.state.stored_analyzers import answering_key, stored_window_analyzers

from streamdq.analyzers.state import State
from streamdq.errors import InvalidArgument
from streamdq.report import BatchReport


@dataclass
class _Dataset:
    latest: dict[StateKey, StateRecord] = field(default_factory=dict)
    detectors: dict[str, DetectorStateRecord] = field(default_factory=dict)


class InMemoryStateStore:
    """A ``StateStore`` in memory: the semantics of ``DeltaStateStore`` without Delta.

    Thread-safe (one lock around every call). ``clock`` gives the commit time stamped on
    rows (default: now, UTC). The committed rows are kept as Arrow tables in the Delta
    store's schemas: ``tables[name]`` (``schemas.STATES``, ``METRICS``, ...).
    """

    PERSISTENT: ClassVar[bool] = False
    """Nothing survives the instance: a restarted driver starts empty."""

    @classmethod
    def _unit_test_params(cls, root: Path) -> Iterator[dict[str, Any]]:
        """Stores for the conformance laws (streamdq.testing.store_checks); ``root`` is unused."""
        yield {}
        yield {"clock": lambda: datetime(2026, 1, 1, tzinfo=UTC)}

    def __init__(self, *, clock: Any = None) -> None:
        self._clock = clock or (lambda: datetime.now(UTC))
        self._lock = threading.RLock()
        self._last: dict[str, int] = {}
        self._reports: dict[tuple[str, int], BatchReport] = {}
        self._datasets: dict[str, _Dataset] = {}
        self._rows: dict[str, list[pa.Table]] = {name: [] for name in S.SCHEMAS}
        self._crash_next = False
        self.commits = 0  # commits that returned True (for tests of commit order)

    # -- exactly once -----------------------------------------------------------------
    def last_committed_batch(self, query_id: str) -> int | None:
        with self._lock:
            return self._last.get(query_id)

    def crash_before_report(self) -> None:
        """Make the next ``commit`` raise ``RuntimeError`` as a driver killed before its report
        is written would: nothing of that batch becomes visible (as for Delta readers)."""
        self._crash_next = True

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
    ) -> bool:
        """Commit one batch exactly once; False when it (or a later batch) was already committed."""
        if (report.dataset, report.query_id, report.batch_id) != (dataset, query_id, batch_id):
            raise InvalidArgument(
                f"report is for dataset={report.dataset!r} query={report.query_id!r} batch={report.batch_id}, "
                f"commit was called for dataset={dataset!r} query={query_id!r} batch={batch_id}"
            )
        if batch_id < 0:
            raise InvalidArgument(f"batch_id must be >= 0, got {batch_id}")
        with self._lock:
            last = self._last.get(query_id)
            if last is not None and batch_id <= last:
                return False
            now = self._clock()
            records = dedupe_keys(states)
            # build every table first: bad input fails before anything is stored
            built = {
                S.STATES: T.state_table(
                    records, dataset=dataset, batch_id=batch_id, query_id=query_id, committed_at=now
                ),
                S.METRICS: T.metric_table(metrics, report),
                S.RESULTS: T.result_table(results, report),
                S.REPORTS: T.report_table(report, now),
            }
            if quarantine is not None and quarantine.num_rows:
                built[S.QUARANTINE] = T.quarantine_table(
                    quarantine, dataset=dataset, batch_id=batch_id, query_id=query_id, ingested_at=now
                )
            T.detector_table(
                detector_states, dataset=dataset, batch_id=batch_id, query_id=query_id, updated_at=now
            )
            if self._crash_next:
                self._crash_next = False
                raise RuntimeError(f"simulated crash before the report of batch {batch_id}")
            ds = self._datasets.setdefault(dataset, _Dataset())
            closed = {w.start for w in report.closed_windows}
            for r in records:
                key = (r.scope, r.window_start, r.state_key)
                if r.final or (r.scope == "window" and r.window_start in closed):
                    ds.latest.pop(key, None)
                else:
                    ds.latest[key] = r
            for key in [k for k in ds.latest if k[0] == "window" and k[1] in closed]:
                del ds.latest[key]
            for d in detector_states:
                old = ds.detectors.get(d.key)
                if old is not None and (old.detector, bytes(old.state)) == (d.detector, bytes(d.state)):
                    continue
                ds.detectors[d.key] = replace(d, state=bytes(d.state), batch_id=batch_id, query_id=query_id)
            for name, rows in built.items():
                if rows.num_rows:
                    self._rows[name].append(rows)
            self._reports[(query_id, batch_id)] = report
            self._last[query_id] = batch_id
            self.commits += 1
            return True

    # -- reads ------------------------------------------------------------------------
    def table(self, name: str) -> pa.Table:
        """Every committed row of table ``name`` (``schemas.SCHEMAS``), in commit order."""
        with self._lock:
            parts = self._rows[name]
            if not parts:
                return S.SCHEMAS[name].empty_table()
            return pa.concat_tables(parts)

    def load_states(self, dataset: str) -> dict[StateKey, State]:
        """Latest committed state per (scope, window_start, state_key): total scope and open windows."""
        with self._lock:
            ds = self._datasets.get(dataset)
            return {} if ds is None else {k: r.state for k, r in ds.latest.items()}

    def load_detector_states(self, dataset: str) -> dict[str, DetectorStateRecord]:
        with self._lock:
            ds = self._datasets.get(dataset)
            return {} if ds is None else dict(ds.detectors)

    def report(self, query_id: str, batch_id: int) -> BatchReport | None:
        with self._lock:
            return self._reports.get((query_id, int(batch_id)))

    def history(
        self,
        dataset: str,
        metric: str,
        *,
        instance: str | None = None,
        scope: str | None = None,
        start: datetime | None = None,
        end: datetime | None = None,
    ) -> pa.Table:
        """The metric series, exactly as ``DeltaStateStore.history`` gives it."""
        _, expr = queries.history_filter(
            dataset, metric, instance=instance, scope=scope, start=start, end=end
        )
        rows = self.table(S.METRICS).filter(expr)
        return queries.history_of(rows, queries.committed_watermark(self, rows))

    def merge_range(self, dataset: str, state_key_or_analyzer: Any, start: datetime, end: datetime) -> State:
        """The merged window state over ``[start, end)``, as ``DeltaStateStore.merge_range``."""
        return queries.state_of(
            self.merge_range_detail(dataset, state_key_or_analyzer, start, end), dataset, start, end
        )

    def merge_range_detail(
        self, dataset: str, state_key_or_analyzer: Any, start: datetime, end: datetime
    ) -> queries.RangeMerge:
        analyzer, state_key, start_utc, end_utc = queries.range_bounds(state_key_or_analyzer, start, end)
        if analyzer is not None:  # a quantile not stored itself: the KLL sketch of its column
            states = self.table(S.STATES)
            stored = stored_window_analyzers(states.filter(pc.equal(states.column("dataset"), dataset)))
            state_key = answering_key(analyzer, stored) or state_key
        _, expr = queries.range_filter(dataset, state_key, start_utc, end_utc)
        return queries.fold_range(self.table(S.STATES).filter(expr), analyzer, state_key, "memory:states")

    def recover(self, query_id: str) -> None:
        """Nothing to recover: a commit is all-or-nothing here."""

    def settle(self) -> None:
        """Nothing to wait for: every commit is written before it returns."""

    def maintain(self, retention_hours: float | None = None) -> None:
        """Nothing to compact or vacuum in memory."""
