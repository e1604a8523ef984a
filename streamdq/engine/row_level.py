"""Row-level quarantine in the streaming job: rows failing a check's row-level constraints.

A check with ``row_level: quarantine`` (checks file) sends every row of a microbatch that
fails one of its row-level constraints (``streamdq.checks.row_level``: completeness,
compliance, pattern, containment, min/max length, uniqueness) to the quarantine table, with
the reason ``row-level: <constraint> | <constraint>`` naming every constraint it fails.
Dataset-level constraints (a mean, a size, a quantile...) never stamp a row, so a failing
``has_size`` cannot flood the quarantine table with the whole batch.

Per microbatch (rows with a decode error or an implausible event time are quarantined for
that reason already and not judged here):

* ONE aggregation counts, per constraint, the rows failing it, and the rows failing any;
* only when some row fails, ONE capped query collects at most ``cap`` of them
  (``row_level_quarantine_max_rows`` in the run config, default 1000); the rest are counted
  (``over_cap``), never written.

The counts become batch metrics: ``RowLevelFailures`` (instance: the constraint),
``RowLevelFailedRows``, ``RowLevelQuarantinedRows`` and ``RowLevelRowsOverCap`` (instance
``*``), and the report's counters ``row_level_failed_rows`` / ``row_level_quarantined_rows``
/ ``row_level_over_cap_rows``. Uniqueness is judged within the microbatch (the rows that
share a key in this batch), whatever the constraint's scope.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from streamdq.analyzers.metric import DATASET, Metric
from streamdq.checks.row_level import RowLevelRule, row_level_rules
from streamdq.errors import ConfigError
from streamdq.report import ScopedMetric

DEFAULT_MAX_ROWS = 1000
QUARANTINE = "quarantine"


@dataclass(frozen=True)
class RowLevelOutcome:
    """What the row-level stage of one microbatch found (hand-off to the report and commit)."""

    rows: pa.Table | None = None
    failures: dict[str, int] = field(default_factory=dict)
    failed_rows: int = 0
    quarantined_rows: int = 0
    over_cap_rows: int = 0

    def counters(self) -> dict[str, int]:
        return {
            "row_level_failed_rows": self.failed_rows,
            "row_level_quarantined_rows": self.quarantined_rows,
            "row_level_over_cap_rows": self.over_cap_rows,
        }

    def metrics(self) -> list[ScopedMetric]:
        out = [
            ScopedMetric("batch", Metric(DATASET, "RowLevelFailures", name, value=float(count)))
            for name, count in self.failures.items()
        ]
        for metric_name, value in (
            ("RowLevelFailedRows", self.failed_rows),
            ("RowLevelQuarantinedRows", self.quarantined_rows),
            ("RowLevelRowsOverCap", self.over_cap_rows),
        ):
            out.append(ScopedMetric("batch", Metric(DATASET, metric_name, "*", value=float(value))))
        return out


class RowLevelQuarantine:
    """The row-level rules of the checks that ask for quarantine, and the cap per batch."""

    def __init__(self, checks: Iterable[Any], max_rows: int = DEFAULT_MAX_ROWS) -> None:
        if isinstance(max_rows, bool) or not isinstance(max_rows, int) or max_rows < 0:
            raise ConfigError(
                "row_level_quarantine_max_rows",
                f"got {max_rows!r}; expected an integer >= 0",
                "write e.g. row_level_quarantine_max_rows: 1000",
            )
        wanted = [c for c in checks if getattr(c, "row_level", None) == QUARANTINE]
        self.rules: list[RowLevelRule] = row_level_rules(wanted)
        self.max_rows = max_rows

    @property
    def active(self) -> bool:
        return bool(self.rules)

    def run(
        self,
        df: DataFrame,
        good: Column,
        constants: Sequence[Column],
        selected: Sequence[tuple[str, Column]],
    ) -> RowLevelOutcome:
        """Count the failing rows of ``df`` (rows where ``good``) and collect up to the cap with
        the quarantine columns ``selected`` (its ``reason`` replaced) after ``constants``."""
        if not self.rules:
            return RowLevelOutcome()
        # the flags are projected first: uniqueness is a window, not allowed inside an aggregate
        flags = [f"_streamdq_row_level_{i}" for i in range(len(self.rules))]
        judged = df.filter(good).select(
            "*", *[r.fails().alias(n) for r, n in zip(self.rules, flags, strict=True)]
        )
        any_fail = F.col(flags[0])
        for name in flags[1:]:
            any_fail = any_fail | F.col(name)
        counts = judged.agg(
            *[F.count_if(F.col(n)).alias(n) for n in flags], F.count_if(any_fail).alias("any")
        ).collect()[0]
        failures = {r.name: int(counts[n] or 0) for r, n in zip(self.rules, flags, strict=True)}
        failed = int(counts["any"] or 0)
        rows = None
        if failed and self.max_rows:
            names = F.filter(
                F.array(*[F.when(F.col(n), F.lit(r.name)) for r, n in zip(self.rules, flags, strict=True)]),
                lambda x: x.isNotNull(),
            )
            reason = F.concat(F.lit("row-level: "), F.array_join(names, " | "))
            columns = [reason.alias(n) if n == "reason" else c.alias(n) for n, c in selected]
            rows = judged.filter(any_fail).select(*constants, *columns).limit(self.max_rows).toArrow()
        quarantined = 0 if rows is None else rows.num_rows
        return RowLevelOutcome(rows, failures, failed, quarantined, failed - quarantined)
