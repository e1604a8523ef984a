"""``DeltaStateStore``: the state store on Delta tables written with delta-rs (driver only).

Layout: one root (local directory or object-store URI) holding the tables described in
``streamdq.state.schemas``. No JVM, no Spark writer: the driver appends small Arrow
tables with ``deltalake.write_deltalake``, replaces a dataset's partition of
``states_latest`` (predicate overwrite) and upserts ``detectors`` with ``DeltaTable.merge``.

Exactly once (DESIGN.md section 5)
    ``commit(query_id, batch_id, ...)`` writes the tables in ``schemas.COMMIT_ORDER``.
    Every write carries a Delta application transaction ``(app_id(query_id), batch_id)``
    and is skipped when that table already holds a transaction version >= batch_id, so a
    crash between two tables' writes is repaired by replaying the batch. Each check is
    made on the same table snapshot the write commits against; a concurrent commit of the
    same transaction makes delta-rs fail with ``CommitFailedError`` and the write is
    retried from a fresh snapshot (where the check then skips it).

    The report is written at the same time as the data tables (``parallel_writes``, when
    they are all ``WITH_REPORT`` tables: the states log, the ``states_latest`` snapshot,
    the quarantine, the detectors): a typical batch's commit is then one delta-rs commit
    long on the batch's path, not two (bench/README.md, commit). The report's commit
    names each table written beside it with the application transaction
    ``(with_app_id(query_id, table), batch_id)``, and a batch is *committed* when its
    report row exists and every table it names holds the batch too
    (``last_committed_batch``, ``_completed``). A crash between the two leaves a report
    whose batch is not committed: every read stops at the batch before it (``report``
    returns None for it), and the batch's replay, which the Spark checkpoint makes after a
    crash inside ``foreachBatch``, writes the missing tables (the report's own write is
    skipped) and returns True. Otherwise (``parallel_writes=False``, or rows of other
    callers in ``metrics``/``results``) the report is written after the data tables.

    Derived rows after the report: the ``metrics`` and ``results`` rows of a batch are, for
    the streaming handler, exactly ``metric_records(report) + measure_records(report)`` and
    ``result_records(report)``. When a commit's rows are those (checked), they are written
    AFTER the report (and the tables beside it), in the background: a typical batch's commit
    then writes the states log and the report, side by side, instead of four tables in two
    steps (bench/README.md, commit). They are also written for many batches at once: the
    store keeps them (``derived_buffer.DerivedBuffer``) until the oldest has waited
    ``derived_delay`` seconds (default 2; 0: every batch), then appends every kept batch's rows
    in one commit per table, whose application-transaction version is the newest batch among
    them (bench/README.md, streaming: two delta-rs commits per batch beside the next batch's
    compute cost a small batch's trigger ~10% on 2 cores). An idle stream's kept rows are
    written by a timer after the same delay, and a process that ends without ``settle`` by an
    exit hook. The report's commit then also carries the
    application transactions ``(derived_app_id(query_id), batch_id)`` and
    ``(unwritten_app_id(query_id), oldest batch id whose rows were kept or in flight)``.
    Every read of the ``metrics`` or ``results`` table (``history``, the range reads, and the
    maintenance that rewrites them) first writes the kept rows and waits for them (a failed
    write is retried there, in order, in the caller's thread, and raises ``StateStoreError``
    if it fails again), and has every other instance on the same root in this process do the
    same, so a reader in the stream's process always sees them. A read that names its dataset
    writes only the rows of the queries keeping rows of that dataset: a check reading another
    dataset's history every batch leaves the stream's own rows kept. Reads of the tables
    ``commit`` writes in full wait for nothing, and ``commit`` itself only waits for the
    writes already started. After a crash the rows of the batches from the unwritten
    transaction's version up to the last committed batch may be missing: the query's next
    commit (any store instance; a restarted driver's first) and ``recover`` write them from
    the stored reports before anything else, each table skipping the batches its own
    transaction version says it holds. Until then, and for up to ``derived_delay`` seconds in
    a running stream, a reader in another process sees those batches' reports without their
    metric and result rows. Other callers' rows (not derived from the report) are written
    before the report, as every other table, after the kept rows of the same query.

    The store instance that committed a query's last batch in this process trusts its cached
    table snapshots for that query's next commit: each write moves its snapshot to the version
    it committed, so no table is refreshed (no ``_delta_log`` listing) before or after a write.
    It refreshes them all when another store instance committed the query since (the writer
    lock of (root, query) records the last committer), after a commit that raised (a write may
    have committed and its snapshot not), and after maintenance. Other queries' commits to the
    same tables need no refresh: an append rebases over them, and a conflicting one
    (compaction, an overwrite of the same partition) fails and is retried fresh.

Consistent reads
    Readers see committed batches only. ``states_latest`` and ``detectors`` are
    snapshot tables (rewritten per batch); when the newest write of a dataset to them
    belongs to a batch that is not committed (a crash inside ``commit``), reads use the
    table version just before that write (Delta time travel), so the replayed batch is
    recomputed from the states it originally started from. The append-only tables
    (``states``, ``metrics``, ``results``) are filtered to committed batches.

Windows
    A window is *final* once the watermark has passed it: the runner either sends its
    last ``StateRecord`` with ``final=True`` or lists it in ``report.closed_windows``.
    Final windows leave ``states_latest`` (``load_states`` stops returning them); their
    states stay in the ``states`` log, which ``merge_range`` reads.

Maintenance
    Every ``checkpoint_every`` versions of a table a Delta checkpoint is written; every
    ``compact_every`` committed batches all tables are compacted (and vacuumed when
    ``retention_hours`` is set). ``compact()``, ``checkpoint()`` and ``vacuum()`` can
    also be called directly.

Log retention
    Every table carries ``delta.logRetentionDuration`` = ``log_retention_hours`` (default 1
    hour, set at creation and on first write to an existing table), so each checkpoint drops
    the JSON commits older than that. Delta's own default keeps 30 days of commits: a 5-s
    trigger leaves tens of thousands of files in ``_delta_log``, and delta-rs lists that
    folder on every snapshot update and commit (a local or listing-by-prefix store returns
    all of it), so the commit time grew with the number of batches ever committed
    (bench/README.md, state). Time travel further back than the retention is lost; the store
    itself only ever reads the last ``history_scan`` versions back.
"""

from __future__ import annotations

import atexit
import logging
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any, ClassVar

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as pads
from deltalake import DeltaTable, write_deltalake
from deltalake.exceptions import CommitFailedError, TableNotFoundError
from deltalake.transaction import CommitProperties, PostCommitHookProperties, Transaction
from streamdq.state import maintenance, queries
from streamdq.state import schemas as S
from streamdq.state import tables as T
from streamdq.state.derived_buffer import DERIVED_TABLES, DerivedBuffer, PendingBatch, table_rows
from streamdq.state.queries import decode_state
from streamdq.state.records import (
    DetectorStateRecord,
    MetricRecord,
    ResultRecord,
    StateRecord,
    dedupe_keys,
    measure_records,
    metric_records,
    result_records,
)
from streamdq.state.sql import lit

