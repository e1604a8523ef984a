"""AnalysisPlan: deduplicate analyzers and compute all their states in fused passes.

Contract:

* Runs on the driver; triggers ONE Spark job for all scan-shareable analyzers (a single
  ``agg``) and one grouped aggregation per distinct ``FrequencySpec``.
* Preconditions (missing column, wrong type, bad parameter) are checked against the
  schema before any job; a violated one becomes a failure for that analyzer only.
* If the fused aggregation cannot be analysed or fails at run time, the plan isolates
  the culprit by running the analyzers one by one, so one bad analyzer (e.g. an invalid
  ``where`` predicate) never stops the others.
* Empty input yields each analyzer's state of zero rows (their metrics decide whether
  that is 0.0 or a failure).
* The number of Spark jobs the run triggered is counted with a job group and returned.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from streamdq.analyzers.base import Analyzer, GroupingAnalyzer, ScanShareableAnalyzer
from streamdq.analyzers.frequency.grouped import state_from_grouped
from streamdq.analyzers.frequency.query import (
    collect_grouping,
    compute_frequency_state,
    grouped_counts,
    totals_aggregations,
)
from streamdq.analyzers.row_aggregate import RowAggregate
from streamdq.engine import arrow_path
from streamdq.engine.plan_result import PlanResult, SegmentedResult, SegmentRow
from streamdq.errors import InvalidArgument, InvalidType

DEFAULT_MAX_GROUPS = 100_000

log = logging.getLogger(__name__)


def _normalize(key: tuple[Any, ...]) -> tuple[Any, ...]:
    """A segment key as ``collect()`` renders it: Arrow gives tz-aware timestamps, Row naive local."""
    return tuple(
        v.astimezone().replace(tzinfo=None) if isinstance(v, datetime) and v.tzinfo else v for v in key
    )


def _segment_equals(segment: list[Column], key: tuple[Any, ...]) -> Column:
    cond = F.lit(True)
    for column, value in zip(segment, key, strict=True):
        cond = cond & (column.isNull() if value is None else column == F.lit(value))
    return cond


@contextmanager
def count_jobs(spark: SparkSession) -> Iterator[list[int]]:
    """Count the Spark jobs started inside the block (by this thread), through a job tag.

    A tag (``SparkContext.addJobTag``), not a job group: the caller's own job group and
    description stay on its jobs, and the block costs four py4j round trips (add, count,
    remove) instead of the group's save, set and restore (eleven). The tracker is Spark's own
    (``SparkStatusTracker.getJobIdsForTag``)."""
    sc = spark.sparkContext
    jsc = sc._jsc  # type: ignore[attr-defined]
    tag = f"streamdq-{uuid.uuid4().hex}"
    tracker = _status_tracker(sc)
    jsc.addJobTag(tag)
    out: list[int] = [0]
    try:
        yield out
    finally:
        try:
            out[0] = len(tracker.getJobIdsForTag(tag))
        finally:
            jsc.removeJobTag(tag)


_tracker: tuple[Any, Any] | None = None  # (SparkContext, its JVM SparkStatusTracker)


def _status_tracker(sc: Any) -> Any:
    """The JVM SparkStatusTracker of ``sc`` (kept: fetching it is a py4j round trip)."""
    global _tracker
    kept = _tracker
    if kept is None or kept[0] is not sc:
        kept = _tracker = (sc, sc._jsc.sc().statusTracker())
    return kept[1]


#: (gateway, schema JSON, analyzer) -> the analyzer's Spark aggregate columns
_aggregations: dict[tuple[Any, str, ScanShareableAnalyzer], list[Column]] = {}
_AGGREGATIONS_KEPT = 4096


def scan_aggregations(df: DataFrame, analyzers: Sequence[ScanShareableAnalyzer]) -> list[list[Column]]:
    """Each analyzer's ``aggregations(df.schema)``, built once per schema and kept.

    Building the columns is all py4j round trips: 70-90 ms for the 16 scan analyzers of
    bench/engine's standard suite, at every ``verify`` and every microbatch of the fused path.
    A column is an unresolved expression, not tied to a DataFrame, so the same objects serve
    every DataFrame of the schema (the Arrow path keeps its projection per schema likewise).
    Kept per py4j gateway (a new JVM gets new objects); at most ``_AGGREGATIONS_KEPT``
    entries (cleared when full: a drifting schema must not grow it forever). Only analyzers
    whose aggregates are their declared row aggregates (every built-in scan analyzer) are
    kept: those depend on the schema and the analyzer's own fields alone. One that builds
    its own ``aggregations`` (a user aggregation, read from a registry that can change) is
    asked every time.

    >>> from streamdq.analyzers import Mean
    >>> from streamdq.spark import get_spark
    >>> df = get_spark().createDataFrame([(1.0,)], "x double")
    >>> first, again = scan_aggregations(df, [Mean("x")]), scan_aggregations(df, [Mean("x")])
    >>> first[0][0] is again[0][0]
    True
    """
    from pyspark import SparkContext

    gateway = SparkContext._gateway  # type: ignore[attr-defined]
    schema = df.schema.json()
    out: list[list[Column]] = []
    for analyzer in analyzers:
        if type(analyzer).aggregations is not ScanShareableAnalyzer.aggregations:
            out.append(analyzer.aggregations(df.schema))
            continue
        key = (gateway, schema, analyzer)
        columns = _aggregations.get(key)
        if columns is None:
            columns = analyzer.aggregations(df.schema)
            if len(_aggregations) >= _AGGREGATIONS_KEPT:
                _aggregations.clear()
            _aggregations[key] = columns
        out.append(columns)
    return out


class AnalysisPlan:
    """The fused execution plan for a set of analyzers (deduplicated, order kept)."""

    def __init__(self, analyzers: Iterable[Analyzer], *, max_groups: int = DEFAULT_MAX_GROUPS) -> None:
        self.analyzers: list[Analyzer] = list(dict.fromkeys(analyzers))
        self.max_groups = max_groups
        self._programs: dict[Any, arrow_path.ArrowProgram] = {}
        self.scan = [a for a in self.analyzers if isinstance(a, ScanShareableAnalyzer)]
        self.grouping = [a for a in self.analyzers if isinstance(a, GroupingAnalyzer)]
        unknown = [a for a in self.analyzers if not isinstance(a, ScanShareableAnalyzer | GroupingAnalyzer)]
        if unknown:
            raise InvalidType(f"analyzers of unknown kind: {unknown}")

    def grouping_sets(self) -> dict[Any, list[GroupingAnalyzer]]:
        sets: dict[Any, list[GroupingAnalyzer]] = {}
        for a in self.grouping:
            sets.setdefault(a.frequency_spec(), []).append(a)
        return sets

    def _runnable(self, schema: Any, failures: dict[Analyzer, str]) -> list[Analyzer]:
        runnable: list[Analyzer] = []
        for a in self.analyzers:
            try:
                reason = a.preconditions(schema)
            except Exception as exc:  # a broken parameter must not stop the others
                reason = f"{type(exc).__name__}: {exc}"
            if reason is None:
                runnable.append(a)
            else:
                failures[a] = reason
        return runnable

    def run(self, df: DataFrame) -> PlanResult:
        result = PlanResult()
        runnable = self._runnable(df.schema, result.failures)
        scan = [a for a in runnable if isinstance(a, ScanShareableAnalyzer)]
        grouping = [a for a in runnable if isinstance(a, GroupingAnalyzer)]
        specs = list(dict.fromkeys(a.frequency_spec() for a in grouping))
        totals: dict[Any, tuple[int, int]] = {}
        with count_jobs(df.sparkSession) as jobs:
            if scan:
                # the totals of every bounded grouping ride along in the fused scan, so the
                # grouping queries need no scan of their own for them
                extra, bounded = self._totals_aggregations(df, specs)
                try:
                    rows = self._run_scan(df, scan, None, extra, result.failures)
                except Exception as exc:
                    if is_interruption(exc) or not extra:
                        raise
                    extra, bounded = [], []  # the totals failed at run time: each grouping computes its own
                    rows = self._run_scan(df, scan, None, extra, result.failures)
                if rows:
                    result.states.update(rows[0].states)
                    values = rows[0].extra
                    if len(values) == len(extra):
                        for i, spec in enumerate(bounded):
                            total, n = values[2 * i], values[2 * i + 1]
                            if total is not None and n is not None:
                                totals[spec] = (int(total), int(n))
                else:  # empty input under a segment-free agg never happens; keep the identity
                    result.states.update({a: a.empty_state() for a in scan if a not in result.failures})
            if grouping:
                self._run_grouping(df, grouping, result, totals)
        result.jobs = jobs[0]
        return result

    def _totals_aggregations(self, df: DataFrame, specs: list[Any]) -> tuple[list[Column], list[Any]]:
        """Aggregates (all rows, rows kept) of each spec that runs bounded, for the fused scan.

        A spec whose totals do not analyse (a bad ``where``; the columns exist, the
        preconditions said so) gets none: its own query then computes them, and fails
        alone."""
        if self.max_groups is None:
            return [], []
        extra: list[Column] = []
        bounded: list[Any] = []
        for spec in specs:
            try:
                exprs = totals_aggregations(df, spec)
                if spec.where is not None:
                    _ = df.agg(*exprs).schema  # analysis only, no job
            except Exception:
                continue
            extra.extend(exprs)
            bounded.append(spec)
        return extra, bounded

    def run_segmented(
        self,
        df: DataFrame,
        segment: list[Column],
        extra: Sequence[Column | RowAggregate] | None = None,
        *,
        path: str = "fused",
        side: Sequence[tuple[str, Column]] = (),
        side_filter: Column | None = None,
        refine: arrow_path.DriverRefinement | None = None,
        fused_columns: tuple[list[Column], Sequence[Column | RowAggregate]] | None = None,
    ) -> SegmentedResult:
        """Run the plan once, grouped by the ``segment`` columns (e.g. event-time window start).

        Segment keys are tuples of the segment column values.

        ``path="fused"``: ONE grouped aggregation computes every scan-shareable state per
        segment value, plus the ``extra`` aggregates (e.g. counts of late or bad rows), in
        the same job. Grouping analyzers run one grouped pass per spec when the batch has
        one segment, else one per (spec, segment): microbatches rarely span many windows.

        ``path="arrow"`` (small batches): ONE Spark job projects every per-row input and
        the driver reduces them (``arrow_path``); ``extra`` must then be ``RowAggregate``
        values. When a scan analyzer has no Arrow form, or the job or a reduction fails,
        the fused path runs instead (and isolates a failing analyzer); ``jobs`` counts all.
        ``side`` (name, column) pairs are projected in the same job on the rows where
        ``side_filter`` is TRUE and returned as ``out.side`` (the handler's rows to
        quarantine); the fused path ignores them (``out.side`` stays None). ``refine``: columns
        the Arrow path recomputes on the driver (``arrow_path.DriverRefinement``); when the
        fused path runs instead, it uses ``fused_columns`` (segment, extra) when given, which
        must compute in Spark what ``refine`` computes on the driver.

        Empty input gives no segments.
        """
        if path not in ("fused", "arrow"):
            raise InvalidArgument(f"path must be 'fused' or 'arrow', got {path!r}")
        out = SegmentedResult()
        runnable = self._runnable(df.schema, out.failures)
        scan = [a for a in runnable if isinstance(a, ScanShareableAnalyzer)]
        grouping = [a for a in runnable if isinstance(a, GroupingAnalyzer)]
        extras = list(extra or [])
        with count_jobs(df.sparkSession) as jobs:
            arrow_done = False
            if (
                path == "arrow"
                and arrow_path.supports(scan)
                and all(isinstance(e, RowAggregate) for e in extras)
            ):
                attempt = SegmentedResult(failures=dict(out.failures))
                try:
                    arrow_path.run_arrow(
                        df,
                        self._arrow_program(df, scan, grouping),
                        segment,
                        [e for e in extras if isinstance(e, RowAggregate)],
                        max_groups=self.max_groups,
                        out=attempt,
                        side=side,
                        side_filter=side_filter,
                        refine=refine,
                    )
                    out, arrow_done = attempt, True
                except Exception as exc:
                    if is_interruption(exc):
                        raise
                    log.info("small-batch path failed (%s); running the fused passes", _reason(exc))
            if not arrow_done:
                if fused_columns is not None:
                    segment, extras = list(fused_columns[0]), list(fused_columns[1])
                spark_extra = [e.to_spark() if isinstance(e, RowAggregate) else e for e in extras]
                for row in self._run_scan(df, scan, segment, spark_extra, out.failures):
                    out.segments[row.segment] = row
                if grouping:
                    self._run_grouping_segmented(df, grouping, segment, out)
        out.jobs = jobs[0]
        out.path = "arrow" if arrow_done else "fused"
        return out

    def _arrow_program(
        self, df: DataFrame, scan: list[ScanShareableAnalyzer], grouping: list[GroupingAnalyzer]
    ) -> arrow_path.ArrowProgram:
        """The compiled projection for this schema (cached: microbatches share a schema)."""
        key = (df.schema.json(), tuple(scan), tuple(grouping))
        program = self._programs.get(key)
        if program is None:
            program = arrow_path.compile_program(df, scan, grouping)
            if len(self._programs) > 16:  # a drifting schema must not grow the cache forever
                self._programs.clear()
            self._programs[key] = program
        return program

    # -- scan-shareable ----------------------------------------------------------------
    def _run_scan(
        self,
        df: DataFrame,
        analyzers: list[ScanShareableAnalyzer],
        segment: list[Column] | None,
        extra: list[Column],
        failures: dict[Analyzer, str],
    ) -> list[SegmentRow]:
        """One aggregation (grouped by ``segment`` when given); a failure isolates culprits."""
        try:
            per = scan_aggregations(df, analyzers)
            flat = [e for exprs in per for e in exprs] + extra
            if not flat:
                flat = [F.count(F.lit(1))]
            rows: list[tuple[Any, Any]]
            if segment is None:
                rows = [(None, r) for r in df.agg(*flat).collect()]
            else:
                k = len(segment)
                named = [c.alias(f"_streamdq_segment_{i}") for i, c in enumerate(segment)]
                rows = [(tuple(r[:k]), r[k:]) for r in df.groupBy(*named).agg(*flat).collect()]
        except Exception as exc:
            if is_interruption(exc):
                raise  # the query is stopping or Spark is gone: no metric is a fact about the data
            if len(analyzers) <= 1:
                if analyzers:
                    failures[analyzers[0]] = _reason(exc)
                    return self._run_scan(df, [], segment, extra, failures) if extra else []
                raise
            # isolate the failing analyzer(s): the error path only
            good: list[ScanShareableAnalyzer] = []
            for a in analyzers:
                probe: dict[Analyzer, str] = {}
                try:
                    _ = df.agg(*a.aggregations(df.schema)).schema  # analysis only, no job
                except Exception as probe_exc:
                    probe[a] = _reason(probe_exc)
                if probe:
                    failures.update(probe)
                else:
                    good.append(a)
            if len(good) == len(analyzers):  # a run-time failure: fall back to one job each
                merged: dict[Any, SegmentRow] = {}
                for a in analyzers:
                    for row in self._run_scan(df, [a], segment, [], failures):
                        merged.setdefault(row.segment, SegmentRow(row.segment)).states.update(row.states)
                if extra:
                    for row in self._run_scan(df, [], segment, extra, failures):
                        merged.setdefault(row.segment, SegmentRow(row.segment)).extra = row.extra
                return list(merged.values())
            return self._run_scan(df, good, segment, extra, failures)
        out: list[SegmentRow] = []
        for seg, values in rows:
            seg_row = SegmentRow(seg)
            offset = 0
            for a, exprs in zip(analyzers, per, strict=True):
                try:
                    seg_row.states[a] = a.state_from(values, offset)
                except Exception as exc:
                    failures[a] = _reason(exc)
                offset += len(exprs)
            seg_row.extra = list(values[offset : offset + len(extra)])
            out.append(seg_row)
        return out

    def _run_grouping_segmented(
        self, df: DataFrame, analyzers: list[GroupingAnalyzer], segment: list[Column], out: SegmentedResult
    ) -> None:
        """One grouped pass per spec with the segment columns leading the grouping.

        The grouped counts of all segments are collected at once (bounded by
        ``max_groups + 3`` rows per segment present); a segment that exceeds the bound is
        recomputed alone through the bounded-sketch path.
        """
        sets: dict[Any, list[GroupingAnalyzer]] = {}
        for a in analyzers:
            sets.setdefault(a.frequency_spec(), []).append(a)
        segments = list(out.segments)
        k = len(segment)
        for spec, members in sets.items():
            try:
                grouped, n_keys = grouped_counts(df, spec, segment)
                per_segment = self.max_groups + 3
                limit = per_segment * max(len(segments), 1)
                arrow = collect_grouping(grouped.limit(limit), rows=None, limit=None)
                keys = arrow.select([f"s{i}" for i in range(k)]).to_pylist()
                rows_of: dict[tuple[Any, ...], list[int]] = {}
                for i, key in enumerate(keys):
                    rows_of.setdefault(_normalize(tuple(key[f"s{j}"] for j in range(k))), []).append(i)
                body = arrow.drop_columns([f"s{i}" for i in range(k)])
                for seg in segments:
                    idx = rows_of.get(seg, [])
                    if len(idx) >= per_segment or arrow.num_rows >= limit:
                        part = df.filter(_segment_equals(segment, seg))
                        state = compute_frequency_state(part, spec, max_groups=self.max_groups)
                    else:
                        state = state_from_grouped(
                            body.take(idx),
                            n_keys=n_keys,
                            histogram=spec.histogram,
                            max_groups=self.max_groups,
                        )
                    for a in members:
                        out.segments[seg].states[a] = state
            except Exception as exc:
                if is_interruption(exc):
                    raise
                for a in members:
                    out.failures[a] = _reason(exc)

    # -- grouping ------------------------------------------------------------------------
    def _run_grouping(
        self,
        df: DataFrame,
        analyzers: list[GroupingAnalyzer],
        result: PlanResult,
        totals: dict[Any, tuple[int, int]] | None = None,
    ) -> None:
        sets: dict[Any, list[GroupingAnalyzer]] = {}
        for a in analyzers:
            sets.setdefault(a.frequency_spec(), []).append(a)
        for spec, members in sets.items():
            try:
                state = compute_frequency_state(
                    df,
                    spec,
                    max_groups=self.max_groups,
                    totals=(totals or {}).get(spec),
                    prefilter=any(a.KEYS_EXPECTED_DISTINCT for a in members),
                )
            except Exception as exc:
                if is_interruption(exc):
                    raise
                for a in members:
                    result.failures[a] = _reason(exc)
                continue
            for a in members:
                result.states[a] = state


_INTERRUPTION_MARKERS = (
    "cancelled",
    "canceled",
    "interruptedexception",
    "interrupted",
    "sparkcontext was shut down",
    "sparkcontext has been shutdown",
    "cannot call methods on a stopped sparkcontext",
    "stopped sparkcontext",
)


def is_interruption(exc: BaseException) -> bool:
    """True when a Spark job failed because it was cancelled or Spark is stopping.

    Such a failure says nothing about the data: the handler must not commit a batch of
    failed metrics for it, but let the exception end the batch so Spark replays it.
    """
    text = f"{type(exc).__name__}: {exc}".lower()
    java = getattr(exc, "java_exception", None)
    if java is not None:
        try:
            text += " " + str(java.toString()).lower()
        except Exception:  # the gateway may already be gone
            text += " interrupted"
    return any(marker in text for marker in _INTERRUPTION_MARKERS)


def _reason(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    first = text[0] if text else ""
    return f"{type(exc).__name__}: {first}"[:500]
