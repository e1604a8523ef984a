"""Read-side queries over the state tables: metric history and time-range state merges.

Both run on the driver with pyarrow over the Delta tables (partition and file-statistics
pruning by dataset, date and key first), see only committed batches, and never touch the
raw data: ``merge_range`` answers e.g. the distinct count or the 0.99 quantile over any
range of windows by merging their stored states (``State.merge``) and computing the
analyzer's ``metric()`` from the result.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from functools import reduce
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as pads
from streamdq.state import schemas as S
from streamdq.state.sql import conj, lit
from streamdq.state.stored_analyzers import answering_key, stored_in_delta
from streamdq.state.tables import aware_utc, utc_date

from streamdq.analyzers.base import Analyzer
from streamdq.analyzers.metric import Metric
from streamdq.analyzers.register import analyzer_from_spec, state_from_bytes
from streamdq.analyzers.state import State, StateFormatError
from streamdq.analyzers.user_aggregation import combinable, metric_name
from streamdq.errors import InvalidArgument, InvalidType
from streamdq.report import SCOPES

if TYPE_CHECKING:
    from streamdq.state.delta_store import DeltaStateStore

HISTORY_COLUMNS = [
    "time",
    "scope",
    "window_start",
    "window_end",
    "entity",
    "instance",
    "name",
    "value",
    "value_json",
    "failure",
    "approximate",
    "error_bound",
    "batch_id",
    "query_id",
    "processing_time",
    "analyzer_key",
    "open",
]


def decode_state(row: dict[str, Any], where: str) -> State:
    """Decode a stored state row, naming the table, key, window and batch in the error."""
    try:
        return state_from_bytes(row["state"])
    except StateFormatError as exc:
        raise StateFormatError(
            f"{where}: state {row['state_key']!r} (scope {row['scope']}, window {row['window_start']}, "
            f"batch {row['batch_id']}): {exc}"
        ) from exc


def latest_per(rows: pa.Table, keys: list[str], order: list[str]) -> pa.Table:
    """One row per ``keys`` group: the last by ascending ``order``."""
    if rows.num_rows == 0:
        return rows
    rows = rows.sort_by([(c, "ascending") for c in order])
    indexed = rows.append_column("__i", pa.array(range(rows.num_rows), pa.int64()))
    picked = indexed.group_by(keys, use_threads=False).aggregate([("__i", "max")])
    return rows.take(pa.array(sorted(picked.column("__i_max").to_pylist()), pa.int64()))


def history_filter(
    dataset: str,
    metric: str,
    *,
    instance: str | None = None,
    scope: str | None = None,
    start: datetime | None = None,
    end: datetime | None = None,
) -> tuple[list[str], pads.Expression]:
    """The (file-pruning predicates, row filter) of a ``history`` query over the metrics table."""
    if scope is not None and scope not in SCOPES:
        raise InvalidArgument(f"unknown scope {scope!r}; expected one of {', '.join(SCOPES)}")
    start, end = aware_utc(start, "start"), aware_utc(end, "end")
    prune = [f"dataset = {lit(dataset)}", f"name = {lit(metric)}"]
    expr = (pads.field("dataset") == dataset) & (pads.field("name") == metric)
    if instance is not None:
        prune.append(f"instance = {lit(instance)}")
        expr &= pads.field("instance") == instance
    if scope is not None:
        prune.append(f"scope = {lit(scope)}")
        expr &= pads.field("scope") == scope
    if start is not None:
        prune.append(f"date >= {lit(utc_date(start))}")
        expr &= pads.field("time") >= pa.scalar(start, S.TS)
    if end is not None:
        prune.append(f"date <= {lit(utc_date(end))}")
        expr &= pads.field("time") < pa.scalar(end, S.TS)
    return prune, expr


def committed_watermark(store: Any, rows: pa.Table) -> datetime | None:
    """The newest event-time watermark of the last committed batch of each query in ``rows``
    (a table with ``query_id``), from its stored report; None when no report has one.

    A window is closed (final) once this watermark has reached its end; any store with
    ``last_committed_batch`` and ``report`` answers it."""
    watermark: datetime | None = None
    if rows.num_rows == 0:
        return None
    for query_id in pc.unique(rows.column("query_id")).to_pylist():
        last = store.last_committed_batch(query_id) if query_id is not None else None
        report = store.report(query_id, last) if last is not None else None
        if report is not None and report.watermark is not None:
            watermark = report.watermark if watermark is None else max(watermark, report.watermark)
    return watermark


def history_of(rows: pa.Table, watermark: datetime | None = None) -> pa.Table:
    """Shape committed, filtered metric rows as ``history`` returns them (latest value per window
    and analyzer, so a metric computed with another ``where`` filter or parameter is its own
    point). ``open`` is True for a window the ``watermark`` has not closed yet (its end is after
    it: the value is partial), False for a closed one (and for every window when no watermark
    is known), NULL for the batch and total scopes."""
    schema = S.SCHEMAS[S.METRICS].append(pa.field("open", pa.bool_()))
    if rows.num_rows == 0:
        return schema.empty_table().select(HISTORY_COLUMNS)
    is_window = pc.fill_null(pc.equal(rows.column("scope"), "window"), False)
    windows = latest_per(
        rows.filter(is_window),
        ["window_start", "entity", "instance", "name", "analyzer_key"],
        ["processing_time", "batch_id"],
    )
    if watermark is None:  # no event-time watermark stored: nothing is known to be filling
        open_ = pa.array([False] * windows.num_rows, pa.bool_())
    else:
        open_ = pc.fill_null(pc.greater(windows.column("window_end"), pa.scalar(watermark, S.TS)), True)
    others = rows.filter(pc.invert(is_window))
    out = pa.concat_tables(
        [
            others.append_column("open", pa.nulls(others.num_rows, pa.bool_())),
            windows.append_column("open", open_),
        ]
    ).select(HISTORY_COLUMNS)
    return out.sort_by([("time", "ascending"), ("batch_id", "ascending"), ("scope", "ascending")])


def history(
    store: DeltaStateStore,
    dataset: str,
    metric: str,
    *,
    instance: str | None = None,
    scope: str | None = None,
    start: datetime | None = None,
    end: datetime | None = None,
) -> pa.Table:
    """The series of metric ``metric`` (analyzer name, e.g. ``Completeness``), ordered by time.

    ``time`` is the window start for window-scope points and the processing time
    otherwise; the range is ``start <= time < end``. For the window scope only the
    latest value of each window and analyzer is returned (a window is updated by every
    batch with rows in it). Columns: ``HISTORY_COLUMNS``; distribution metrics have
    ``value`` NULL and the value in ``value_json``; ``open`` marks a window still filling
    (the last committed watermark is before its end: its value is partial). No matching
    rows give an empty table.
    """
    prune, expr = history_filter(dataset, metric, instance=instance, scope=scope, start=start, end=end)
    dt = store.table(S.METRICS, dataset=dataset)
    if dt is None:
        return history_of(S.SCHEMAS[S.METRICS].empty_table())
    rows = dt.to_pyarrow_dataset(file_pruning_predicate=conj(*prune)).to_table(filter=expr)
    rows = store.committed_filter(rows)
    return history_of(rows, committed_watermark(store, rows))


@dataclass(frozen=True)
class RangeMerge:
    """The merged state of the windows in a range, the analyzer (if known) and how many windows."""

    state: State | None
    analyzer: Analyzer | None
    windows: int
    state_key: str

    def metric(self) -> Metric | None:
        if self.analyzer is None or self.state is None:
            return None
        return self.analyzer.metric(self.state)


def resolve_analyzer(key_or_analyzer: Any) -> tuple[Analyzer | None, str]:
    """An ``Analyzer``, its spec (dict or JSON text) or a stored ``state_key`` -> (analyzer, state_key)."""
    if isinstance(key_or_analyzer, Analyzer):
        return key_or_analyzer, key_or_analyzer.state_key()
    if isinstance(key_or_analyzer, dict):
        analyzer = analyzer_from_spec(key_or_analyzer)
        return analyzer, analyzer.state_key()
    if isinstance(key_or_analyzer, str):
        text = key_or_analyzer.strip()
        if text.startswith("{"):
            try:
                spec = json.loads(text)
            except json.JSONDecodeError as exc:
                raise InvalidArgument(f"analyzer spec is not valid JSON: {exc}: {text}") from exc
            analyzer = analyzer_from_spec(spec)
            return analyzer, analyzer.state_key()
        return None, text
    raise InvalidType(
        f"expected an Analyzer, a spec dict/JSON or a state key, got {type(key_or_analyzer).__name__}"
    )


def range_filter(dataset: str, state_key: str, start: datetime, end: datetime) -> tuple[str, pads.Expression]:
    """The (file-pruning predicate, row filter) of the window states a ``merge_range`` folds."""
    prune = conj(
        f"dataset = {lit(dataset)}",
        "scope = 'window'",
        f"state_key = {lit(state_key)}",
        f"date >= {lit(utc_date(start))}",
        f"date <= {lit(utc_date(end))}",
    )
    expr = (
        (pads.field("dataset") == dataset)
        & (pads.field("scope") == "window")
        & (pads.field("state_key") == state_key)
        & (pads.field("window_start") >= pa.scalar(start, S.TS))
        & (pads.field("window_end") <= pa.scalar(end, S.TS))
    )
    return prune, expr


def range_bounds(
    key_or_analyzer: Any, start: datetime, end: datetime
) -> tuple[Analyzer | None, str, datetime, datetime]:
    """Validate a ``merge_range`` request: (analyzer or None, state key, start UTC, end UTC)."""
    analyzer, state_key = resolve_analyzer(key_or_analyzer)
    start_utc, end_utc = aware_utc(start, "start"), aware_utc(end, "end")
    assert start_utc is not None and end_utc is not None
    if end_utc <= start_utc:
        raise InvalidArgument(f"empty range: end {end_utc.isoformat()} <= start {start_utc.isoformat()}")
    return analyzer, state_key, start_utc, end_utc


def require_combinable(analyzer: Analyzer) -> None:
    """``ValueError`` when ``analyzer``'s window states must not be merged over a range (a user
    aggregation declared ``combinable = False``): its values are served per window instead."""
    if not combinable(analyzer):
        name = metric_name(analyzer)
        raise InvalidArgument(
            f"{name}({analyzer.instance}) is not combinable: its window states are not merged over a "
            f"time range; read its per-window values with `streamdq query history --metric {name} "
            "--scope window` (or the service's timeseries endpoint)"
        )


def fold_range(rows: pa.Table, analyzer: Analyzer | None, state_key: str, where: str) -> RangeMerge:
    """Fold the latest committed state row of each window in ``rows`` (already filtered)."""
    rows = latest_per(rows, ["window_start"], ["committed_at", "batch_id"])
    if analyzer is None and rows.num_rows:  # before decoding: resolving it registers its state type
        analyzer = analyzer_from_spec(json.loads(rows.column("analyzer")[0].as_py()))
    if analyzer is not None:
        require_combinable(analyzer)
    states = [decode_state(r, where) for r in rows.to_pylist()]
    if analyzer is not None:
        merged: State | None = reduce(lambda a, b: a.merge(b), states, analyzer.empty_state())
    else:
        merged = None
    return RangeMerge(merged, analyzer, len(states), state_key)


def merge_range_detail(
    store: DeltaStateStore, dataset: str, key_or_analyzer: Any, start: datetime, end: datetime
) -> RangeMerge:
    """Merge the latest committed state of every window with ``start <= window_start`` and
    ``window_end <= end``. When only a state key is given, the analyzer is rebuilt from the
    stored spec. No window in range gives the analyzer's empty state (or None without one).
    """
    analyzer, state_key, start_utc, end_utc = range_bounds(key_or_analyzer, start, end)
    if analyzer is not None:
        require_combinable(analyzer)
    dt = store.table(S.STATES)
    rows = S.SCHEMAS[S.STATES].empty_table()
    if dt is not None:
        if analyzer is not None:  # a quantile not stored itself: the KLL sketch of its column
            state_key = answering_key(analyzer, stored_in_delta(store, dataset)) or state_key
        prune, expr = range_filter(dataset, state_key, start_utc, end_utc)
        rows = store.committed_filter(
            dt.to_pyarrow_dataset(file_pruning_predicate=prune).to_table(filter=expr)
        )
    return fold_range(rows, analyzer, state_key, store.path(S.STATES))


def merge_range(
    store: DeltaStateStore, dataset: str, key_or_analyzer: Any, start: datetime, end: datetime
) -> State:
    """The merged window state over ``[start, end)``; ``LookupError`` if unknown and empty."""
    return state_of(merge_range_detail(store, dataset, key_or_analyzer, start, end), dataset, start, end)


def state_of(result: RangeMerge, dataset: str, start: datetime, end: datetime) -> State:
    """The merged state of a ``RangeMerge``; ``LookupError`` when neither states nor an analyzer exist."""
    if result.state is None:
        raise LookupError(
            f"dataset {dataset!r}: no committed window states for key {result.state_key!r} in "
            f"[{start.isoformat()}, {end.isoformat()}) and no analyzer spec to build an empty state"
        )
    return result.state