from streamdq.analyzers.state import State
from streamdq.errors import InvalidArgument, StreamdqError
from streamdq.report import BatchReport

log = logging.getLogger(__name__)

META_QUERY = "streamdq.query_id"
META_BATCH = "streamdq.batch_id"
META_DATASET = "streamdq.dataset"
LOG_RETENTION = "delta.logRetentionDuration"
STATS_COLUMNS = "delta.dataSkippingStatsColumns"


def app_id(query_id: str) -> str:
    """The Delta application-transaction id of a streaming query."""
    return f"streamdq:{query_id}"


def derived_app_id(query_id: str) -> str:
    """The application transaction a report's commit carries when its batch's ``metrics`` and
    ``results`` rows are written after it (version = the batch id)."""
    return f"streamdq:{query_id}:derived"


def unwritten_app_id(query_id: str) -> str:
    """The application transaction a report's commit carries beside the derived one: its
    version is the oldest batch id of the query whose ``metrics`` and ``results`` rows may not be
    written yet (every batch before it has them; a repair after a crash starts there)."""
    return f"streamdq:{query_id}:unwritten"


def with_app_id(query_id: str, name: str) -> str:
    """The application transaction a report's commit carries (version = the batch id) when
    data table ``name`` was written at the same time as the report: the batch is committed
    only once ``name`` holds the batch too (module docstring, Exactly once)."""
    return f"streamdq:{query_id}:with:{name}"


WITH_REPORT = (S.STATES, S.STATES_LATEST, S.QUARANTINE, S.DETECTORS)
"""The data tables a commit may write at the same time as its report."""


def derived_rows(report: BatchReport) -> tuple[list[MetricRecord], list[ResultRecord]]:
    """The metric and result records a report determines (what the streaming handler commits)."""
    return metric_records(report) + measure_records(report), result_records(report)


_WRITER_LOCKS: dict[tuple[str, str], threading.Lock] = {}
_WRITER_LOCKS_GUARD = threading.Lock()


_LAST_COMMITTER: dict[tuple[str, str], object] = {}
"""Per (store root, application id): the token of the store instance whose ``commit`` held the
writer lock last (read and set under that lock)."""

_IN_FLIGHT: dict[str, set[Future[bool]]] = {}
_IN_FLIGHT_GUARD = threading.Lock()
"""Per store root: the background writes of every store instance in this process, so that any
instance on the root (a reader opened beside the stream's writer) waits for them too."""


_STORES: dict[str, weakref.WeakSet[DeltaStateStore]] = {}
"""Per store root: the store instances of this process (any may keep report-derived rows), so
that a reader on the root has them written first (``settle``); read and changed under
``_IN_FLIGHT_GUARD``."""


def _stores(root: str | None = None) -> list[DeltaStateStore]:
    """The live store instances on ``root`` (every root's when None)."""
    with _IN_FLIGHT_GUARD:
        groups = _STORES.values() if root is None else [_STORES.get(root, weakref.WeakSet())]
        return [store for group in groups for store in group]


def _write_all_at_exit() -> None:
    """At interpreter exit, write what every store instance still buffers, in this thread (the
    writer threads take no new work by then): a process that ends without ``settle`` (a
    notebook, a script around ``BatchHandler``) loses no metric or result row."""
    for store in _stores():
        try:
            store._write_derived(store._buffer.take(), background=False, threads=False)
        except Exception:  # at exit there is no one to raise to; the next commit repairs
            log.exception("state store %s: writing the buffered rows at exit failed", store.root)


atexit.register(_write_all_at_exit)


def _track(root: str, future: Future[bool]) -> None:
    with _IN_FLIGHT_GUARD:
        _IN_FLIGHT.setdefault(root, set()).add(future)

    def done(f: Future[bool]) -> None:
        with _IN_FLIGHT_GUARD:
            _IN_FLIGHT.get(root, set()).discard(f)

    future.add_done_callback(done)


def _after(before: list[Future[bool]], write: Callable[[], bool]) -> bool:
    """Run ``write`` once the writes ``before`` have finished; when one of them failed, fail
    without writing (``settle`` retries the failed ones first, in order: a newer batch's rows
    must not reach a table before an older batch's, or the older ones would be skipped)."""
    wait(before)
    if any(f.exception() is not None for f in before):
        raise StateStoreError("an earlier write of derived rows failed; this one waits for its retry")
    return write()


def _in_flight(root: str) -> list[Future[bool]]:
    with _IN_FLIGHT_GUARD:
        return list(_IN_FLIGHT.get(root, ()))


def _writer_lock(table_path: str, app: str) -> threading.Lock:
    """One lock per (table or store root, application id) in this process.

    Two writers of the same batch in one process are serialized here: the second sees the
    first's transaction version and skips. (delta-rs 1.x also refuses a commit carrying an
    application id that a commit after its snapshot carries, ``CommitFailedError``; the store
    then retries from a fresh snapshot, where the check skips the write.) Across processes,
    Spark's checkpoint keeps one active run per query.
    """
    with _WRITER_LOCKS_GUARD:
        return _WRITER_LOCKS.setdefault((table_path, app), threading.Lock())


@dataclass(frozen=True)
class _Flush:
    """A background write of buffered batches' derived rows (``first``: the oldest batch id)."""

    query_id: str
    first: int
    futures: list[Future[bool]]
    writes: list[Callable[[], bool]]


class StateStoreError(StreamdqError, RuntimeError):
    """A state-store operation failed for a reason other than bad input."""


