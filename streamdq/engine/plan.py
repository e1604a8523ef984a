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

import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from pyspark.sql import Column, DataFrame, SparkSession

from streamdq.analyzers.base import Analyzer, GroupingAnalyzer, ScanShareableAnalyzer
from streamdq.analyzers.state import State

DEFAULT_MAX_GROUPS = 100_000


@dataclass
class PlanResult:
    """States computed by one run of a plan, failures by analyzer, and Spark job count."""

    states: dict[Analyzer, State] = field(default_factory=dict)
    failures: dict[Analyzer, str] = field(default_factory=dict)
    jobs: int = 0


@contextmanager
def count_jobs(spark: SparkSession) -> Iterator[list[int]]:
    """Count Spark jobs started inside the block (by this thread) via a fresh job group."""
    sc = spark.sparkContext
    previous = sc.getLocalProperty("spark.jobGroup.id")
    previous_desc = sc.getLocalProperty("spark.job.description")
    group = f"streamdq-{uuid.uuid4().hex}"
    sc.setJobGroup(group, "streamdq analysis", interruptOnCancel=False)
    out: list[int] = [0]
    try:
        yield out
    finally:
        out[0] = len(sc.statusTracker().getJobIdsForGroup(group))
        if previous is not None:
            sc.setJobGroup(previous, previous_desc or "", interruptOnCancel=False)
        else:
            sc.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]
            sc.setLocalProperty("spark.job.description", None)  # type: ignore[arg-type]


class AnalysisPlan:
    """The fused execution plan for a set of analyzers (deduplicated, order kept)."""

    def __init__(self, analyzers: Iterable[Analyzer], *, max_groups: int = DEFAULT_MAX_GROUPS) -> None:
        self.analyzers: list[Analyzer] = list(dict.fromkeys(analyzers))
        self.max_groups = max_groups
        self.scan = [a for a in self.analyzers if isinstance(a, ScanShareableAnalyzer)]
        self.grouping = [a for a in self.analyzers if isinstance(a, GroupingAnalyzer)]
        unknown = [a for a in self.analyzers if not isinstance(a, ScanShareableAnalyzer | GroupingAnalyzer)]
        if unknown:
            raise TypeError(f"analyzers of unknown kind: {unknown}")

    def grouping_sets(self) -> dict[Any, list[GroupingAnalyzer]]:
        sets: dict[Any, list[GroupingAnalyzer]] = {}
        for a in self.grouping:
            sets.setdefault(a.frequency_spec(), []).append(a)
        return sets

    def run(self, df: DataFrame) -> PlanResult:
        result = PlanResult()
        schema = df.schema
        runnable: list[Analyzer] = []
        for a in self.analyzers:
            try:
                reason = a.preconditions(schema)
            except Exception as exc:  # a broken parameter must not stop the others
                reason = f"{type(exc).__name__}: {exc}"
            if reason is None:
                runnable.append(a)
            else:
                result.failures[a] = reason
        scan = [a for a in runnable if isinstance(a, ScanShareableAnalyzer)]
        with count_jobs(df.sparkSession) as jobs:
            if scan:
                self._run_scan(df, scan, result)
            grouping = [a for a in runnable if isinstance(a, GroupingAnalyzer)]
            if grouping:
                self._run_grouping(df, grouping, result)
        result.jobs = jobs[0]
        return result

    # -- scan-shareable ----------------------------------------------------------------
    def _aggregations(self, df: DataFrame, analyzers: list[ScanShareableAnalyzer]) -> list[list[Column]]:
        return [a.aggregations(df.schema) for a in analyzers]

    def _run_scan(self, df: DataFrame, analyzers: list[ScanShareableAnalyzer], result: PlanResult) -> None:
        try:
            per = self._aggregations(df, analyzers)
            flat = [e for exprs in per for e in exprs]
            row = df.agg(*flat).collect()[0]
        except Exception as exc:
            if len(analyzers) == 1:
                result.failures[analyzers[0]] = _reason(exc)
                return
            for a in analyzers:  # isolate the failing analyzer(s): one job each, error path only
                self._run_scan(df, [a], result)
            return
        offset = 0
        for a, exprs in zip(analyzers, per, strict=True):
            try:
                result.states[a] = a.state_from(row, offset)
            except Exception as exc:
                result.failures[a] = _reason(exc)
            offset += len(exprs)

    # -- grouping ------------------------------------------------------------------------
    def _run_grouping(self, df: DataFrame, analyzers: list[GroupingAnalyzer], result: PlanResult) -> None:
        from streamdq.analyzers.frequency import compute_frequency_state

        sets: dict[Any, list[GroupingAnalyzer]] = {}
        for a in analyzers:
            sets.setdefault(a.frequency_spec(), []).append(a)
        for spec, members in sets.items():
            try:
                state = compute_frequency_state(df, spec, max_groups=self.max_groups)
            except Exception as exc:
                for a in members:
                    result.failures[a] = _reason(exc)
                continue
            for a in members:
                result.states[a] = state


def _reason(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    first = text[0] if text else ""
    return f"{type(exc).__name__}: {first}"[:500]
