"""``DerivedBuffer``: report-derived rows of committed batches, written together.

Where it runs: inside one ``DeltaStateStore`` on the driver. A streaming batch's ``metrics``
and ``results`` rows are exactly what its report holds (``delta_store.derived_rows``), so they
need not be written with the batch: the report is the durable copy, and after a crash the
store writes them again from it. Writing them for every batch costs two delta-rs commits per
batch (each ~7 ms of CPU however few rows) beside the next batch's compute on the driver's
cores; the buffer keeps them until ``delay`` seconds have passed since the oldest batch in it,
then the store writes every buffered batch's rows in ONE append per table (bench/README.md,
streaming). ``delay = 0`` makes every batch due at once (one write per batch, as before).

Contract:
- ``add`` keeps a committed batch's rows; it returns True when the buffer is due (the oldest
  batch has waited ``delay`` seconds): the caller then takes and writes it. A buffer that is
  never due again because no batch follows (an idle stream) is handed to ``on_due`` by a timer
  thread after ``delay`` seconds.
- ``take`` empties the buffer and returns the batches per query, oldest first. An empty buffer
  gives ``{}``.
- ``table_rows`` builds the rows of a query's batches for one table, with the newest batch id
  that has rows there (the append's application-transaction version).
- Rows of a batch are never merged with another's; batches stay whole. Thread-safe: ``add``
  runs in the committing thread, the timer in its own.

>>> from streamdq.state.derived_buffer import DerivedBuffer
>>> buffer = DerivedBuffer(delay=0.0, on_due=lambda: None)
>>> buffer.take()
{}
>>> buffer.pending()
0
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from streamdq.state import schemas as S
from streamdq.state import tables as T
from streamdq.state.records import MetricRecord, ResultRecord

from streamdq.errors import InvalidArgument
from streamdq.report import BatchReport


@dataclass(frozen=True)
class PendingBatch:
    """One committed batch whose report-derived rows are not written yet."""

    report: BatchReport
    metrics: tuple[MetricRecord, ...]
    results: tuple[ResultRecord, ...]

    @property
    def batch_id(self) -> int:
        return self.report.batch_id


@dataclass(frozen=True)
class DerivedWrite:
    """The rows of a group of batches for one table, and the newest batch id among them."""

    name: str
    last_batch: int
    rows: pa.Table


def table_rows(name: str, batches: Sequence[PendingBatch]) -> DerivedWrite | None:
    """The rows of ``batches`` (oldest first) for table ``name`` (``metrics`` or ``results``),
    with the newest batch id that has rows there; None when none has."""
    pick, build = _BUILDERS[name]
    parts = [(b.batch_id, build(pick(b), b.report)) for b in batches if pick(b)]
    parts = [(i, t) for i, t in parts if t.num_rows]
    if not parts:
        return None
    rows = pa.concat_tables([t for _, t in parts]) if len(parts) > 1 else parts[0][1]
    return DerivedWrite(name, parts[-1][0], rows)


_BUILDERS: dict[
    str, tuple[Callable[[PendingBatch], Sequence[Any]], Callable[[Any, BatchReport], pa.Table]]
] = {
    S.METRICS: (lambda b: b.metrics, T.metric_table),
    S.RESULTS: (lambda b: b.results, T.result_table),
}
DERIVED_TABLES = tuple(_BUILDERS)
"""The tables whose rows a report determines."""


class DerivedBuffer:
    """Committed batches' report-derived rows, per query, until they are due (module docstring)."""

    def __init__(self, *, delay: float, on_due: Callable[[], None]) -> None:
        if delay < 0:
            raise InvalidArgument(f"delay must be >= 0 seconds, got {delay}")
        self.delay = delay
        self._on_due = on_due
        self._lock = threading.Lock()
        self._batches: dict[str, list[PendingBatch]] = {}
        self._since: float | None = None  # monotonic time of the oldest buffered batch
        self._timer: threading.Timer | None = None

    def pending(self) -> int:
        """How many batches are buffered."""
        with self._lock:
            return sum(len(v) for v in self._batches.values())

    def add(self, query_id: str, batch: PendingBatch) -> bool:
        """Buffer ``batch`` of ``query_id``; True when the buffer is due now."""
        with self._lock:
            self._batches.setdefault(query_id, []).append(batch)
            now = time.monotonic()
            if self._since is None:
                self._since = now
            due = now - self._since >= self.delay
            if not due and self._timer is None:
                self._timer = threading.Timer(max(0.0, self._since + self.delay - now), self._fire)
                self._timer.daemon = True
                self._timer.name = "streamdq-derived-timer"
                self._timer.start()
            return due

    def peek(self, query_id: str) -> list[PendingBatch]:
        """``query_id``'s buffered batches, oldest first (the buffer keeps them)."""
        with self._lock:
            return list(self._batches.get(query_id, ()))

    def take(
        self, query_id: str | None = None, *, dataset: str | None = None
    ) -> dict[str, list[PendingBatch]]:
        """Empty the buffer and return what it held: only ``query_id``'s batches when given;
        with ``dataset``, the whole kept list of every query that keeps a batch of it (a
        query's batches leave together, oldest first, so its tables' versions stay in order)."""
        with self._lock:
            if query_id is None and dataset is None:
                taken, self._batches = self._batches, {}
            else:
                taken = {}
                for q in list(self._batches):
                    kept = self._batches[q]
                    if q == query_id or any(b.report.dataset == dataset for b in kept):
                        taken[q] = self._batches.pop(q)
            if not self._batches:
                self._since = None
                if self._timer is not None:
                    self._timer.cancel()
                    self._timer = None
            return taken

    def cancel(self) -> None:
        """Stop the idle timer (the buffer keeps its batches)."""
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None

    def _fire(self) -> None:
        with self._lock:
            self._timer = None
            if not self._batches:
                return
        self._on_due()