class DeltaStateStore:
    """The Delta-table state store. Not thread-safe: one instance per thread/process.

    ``root``: a local path or URI (``s3://bucket/prefix``); ``storage_options`` are passed to
    delta-rs unchanged (credentials, endpoints). ``max_retries`` bounds the retries of one
    table write after concurrent-commit conflicts. ``history_scan`` is how many recent
    commits of a snapshot table are inspected for an uncommitted tail. ``defer_derived``
    (default on) writes a batch's report-derived ``metrics`` and ``results`` rows after its
    report, in the background, for all the batches of ``derived_delay`` seconds at once
    (module docstring, Exactly once).
    """

    PERSISTENT: ClassVar[bool] = True
    """A new store on the same root sees every committed batch (a restarted driver)."""

    @classmethod
    def _unit_test_params(cls, root: Path) -> Iterator[dict[str, Any]]:
        """Stores for the conformance laws (streamdq.testing.store_checks), on ``root``: the
        defaults, and one that snapshots, checkpoints and compacts at every commit and writes
        its tables one after the other."""
        yield {"root": str(root / "default")}
        yield {
            "root": str(root / "eager"),
            "snapshot_every": 1,
            "checkpoint_every": 1,
            "compact_every": 1,
            "parallel_writes": False,
        }

    def __init__(
        self,
        root: str,
        *,
        storage_options: dict[str, str] | None = None,
        checkpoint_every: int = 20,
        compact_every: int = 100,
        retention_hours: float | None = None,
        max_retries: int = 20,
        history_scan: int = 50,
        parallel_writes: bool = True,
        log_retention_hours: float | None = 1.0,
        snapshot_every: int = 20,
        defer_derived: bool = True,
        derived_delay: float = 2.0,
    ) -> None:
        if checkpoint_every < 1 or compact_every < 1 or snapshot_every < 1:
            raise InvalidArgument("checkpoint_every, compact_every and snapshot_every must be >= 1")
        if derived_delay < 0:
            raise InvalidArgument(f"derived_delay must be >= 0 seconds, got {derived_delay}")
        if log_retention_hours is not None and log_retention_hours < 0:
            raise InvalidArgument(f"log_retention_hours must be >= 0 or None, got {log_retention_hours}")
        self.root = str(root).rstrip("/")
        self.storage_options = dict(storage_options) if storage_options else None
        self.checkpoint_every = checkpoint_every
        self.compact_every = compact_every
        self.retention_hours = retention_hours
        self.max_retries = max_retries
        self.history_scan = history_scan
        self.parallel_writes = parallel_writes
        self.log_retention_hours = log_retention_hours
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()
        self._tables: dict[str, DeltaTable] = {}
        self._configured: set[str] = set()
        self.snapshot_every = snapshot_every
        self._views: dict[str, _View] = {}
        self.defer_derived = defer_derived
        # committed batches' report-derived rows, written together every ``derived_delay`` s
        self._buffer = DerivedBuffer(delay=derived_delay, on_due=self._flush_due)
        self._flush_lock = threading.Lock()  # starting a flush (the committing and the timer thread)
        # the background writes of derived rows in flight
        self._deferred: list[_Flush] = []
        self._token = object()
        # per query: the tables whose cached snapshot has every commit of the query, with the
        # query's application-transaction version in each (what transaction_version would say)
        self._known: dict[str, dict[str, int | None]] = {}
        with _IN_FLIGHT_GUARD:
            _STORES.setdefault(self.root, weakref.WeakSet()).add(self)

    def table_properties(self, name: str | None = None) -> dict[str, str]:
        """The Delta table properties this store sets on table ``name`` (the log retention on
        every table; the columns it keeps file statistics for, ``schemas.STATS_COLUMNS``)."""
        out: dict[str, str] = {}
        if self.log_retention_hours is not None:
            out[LOG_RETENTION] = f"interval {round(self.log_retention_hours * 3600)} seconds"
        if name in S.STATS_COLUMNS:
            out[STATS_COLUMNS] = ",".join(S.STATS_COLUMNS[name])
        return out

    # -- tables -----------------------------------------------------------------------
    def path(self, name: str) -> str:
        return f"{self.root}/{name}"

    def table(
        self, name: str, *, create: bool = False, refresh: bool = True, dataset: str | None = None
    ) -> DeltaTable | None:
        """The (cached) DeltaTable ``name``, refreshed to its newest version; None if absent.
        For the tables whose rows are kept after the report (``DERIVED_TABLES``), the kept rows
        are written first (``settle``; only those of the queries keeping rows of ``dataset``
        when a reader names the one dataset it reads), so reads see them; every other table is
        written in full by ``commit``, and its read waits for nothing."""
        if name in DERIVED_TABLES:
            self.settle(dataset)
        return self._table(name, create=create, refresh=refresh)

    def _table(self, name: str, *, create: bool = False, refresh: bool = True) -> DeltaTable | None:
        """``table`` without waiting for background writes (what the writes themselves use)."""
        dt = self._tables.get(name)
        if dt is None:
            try:
                dt = DeltaTable(self.path(name), storage_options=self.storage_options)
            except TableNotFoundError:
                if not create:
                    return None
                DeltaTable.create(
                    self.path(name),
                    schema=S.SCHEMAS[name],
                    partition_by=S.PARTITIONS[name],
                    mode="ignore",
                    storage_options=self.storage_options,
                    configuration=self.table_properties(name) or None,
                )
                dt = DeltaTable(self.path(name), storage_options=self.storage_options)
            self._tables[name] = dt
        elif refresh:
            dt.update_incremental()
        if create and name not in self._configured:
            self._configure(name, dt)
            self._configured.add(name)
        return dt

    def _configure(self, name: str, dt: DeltaTable) -> None:
        """Bring an existing table's properties in line with ``table_properties(name)`` (one
        commit; files written before keep their statistics)."""
        wanted = self.table_properties(name)
        current = dt.metadata().configuration
        if any(current.get(k) != v for k, v in wanted.items()):
            dt.alter.set_table_properties(wanted, raise_if_not_exists=False)
            dt.update_incremental()

    def _reopen(self, name: str) -> None:
        """Open ``name`` again from its newest checkpoint (its snapshot stays current).

        A ``DeltaTable`` kept open replays, on every write, each commit it has seen since it was
        opened (delta-rs 1.6.6: a lone table's write CPU grew by ~13 ms per 100 commits,
        checkpoints and ``update_incremental`` or not, until a compaction; bench/README.md,
        commit); opened again after a checkpoint it replays from there."""
        self._tables[name] = DeltaTable(self.path(name), storage_options=self.storage_options)

    def _fresh(self, name: str) -> DeltaTable:
        self._tables.pop(name, None)
        dt = self._table(name, create=True)
        assert dt is not None
        return dt

    def exists(self) -> bool:
        """True when at least the ``reports`` table exists under ``root``."""
        return self.table(S.REPORTS) is not None

    # -- exactly once -----------------------------------------------------------------
    def last_committed_batch(self, query_id: str) -> int | None:
        """The highest batch id of ``query_id`` whose commit completed: its report is stored,
        and so is every data table written at the same time as the report."""
        dt = self.table(S.REPORTS)
        if dt is None:
            return None
        return self._completed(dt, query_id)[0]

    def _completed(self, reports: DeltaTable, query_id: str) -> tuple[int | None, int | None]:
        """``(last committed batch, last stored report)`` of ``query_id``. They differ only
        when a crash cut the data writes made beside the newest report short (the replay of
        that batch completes it): the committed batch is then the query's report before it."""
        stored = reports.transaction_version(app_id(query_id))
        if stored is None:
            return None, None
        for name in WITH_REPORT:
            if reports.transaction_version(with_app_id(query_id, name)) != stored:
                continue
            dt = self._table(name)
            done = None if dt is None else dt.transaction_version(app_id(query_id))
            if done is None or done < stored:
                return self._report_before(reports, query_id, stored), stored
        return stored, stored

    def _report_before(self, reports: DeltaTable, query_id: str, batch_id: int) -> int | None:
        """The newest batch id below ``batch_id`` with a report of ``query_id`` (None: none)."""
        ids = (
            reports.to_pyarrow_dataset(file_pruning_predicate=f"query_id = {lit(query_id)}")
            .to_table(
                columns=["batch_id"],
                filter=(pads.field("query_id") == query_id) & (pads.field("batch_id") < batch_id),
            )
            .column("batch_id")
        )
        return None if len(ids) == 0 else int(pc.max(ids).as_py())

    def _committed(self, query_id: str, batch_id: int, cache: dict[str, int | None] | None = None) -> bool:
        if cache is not None:
            if query_id not in cache:
                cache[query_id] = self.last_committed_batch(query_id)
            last = cache[query_id]
        else:
            last = self.last_committed_batch(query_id)
        return last is not None and batch_id <= last

    def _write_once(
        self,
        name: str,
        query_id: str,
        batch_id: int,
        dataset: str,
        write: Callable[[DeltaTable, CommitProperties, PostCommitHookProperties], None],
        also: Sequence[str | tuple[str, int]] = (),
    ) -> bool:
        """Run ``write`` unless ``name`` already holds (query_id, batch_id). True if written.
        The commit also sets the application transactions ``also``: to ``batch_id``, or to the
        version given with one as ``(app, version)``."""
        app = app_id(query_id)
        props = CommitProperties(
            app_transactions=[
                Transaction(a, batch_id) if isinstance(a, str) else Transaction(*a) for a in (app, *also)
            ],
            custom_metadata={META_QUERY: query_id, META_BATCH: str(batch_id), META_DATASET: dataset},
        )
        hooks = PostCommitHookProperties(create_checkpoint=False)
        with _writer_lock(self.path(name), app):
            return self._write_locked(name, query_id, batch_id, app, props, hooks, write)

    def _write_locked(
        self,
        name: str,
        query_id: str,
        batch_id: int,
        app: str,
        props: CommitProperties,
        hooks: PostCommitHookProperties,
        write: Callable[[DeltaTable, CommitProperties, PostCommitHookProperties], None],
    ) -> bool:
        known = self._known.setdefault(query_id, {})
        trusted = name in known
        dt = self._table(name, create=True, refresh=not trusted)
        assert dt is not None
        for attempt in range(self.max_retries + 1):
            # delta-rs scans the snapshot's log for the application transaction (~0.5-5 ms)
            done = known[name] if trusted and attempt == 0 else dt.transaction_version(app)
            known[name] = done
            if done is not None and done >= batch_id:
                return False
            try:
                write(dt, props, hooks)
            except CommitFailedError as exc:
                if attempt == self.max_retries:
                    raise StateStoreError(
                        f"table {self.path(name)}: batch {batch_id} of query {query_id} still conflicts "
                        f"after {self.max_retries} retries: {exc}"
                    ) from exc
                log.info("table %s: concurrent commit (%s); retrying batch %s", name, exc, batch_id)
                time.sleep(min(0.01 * 2**attempt, 1.0))
                dt = self._fresh(name)
                continue
            # write_deltalake moved ``dt`` to the version it committed (rebased over any other
            # writer's commits it had to check): no refresh needed
            known[name] = batch_id
            if dt.version() % self.checkpoint_every == 0:
                maintenance.checkpoint(dt)
                self._reopen(name)
            return True
        raise AssertionError("unreachable")

    def _append(
        self,
        name: str,
        data: pa.Table,
        query_id: str,
        batch_id: int,
        dataset: str,
        also: Sequence[str | tuple[str, int]] = (),
    ) -> bool:
        def write(dt: DeltaTable, props: CommitProperties, hooks: PostCommitHookProperties) -> None:
            write_deltalake(
                dt, data, mode="append", commit_properties=props, post_commithook_properties=hooks
            )

        return self._write_once(name, query_id, batch_id, dataset, write, also)

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
        """Commit one batch exactly once; False when it was already fully committed.

        Tables are written in ``schemas.COMMIT_ORDER`` (empty inputs write nothing), the
        report last; ``metrics`` and ``results`` equal to the report's own records
        (``derived_rows``) are written after it, in the background (module docstring).
        Raises ``ValueError`` when the report does not belong to ``(dataset, query_id,
        batch_id)`` or the inputs are malformed.
        """
        if (report.dataset, report.query_id, report.batch_id) != (dataset, query_id, batch_id):
            raise InvalidArgument(
                f"report is for dataset={report.dataset!r} query={report.query_id!r} batch={report.batch_id}, "
                f"commit was called for dataset={dataset!r} query={query_id!r} batch={batch_id}"
            )
        if batch_id < 0:
            raise InvalidArgument(f"batch_id must be >= 0, got {batch_id}")
        # Two writers of one query in this process (a restarted handler racing its
        # predecessor) are serialized as a whole: otherwise each could win some tables and
        # both report True. Different queries still commit concurrently.
        app = app_id(query_id)
        self._settle_in_flight()  # the buffered rows of earlier batches may wait (derived_delay)
        with _writer_lock(self.root, app):
            if _LAST_COMMITTER.get((self.root, app)) is not self._token:
                self._known.pop(query_id, None)  # another store instance committed this query
            _LAST_COMMITTER[(self.root, app)] = self._token
            try:
                return self._commit_locked(
                    query_id, batch_id, dataset, states, metrics, results, report, quarantine, detector_states
                )
            except BaseException:
                self._known.pop(query_id, None)  # a write may have half-happened: refresh all
                raise

    def _commit_locked(
        self,
        query_id: str,
        batch_id: int,
        dataset: str,
        states: Sequence[StateRecord],
        metrics: Sequence[MetricRecord],
        results: Sequence[ResultRecord],
        report: BatchReport,
        quarantine: pa.Table | None,
        detector_states: Sequence[DetectorStateRecord],
    ) -> bool:
        known = self._known.setdefault(query_id, {})
        stored: int | None = None  # a stored report whose data writes a crash cut short
        if S.REPORTS in known:
            last = known[S.REPORTS]
        else:
            # this instance does not know the query's last commit: any store in the process may
            # keep rows of it (a restarted handler's predecessor), and the repair below must not
            # write them from the reports beside their owner
            self.settle()
            reports = self.table(S.REPORTS)
            last, newest = (None, None) if reports is None else self._completed(reports, query_id)
            if reports is not None and newest == last:
                known[S.REPORTS] = last
                if last is not None:
                    # a crash may have cut the last batch's derived rows short: write them first
                    self._repair_derived(reports, query_id, last)
            elif newest is not None and batch_id == newest:
                stored = newest  # this replay completes it (the report itself is skipped)
        if last is not None and batch_id <= last:
            return False
        now = datetime.now(UTC)
        state_rows = T.state_rows(
            dedupe_keys(states), dataset=dataset, batch_id=batch_id, query_id=query_id, committed_at=now
        )
        det_rows = T.detector_table(
            detector_states, dataset=dataset, batch_id=batch_id, query_id=query_id, updated_at=now
        )
        view = self._view(dataset, query_id, last)
        closed = {w.start for w in report.closed_windows}
        schema = S.SCHEMAS[S.STATES]
        log_rows, latest, due = view.advance(state_rows, schema, closed, self.snapshot_every)
        changed_detectors, detectors = view.detectors_after(det_rows)
        # Build every table first (bad input fails before anything is written), then write
        # the data tables concurrently (delta-rs releases the GIL; on object stores each
        # commit is a few round trips), the report beside them when they are all
        # ``WITH_REPORT`` tables, after them otherwise.
        writes: list[Callable[[], bool]] = []
        written: list[str] = []  # the table each of ``writes`` writes
        if self.defer_derived and (metrics or results):
            derived_metrics, derived_results = derived_rows(report)
            deferred = list(metrics) == derived_metrics and list(results) == derived_results
        else:
            deferred = False
        if (metrics or results) and not deferred:
            # rows written now must come after the buffered batches' (each table's transaction
            # version only grows)
            self._write_derived(self._buffer.take(query_id), background=False)
        if log_rows.num_rows:
            writes.append(partial(self._append, S.STATES, log_rows, query_id, batch_id, dataset))
            written.append(S.STATES)
        if due:
            snapshot = pa.Table.from_pylist(list(latest.values()), schema=schema)
            writes.append(partial(self._write_latest, snapshot, query_id, batch_id, dataset))
            written.append(S.STATES_LATEST)
        for name, records, build in (
            (S.METRICS, metrics, T.metric_table),
            (S.RESULTS, results, T.result_table),
        ):
            if records and not deferred:
                writes.append(
                    partial(self._append, name, build(records, report), query_id, batch_id, dataset)
                )
                written.append(name)
        if quarantine is not None and quarantine.num_rows:
            rows = T.quarantine_table(
                quarantine, dataset=dataset, batch_id=batch_id, query_id=query_id, ingested_at=now
            )
            writes.append(partial(self._append, S.QUARANTINE, rows, query_id, batch_id, dataset))
            written.append(S.QUARANTINE)
        if changed_detectors:
            rows = pa.Table.from_pylist(list(detectors.values()), schema=det_rows.schema)
            writes.append(partial(self._write_detectors, rows, query_id, batch_id, dataset))
            written.append(S.DETECTORS)
        # True only when this call committed the batch: a report already there means another
        # writer of the same query committed it meanwhile (every data write it had made was
        # then skipped or is the same batch's, under the same application transaction), or
        # that this replay completes the data writes a crash cut short beside it
        later = deferred and bool(metrics or results)  # the report's own rows, written after it
        also: list[str | tuple[str, int]] = [derived_app_id(query_id)] if later else []
        if later:
            also.append((unwritten_app_id(query_id), self._unwritten_from(query_id, batch_id)))
        report_rows = T.report_table(report, now)
        if self.parallel_writes and writes and set(written) <= set(WITH_REPORT):
            # the report goes at the same time as the data tables: its commit names each of
            # them, and the batch counts as committed once all of them hold it (_completed)
            also += [with_app_id(query_id, name) for name in written]
            writes.append(partial(self._append, S.REPORTS, report_rows, query_id, batch_id, dataset, also))
            wrote = self._run_all(writes)[-1]
        else:
            self._run_all(writes)
            wrote = self._append(S.REPORTS, report_rows, query_id, batch_id, dataset, also)
        if stored is not None:
            wrote = True
            reports = self._table(S.REPORTS)
            assert reports is not None
            self._repair_derived(reports, query_id, stored)
            later = False
        # the batch is committed: the view moves on (a failed write above left it as it was)
        view.commit(query_id, batch_id, latest, detectors, log_rows.num_rows, due)
        if wrote and later:
            due = self._buffer.add(query_id, PendingBatch(report, tuple(metrics), tuple(results)))
            if not self.parallel_writes or self._maintenance_due():
                # maintenance rewrites every table: nothing may run beside it
                self._write_derived(self._buffer.take(), background=False)
            elif due:
                self._flush_due()
        if wrote:
            self._maybe_maintain()
        return wrote

    # -- derived rows after the report ---------------------------------------------------
    def _flush_due(self, dataset: str | None = None) -> None:
        """Start writing every buffered batch's rows in the writer threads (the buffer is due,
        or its idle timer fired; only the queries keeping rows of ``dataset`` when given);
        ``settle`` waits for them."""
        self._write_derived(self._buffer.take(dataset=dataset), background=True)

    def _write_derived(
        self, taken: dict[str, list[PendingBatch]], *, background: bool, threads: bool = True
    ) -> None:
        """Write the buffered batches ``taken`` (per query): one append per table and query.
        A table's transaction version only grows, so an older batch's rows always land first:
        in the background, each write waits for the flushes still in flight (and fails without
        writing if one of them failed: ``settle`` retries them in order); in the caller's
        thread, the flushes in flight are finished (a failed one retried) before, and
        ``threads=False`` writes the tables one after the other without the writer threads
        (the exit hook: they take no new work by then)."""
        if background and not taken:
            return
        with self._flush_lock:
            if not background:
                self._finish_all()
            before = [f for flush in self._deferred for f in flush.futures]
            for query_id, batches in taken.items():
                writes: list[Callable[[], bool]] = [
                    partial(self._write_group, query_id, name, batches) for name in DERIVED_TABLES
                ]
                if not background:
                    if threads:
                        self._run_all(writes)
                    else:
                        for w in writes:
                            w()
                    continue
                pool = self._writer_pool()
                futures = [pool.submit(_after, before, w) for w in writes]
                for f in futures:
                    _track(self.root, f)
                self._deferred.append(_Flush(query_id, batches[0].batch_id, futures, writes))

    def _write_group(self, query_id: str, name: str, batches: list[PendingBatch]) -> bool:
        """Append the rows of ``batches`` (one query's, oldest first) to table ``name`` in one
        commit whose application-transaction version is the newest of them; rows of batches the
        table already holds (a repair after a crash got there first) are left out."""
        group = table_rows(name, batches)
        if group is None:
            return False
        app = app_id(query_id)

        def write(dt: DeltaTable, props: CommitProperties, hooks: PostCommitHookProperties) -> None:
            done = dt.transaction_version(app)
            rows = group.rows
            if done is not None:
                rows = rows.filter(pc.greater(rows.column("batch_id"), done))
            write_deltalake(
                dt, rows, mode="append", commit_properties=props, post_commithook_properties=hooks
            )

        return self._write_once(name, query_id, group.last_batch, batches[-1].report.dataset, write)

    def settle(self, dataset: str | None = None) -> None:
        """Write the buffered rows of committed batches now and wait for them (no-op when
        none); with ``dataset``, only those of the queries keeping rows of that dataset (a
        check reading another dataset's history leaves the stream's own rows kept). A write
        that failed is retried here, in the caller's thread (each write skips itself when its
        table already holds the batch); raises ``StateStoreError`` when it fails again (the
        query's next commit on any store, or this one's, then writes the rows from the stored
        reports). Then has the other store instances on the same root in this process write
        theirs too, and waits for the writes in flight on the root (a reader opened beside the
        stream's writer; their owners retry failed ones)."""
        self._flush_due(dataset)
        for other in _stores(self.root):
            if other is not self:
                other._flush_due(dataset)
        self._settle_in_flight()

    def _settle_in_flight(self) -> None:
        """Wait for the derived-row writes already started (this instance's first, retrying a
        failed one; then every other instance's on the root), without starting new ones."""
        with self._flush_lock:
            self._finish_all()
        others = _in_flight(self.root)
        if others:
            wait(others)

    def _finish_all(self) -> None:
        """Finish the flushes in flight, oldest first (under ``_flush_lock``: no new flush starts
        meanwhile); the first that fails twice raises, and the query's next commit writes its
        rows and those of the flushes after it from the stored reports."""
        pending, self._deferred = self._deferred, []
        for flush in pending:
            self._finish(flush.query_id, flush.futures, flush.writes)

    def _finish(self, query_id: str, futures: list[Future[bool]], writes: list[Callable[[], bool]]) -> None:
        wait(futures)
        errors = [f.exception() for f in futures if f.exception() is not None]
        if not errors:
            return
        self._known.pop(query_id, None)  # a write may have half-happened: refresh before the next
        log.warning("state store %s: a background write failed (%s); retrying it", self.root, errors[0])
        try:
            for w in writes:
                w()
        except Exception as exc:
            self._known.pop(query_id, None)
            raise StateStoreError(
                f"state store {self.root}: writing the metrics and results rows of query {query_id}'s "
                f"buffered batches failed twice ({errors[0]}; then {exc}); its next commit writes them "
                "again from the stored reports"
            ) from exc

    def _unwritten_from(self, query_id: str, batch_id: int) -> int:
        """The oldest batch id of ``query_id`` whose derived rows may be unwritten when batch
        ``batch_id`` (about to be buffered) commits: the oldest buffered or in flight, else
        ``batch_id`` itself."""
        with self._flush_lock:
            firsts = [f.first for f in self._deferred if f.query_id == query_id]
            firsts += [b.batch_id for b in self._buffer.peek(query_id)[:1]]
        return min([*firsts, batch_id])

    def recover(self, query_id: str) -> None:
        """Write the rows a crash cut short of ``query_id``'s last committed batches (their
        report-derived metrics and results); a no-op when none are missing. The query's next
        commit does the same first; a runner calls this when it starts, so that the rows are
        there even when no batch follows (an ``availableNow`` restart with nothing new)."""
        self.settle()
        app = app_id(query_id)
        with _writer_lock(self.root, app):
            reports = self.table(S.REPORTS)
            last = None if reports is None else self._completed(reports, query_id)[0]
            if reports is not None and last is not None:
                self._repair_derived(reports, query_id, last)

    def _repair_derived(self, reports: DeltaTable, query_id: str, last: int) -> None:
        """Write the report-derived rows of ``query_id``'s committed batches up to ``last`` that a
        crash left unwritten (buffered, or in flight). The report commits say which batches may
        lack them: the derived transaction is the newest batch whose rows went after its report,
        the unwritten one the oldest whose rows were not yet written then (absent in a store
        written before buffering: only the newest). Each table's own transaction version skips
        the batches it already holds."""
        derived = reports.transaction_version(derived_app_id(query_id))
        if derived is None:
            return
        upto = min(derived, last)
        first = reports.transaction_version(unwritten_app_id(query_id))
        first = upto if first is None else first
        app = app_id(query_id)
        missing: dict[str, int] = {}
        for name in DERIVED_TABLES:
            dt = self._table(name)
            done = None if dt is None else dt.transaction_version(app)
            if done is None or done < upto:
                missing[name] = max(first, -1 if done is None else done + 1)
        if not missing:
            return
        batches = [
            PendingBatch(report, tuple(metrics), tuple(results))
            for report in self._reports_between(reports, query_id, min(missing.values()), upto)
            for metrics, results in (derived_rows(report),)
        ]
        for name, start in missing.items():
            mine = [b for b in batches if b.batch_id >= start]
            if mine and self._write_group(query_id, name, mine):
                log.warning(
                    "state store %s: wrote the %s rows of query %s's batches %s..%s from their reports "
                    "(a crash came after their commits)",
                    self.root,
                    name,
                    query_id,
                    mine[0].batch_id,
                    mine[-1].batch_id,
                )

    def _reports_between(
        self, reports: DeltaTable, query_id: str, first: int, last: int
    ) -> list[BatchReport]:
        """The stored reports of ``query_id``'s batches ``first..last`` (committed ones), oldest first."""
        rows = reports.to_pyarrow_dataset(file_pruning_predicate=f"query_id = {lit(query_id)}").to_table(
            columns=["batch_id", "report"],
            filter=(pads.field("query_id") == query_id)
            & (pads.field("batch_id") >= first)
            & (pads.field("batch_id") <= last),
        )
        ordered = rows.sort_by("batch_id")
        return [BatchReport.from_json(text) for text in ordered.column("report").to_pylist()]

    def _maintenance_due(self) -> bool:
        dt = self._table(S.REPORTS, refresh=False)
        return dt is not None and dt.version() % self.compact_every == 0

    def _run_all(self, writes: list[Callable[[], bool]]) -> list[bool]:
        """Run the table writes (concurrently when ``parallel_writes``); re-raise the first error
        after all have finished, so no write is left running when ``commit`` returns."""
        if not self.parallel_writes or len(writes) < 2:
            return [w() for w in writes]
        pool = self._writer_pool()
        futures = [pool.submit(w) for w in writes]
        wait(futures)
        for f in futures:
            exc = f.exception()
            if exc is not None:
                raise exc
        return [f.result() for f in futures]

    def _writer_pool(self) -> ThreadPoolExecutor:
        with self._pool_lock:  # the committing thread and the kept rows' timer may both ask
            if self._pool is None:
                self._pool = ThreadPoolExecutor(
                    max_workers=len(S.COMMIT_ORDER), thread_name_prefix="streamdq-state"
                )
            return self._pool

    def close(self) -> None:
        """Wait for background writes and release the writer threads (the store stays usable;
        they are recreated on demand)."""
        self.settle()
        with self._pool_lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True)

    def _overwrite(self, name: str, rows: pa.Table, query_id: str, batch_id: int, dataset: str) -> bool:
        """Replace the dataset's partition of snapshot table ``name`` by ``rows`` (the whole view)."""

        def write(dt: DeltaTable, props: CommitProperties, hooks: PostCommitHookProperties) -> None:
            write_deltalake(
                dt,
                rows,
                mode="overwrite",
                predicate=f"dataset = {lit(dataset)}",
                commit_properties=props,
                post_commithook_properties=hooks,
            )

        return self._write_once(name, query_id, batch_id, dataset, write)

    def _write_latest(self, rows: pa.Table, query_id: str, batch_id: int, dataset: str) -> bool:
        return self._overwrite(S.STATES_LATEST, rows, query_id, batch_id, dataset)

    def _write_detectors(self, rows: pa.Table, query_id: str, batch_id: int, dataset: str) -> bool:
        return self._overwrite(S.DETECTORS, rows, query_id, batch_id, dataset)

    def _view(self, dataset: str, query_id: str, last: int | None) -> _View:
        """The dataset's latest states and detector rows as of ``query_id``'s last committed batch
        ``last``: kept in memory across commits, rebuilt from the tables when another writer (or a
        failed commit) left it behind."""
        view = self._views.get(dataset)
        if view is None or view.as_of != (query_id, last):
            latest = self.load_state_rows(dataset)
            detectors = self._snapshot(S.DETECTORS, dataset)
            view = _View.of(latest, detectors, (query_id, last))
            self._views[dataset] = view
        return view

    # -- consistent snapshot reads --------------------------------------------------
    def _snapshot(self, name: str, dataset: str) -> pa.Table:
        """Rows of ``dataset`` in snapshot table ``name`` as of the last committed batch."""
        dt = self.table(name)
        if dt is None:
            return S.SCHEMAS[name].empty_table()
        version = self._rewind_version(dt, dataset)
        if version is not None:
            log.warning(
                "table %s: ignoring uncommitted writes of %s after version %s", name, dataset, version
            )
            if version < 0:
                return S.SCHEMAS[name].empty_table()
            dt = DeltaTable(self.path(name), version=version, storage_options=self.storage_options)
        return dt.to_pyarrow_dataset(file_pruning_predicate=f"dataset = {lit(dataset)}").to_table(
            filter=pads.field("dataset") == dataset
        )

    def _rewind_version(self, dt: DeltaTable, dataset: str) -> int | None:
        """The version to read instead of the newest when the dataset's newest writes are uncommitted."""
        target: int | None = None
        cache: dict[str, int | None] = {}
        for entry in dt.history(self.history_scan):
            if entry.get(META_DATASET) != dataset:
                continue
            query_id, batch_id = entry[META_QUERY], int(entry[META_BATCH])
            if self._committed(query_id, batch_id, cache):
                break
            target = int(entry["version"]) - 1
        return target

    def load_state_rows(self, dataset: str) -> pa.Table:
        """The latest state rows (total + open windows) as of the last committed batch.

        ``states_latest`` is a snapshot written every ``snapshot_every`` state-changing batches;
        the committed ``states`` log rows after it (per query: batch ids above the snapshot's;
        other queries: committed at or after its newest row) are laid over it, the latest per
        key winning, and windows whose latest row is final are dropped.
        """
        base = self._snapshot(S.STATES_LATEST, dataset)
        dt = self.table(S.STATES)
        if dt is None:
            return _live(base)
        newest: dict[str, int] = {}
        for q, b in zip(
            base.column("query_id").to_pylist(), base.column("batch_id").to_pylist(), strict=True
        ):
            newest[q] = max(b, newest.get(q, -1))
        expr = pads.field("dataset") == dataset
        if base.num_rows:
            since = pc.max(base.column("committed_at"))
            after = pads.field("committed_at") >= since
            for q, b in newest.items():
                after |= (pads.field("query_id") == q) & (pads.field("batch_id") > b)
            expr &= after
        log_rows = self.committed_filter(
            dt.to_pyarrow_dataset(file_pruning_predicate=f"dataset = {lit(dataset)}").to_table(filter=expr)
        )
        return _live(_overlay(base, log_rows))

    def load_states(self, dataset: str) -> dict[tuple[str, datetime | None, str], State]:
        """Latest committed state per (scope, window_start, state_key): total scope and open windows."""
        out: dict[tuple[str, datetime | None, str], State] = {}
        for row in self.load_state_rows(dataset).to_pylist():
            if row["scope"] not in ("total", "window"):
                continue
            out[(row["scope"], row["window_start"], row["state_key"])] = decode_state(
                row, self.path(S.STATES_LATEST)
            )
        return out

    def load_detector_states(self, dataset: str) -> dict[str, DetectorStateRecord]:
        """The current detector state per key, as of the last committed batch."""
        out: dict[str, DetectorStateRecord] = {}
        for row in self._snapshot(S.DETECTORS, dataset).to_pylist():
            out[row["key"]] = DetectorStateRecord(
                key=row["key"],
                detector=row["detector"],
                state=row["state"],
                last_seq=row["last_seq"],
                batch_id=row["batch_id"],
                query_id=row["query_id"],
            )
        return out

    def report(self, query_id: str, batch_id: int) -> BatchReport | None:
        """The stored report of a committed batch (re-emitted verbatim on a replay)."""
        dt = self.table(S.REPORTS)
        if dt is None:
            return None
        rows = (
            dt.to_pyarrow_dataset(
                file_pruning_predicate=f"batch_id = {int(batch_id)} AND query_id = {lit(query_id)}"
            )
            .to_table(
                columns=["report"],
                filter=(pads.field("query_id") == query_id) & (pads.field("batch_id") == batch_id),
            )
            .column("report")
            .to_pylist()
        )
        if not rows:
            return None
        # only the query's newest report can lack the data written beside it (_completed)
        newest = dt.transaction_version(app_id(query_id))
        if newest is not None and batch_id >= newest and self._completed(dt, query_id)[0] != batch_id:
            return None  # stored, but a crash cut the data written beside it short: not committed
        return BatchReport.from_json(rows[0])

    def committed_filter(self, rows: pa.Table) -> pa.Table:
        """Keep the rows (with query_id, batch_id columns) of committed batches."""
        if rows.num_rows == 0:
            return rows
        mask = pa.array([False] * rows.num_rows)
        for query_id in pc.unique(rows.column("query_id")).to_pylist():
            last = self.last_committed_batch(query_id) if query_id is not None else None
            if last is None:
                continue
            mine = pc.and_(
                pc.equal(rows.column("query_id"), query_id), pc.less_equal(rows.column("batch_id"), last)
            )
            mask = pc.or_(mask, pc.fill_null(mine, False))
        return rows.filter(mask)

    # -- queries ----------------------------------------------------------------------
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
        return queries.history(self, dataset, metric, instance=instance, scope=scope, start=start, end=end)

    def merge_range(self, dataset: str, state_key_or_analyzer: Any, start: datetime, end: datetime) -> State:
        return queries.merge_range(self, dataset, state_key_or_analyzer, start, end)

    # -- maintenance ----------------------------------------------------------------
    def _maybe_maintain(self) -> None:
        if not self._maintenance_due():
            return
        try:
            self.maintain()
        except Exception:  # maintenance must never fail a commit that already succeeded
            log.exception("state store maintenance failed (the commit itself succeeded)")

    def maintain(self, retention_hours: float | None = None) -> None:
        """Compact and checkpoint every table; vacuum when a retention is given (or configured)."""
        self.settle()
        self._known.clear()  # compaction commits: the next commit refreshes every table first
        self.compact()
        retention = retention_hours if retention_hours is not None else self.retention_hours
        if retention is not None:
            self.vacuum(retention)

    def compact(self) -> dict[str, Any]:
        """Compact small files of every table, then checkpoint each. Returns metrics per table."""
        self.settle()
        self._known.clear()
        out = {name: maintenance.compact(dt) for name, dt in self._existing()}
        for name in out:
            self._reopen(name)  # from the checkpoint compact() wrote
        return out

    def checkpoint(self) -> None:
        for name, dt in self._existing():
            maintenance.checkpoint(dt)
            self._reopen(name)

    def vacuum(self, retention_hours: float) -> dict[str, list[str]]:
        """Delete files no longer referenced for more than ``retention_hours``; returns them per table."""
        return {name: maintenance.vacuum(dt, retention_hours) for name, dt in self._existing()}

    def _existing(self) -> list[tuple[str, DeltaTable]]:
        out = []
        for name in S.SCHEMAS:
            dt = self.table(name)
            if dt is not None:
                out.append((name, dt))
        return out


