"""Which path a microbatch takes: none (empty), the one-job Arrow path, or the fused passes.

Runs on the driver, before any Spark job of the batch. The choice needs the batch's row
count, which is not known without a job; the estimate comes, cheapest first, from:

1. Spark's own statistics of the batch's analysed plan (``sizeInBytes``, computed by the
   planner, no job): about 0 bytes for a file source's empty file, the files' bytes
   otherwise (Spark floors a projection's size at a few bytes, so a tiny plan's leaves are
   checked: all of 0 bytes means the batch is empty, and no metric job runs).
2. The source's cap on a trigger (``max_records_per_trigger``: Kafka, the generator).
3. The previous microbatch's row count, for sources whose size Spark cannot state.

Bytes become rows through the bytes per row observed on earlier batches of this query
(``learn``); before the first observation a conservative 40 bytes per row is assumed (a JSON
event is usually 100-300 bytes), so a first large batch is not mistaken for a small one.
``small_batch_rows = 0`` always takes the fused path. An unknown estimate takes the fused
path: it is safe at any size, while the Arrow path brings the projected rows to the driver.

>>> sizer = BatchSizer(small_batch_rows=1000)
>>> sizer.choose(RowEstimate(rows=0, size_bytes=0, source="plan statistics")), sizer.choose(RowEstimate(500))
('empty', 'arrow')
>>> sizer.choose(RowEstimate(None)), sizer.choose(RowEstimate(5000))
('fused', 'fused')
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pyspark.sql import DataFrame

from streamdq.errors import ConfigError

ASSUMED_BYTES_PER_ROW = 40.0
TINY_PLAN_BYTES = 4096
_UNKNOWN_SIZE = 1 << 62  # Spark's "no idea" (defaultSizeInBytes is Long.MaxValue)


@dataclass(frozen=True)
class RowEstimate:
    """A batch's estimated row count (None = unknown), its plan size, and where both came from."""

    rows: int | None
    size_bytes: int | None = None
    source: str = "unknown"


def _execution(df: DataFrame) -> Any:
    """The frame's JVM QueryExecution, or None (Spark Connect)."""
    try:
        return df._jdf.queryExecution()
    except Exception:
        return None


def _analyzed(execution: Any) -> Any:
    """The analysed plan of a JVM QueryExecution (one py4j round trip), or None (no
    QueryExecution: Spark Connect)."""
    try:
        return execution.analyzed()
    except Exception:
        return None


def plan_size_bytes(analyzed: Any) -> int | None:
    """Spark's size estimate of ``analyzed``, the analysed plan of a frame's JVM QueryExecution
    (``_analyzed``; no job), or None when it has none (or no plan: Spark Connect).

    The analysed plan, not the optimised one: a microbatch handed to ``foreachBatch`` is a
    ``LogicalRDD`` that carries the statistics of the source's optimised plan already, and
    optimising it again would cost the optimiser's full rule set on every batch (the small-batch
    path's job optimises its own projection anyway). A static frame's estimate is then the
    unfiltered one: larger, which errs towards the fused path, the one safe at any size."""
    try:
        size = int(analyzed.stats().sizeInBytes())
    except Exception:  # Spark Connect, or a plan without statistics
        return None
    return size if 0 <= size < _UNKNOWN_SIZE else None


def _leaf_is_empty(leaf: Any) -> bool:
    if leaf.getClass().getSimpleName() == "LogicalRDD":
        # foreachBatch hands over the microbatch as a LogicalRDD over its already planned
        # RDD: its partitions are known without a job
        return int(leaf.rdd().getNumPartitions()) == 0
    return int(leaf.stats().sizeInBytes()) == 0


def _leaves_empty(plan: Any) -> bool:
    if plan.getClass().getSimpleName() == "LogicalRDD":  # a microbatch: it is its own leaf
        return int(plan.rdd().getNumPartitions()) == 0
    leaves = plan.collectLeaves()
    n = int(leaves.size())
    return n > 0 and all(_leaf_is_empty(leaves.apply(i)) for i in range(n))


def reads_nothing(execution: Any, analyzed: Any = None) -> bool:
    """True when every leaf of ``execution``'s plan is empty: an RDD without partitions (a
    microbatch over an empty file), a relation of 0 bytes. Planner facts, no job. The analysed
    plan's leaves first (a microbatch's); when they are not all empty, the optimised plan's,
    where Spark has pruned what reads nothing (``limit(0)``, a filter that is always false) to
    an empty relation (a poison batch is the batch's frame under ``limit(0)``). ``analyzed``:
    the analysed plan when the caller has it already (one py4j round trip less)."""
    try:
        plan = execution.analyzed() if analyzed is None else analyzed
        return _leaves_empty(plan) or _leaves_empty(execution.optimizedPlan())
    except Exception:
        return False


class BatchSizer:
    """Estimates each microbatch's rows and picks its path (``empty``, ``arrow``, ``fused``)."""

    def __init__(self, *, small_batch_rows: int = 250_000, rows_cap: int | None = None) -> None:
        if small_batch_rows < 0:
            raise ConfigError(
                "small_batch_rows",
                f"expected an integer >= 0, got {small_batch_rows}",
                "write small_batch_rows: 0",
            )
        self.small_batch_rows = small_batch_rows
        self.rows_cap = rows_cap
        self.bytes_per_row: float | None = None
        self.last_rows: int | None = None

    def estimate(self, df: DataFrame) -> RowEstimate:
        execution = _execution(df)  # one look-up for both questions (py4j round trips)
        analyzed = _analyzed(execution)
        size = plan_size_bytes(analyzed)
        # Spark floors a projection's size at a few bytes: a tiny plan may still read nothing
        if size is not None and size < TINY_PLAN_BYTES and reads_nothing(execution, analyzed):
            return RowEstimate(0, 0, "plan statistics")
        if size:
            per_row = self.bytes_per_row or ASSUMED_BYTES_PER_ROW
            rows = int(size / per_row) + 1
            if self.rows_cap is not None:
                rows = min(rows, self.rows_cap)
            return RowEstimate(rows, size, "plan statistics")
        if self.rows_cap is not None:
            return RowEstimate(self.rows_cap, None, "source cap")
        return RowEstimate(self.last_rows, None, "previous batch")

    def choose(self, estimate: RowEstimate) -> str:
        if estimate.rows == 0 and estimate.size_bytes == 0:
            return "empty"
        if estimate.rows is None or self.small_batch_rows == 0:
            return "fused"
        return "arrow" if estimate.rows <= self.small_batch_rows else "fused"

    def learn(self, estimate: RowEstimate, rows: int) -> None:
        """Record a batch's real row count (and, with its plan size, the bytes per row)."""
        self.last_rows = rows
        if estimate.size_bytes and rows > 0:
            observed = estimate.size_bytes / rows
            # the smallest width seen: estimates err towards more rows (the safe side)
            self.bytes_per_row = observed if self.bytes_per_row is None else min(self.bytes_per_row, observed)

    def describe(self) -> dict[str, Any]:
        return {"small_batch_rows": self.small_batch_rows, "rows_cap": self.rows_cap}