_KEY = ("scope", "window_start", "state_key")
_SAME_STATE = ("analyzer", "state_type", "state", "format_version")


def _key(row: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(row[c] for c in _KEY)


def _live(rows: pa.Table) -> pa.Table:
    return rows.filter(pc.invert(pc.fill_null(rows.column("final"), False)))


def _overlay(base: pa.Table, log_rows: pa.Table) -> pa.Table:
    """``base`` with each key replaced by its latest ``log_rows`` row (finals included).

    Log rows are ordered by batch id within a query, queries by their first commit time."""
    if log_rows.num_rows == 0:
        return base
    firsts: dict[str, datetime] = {}
    for q, t in zip(
        log_rows.column("query_id").to_pylist(), log_rows.column("committed_at").to_pylist(), strict=True
    ):
        firsts[q] = min(t, firsts.get(q, t))
    rank = {q: i for i, q in enumerate(sorted(firsts, key=lambda q: (firsts[q], q)))}
    ordered = log_rows.append_column(
        "__rank", pa.array([rank[q] for q in log_rows.column("query_id").to_pylist()], pa.int64())
    )
    latest = queries.latest_per(ordered, list(_KEY), ["__rank", "batch_id"]).drop_columns(["__rank"])
    replaced = set(map(_key, latest.select(list(_KEY)).to_pylist()))
    keep = [_key(r) not in replaced for r in base.select(list(_KEY)).to_pylist()]
    return pa.concat_tables([base.filter(pa.array(keep, pa.bool_())), latest.cast(base.schema)])


class _View:
    """A dataset's latest state rows and detector rows, as of one committed batch of a query.

    ``advance`` gives what a batch must write: the ``states`` log rows (states whose bytes
    changed, final rows, and a final copy of every state of a window the report closes),
    the next ``states_latest`` snapshot and whether it is due (every ``snapshot_every``
    state-changing batches, and on the first one after the view was built from the tables).
    """

    def __init__(
        self,
        latest: dict[tuple[Any, ...], dict[str, Any]],
        detectors: dict[str, dict[str, Any]],
        as_of: tuple[str, int | None],
    ) -> None:
        self.latest, self.detectors, self.as_of = latest, detectors, as_of
        self.pending: int | None = None  # state-changing batches since the snapshot (None: unknown)

    @classmethod
    def of(cls, latest: pa.Table, detectors: pa.Table, as_of: tuple[str, int | None]) -> _View:
        return cls(
            {_key(r): r for r in latest.to_pylist()}, {r["key"]: r for r in detectors.to_pylist()}, as_of
        )

    def advance(
        self, rows: list[dict[str, Any]], schema: pa.Schema, closed: set[datetime], snapshot_every: int
    ) -> tuple[pa.Table, dict[tuple[Any, ...], dict[str, Any]], bool]:
        latest = dict(self.latest)
        out: list[dict[str, Any]] = []
        for r in rows:
            key = _key(r)
            if r["scope"] == "window" and r["window_start"] in closed:
                r["final"] = True
            old = latest.get(key)
            if r["final"]:
                latest.pop(key, None)
                out.append(r)
            elif old is None or any(old[c] != r[c] for c in _SAME_STATE):
                latest[key] = r
                out.append(r)
        if closed:
            for key in [k for k in latest if k[0] == "window" and k[1] in closed]:
                r = dict(latest.pop(key))
                if rows:  # stamped with this batch
                    for c in ("batch_id", "query_id", "committed_at"):
                        r[c] = rows[0][c]
                r["final"] = True
                out.append(r)
        log_rows = pa.Table.from_pylist(out, schema=schema) if out else schema.empty_table()
        due = bool(out) and (self.pending is None or self.pending + 1 >= snapshot_every)
        return log_rows, latest, due

    def detectors_after(self, rows: pa.Table) -> tuple[bool, dict[str, dict[str, Any]]]:
        merged = dict(self.detectors)
        changed = False
        for r in rows.to_pylist():
            old = merged.get(r["key"])
            if old is None or (old["detector"], old["state"]) != (r["detector"], r["state"]):
                merged[r["key"]] = r
                changed = True
        return changed, merged

    def commit(
        self,
        query_id: str,
        batch_id: int,
        latest: dict[tuple[Any, ...], dict[str, Any]],
        detectors: dict[str, dict[str, Any]],
        logged: int,
        snapshot: bool,
    ) -> None:
        self.latest, self.detectors = latest, detectors  # new dicts: advance copied the old
        self.as_of = (query_id, batch_id)
        if snapshot:
            self.pending = 0
        elif logged and self.pending is not None:
            self.pending += 1
