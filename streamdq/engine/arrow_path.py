"""The small-batch path: ONE Spark job per microbatch, states computed vectorized on the driver.

Where it runs: the driver, inside ``foreachBatch``, for microbatches the plan judges small
(``AnalysisPlan.run_segmented(..., path="arrow")``). The fused Spark passes (a persist, one
segmented ``agg``, one grouped pass per grouping set) pay a fixed cost per Spark job that
dominates a microbatch of hundreds to tens of thousands of rows; this path pays for one job.

How: every analyzer's aggregates are declared as ``RowAggregate`` values (a kind over per-row
Spark expressions). The path projects each distinct per-row input once, plus the segment
columns (bad record?, event-time window) and the key columns of every grouping set
(``frequency.key_projection``), in ONE ``select(...).toArrow()``. Spark evaluates every
expression (where-filters, predicates, casts, Java regexes) exactly as in the fused path; the
driver only reduces: per segment, ``row_aggregate.evaluate_arrow`` gives each aggregate the
value Spark's aggregate would return and the analyzer's own ``state_from`` builds the state;
grouping sets are grouped with pyarrow and go through ``frequency.state_from_grouped``.

Contract: the result equals the fused path's for the same rows (exact states equal, up to
floating summation order; sketches within their bounds; tests/laws/test_path_equivalence.py).
Empty input gives no segments. An error in the job or in a reduction is raised: the plan
then runs the fused path, which isolates a failing analyzer. A ``state_from`` error fails
that analyzer alone, as in the fused path.

>>> from streamdq.analyzers import Completeness, Size
>>> from streamdq.engine.plan import AnalysisPlan
>>> from streamdq.spark import get_spark
>>> from pyspark.sql import functions as F
>>> df = get_spark().createDataFrame([(1, "a"), (2, None)], "id INT, s STRING")
>>> out = AnalysisPlan([Size(), Completeness("s")]).run_segmented(df, [F.lit(1)], path="arrow")
>>> [a.metric(st).value for a, st in out.segments[(1,)].states.items()]
[2.0, 0.5]
>>> out.jobs
1
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from streamdq.analyzers.base import Analyzer, GroupingAnalyzer, ScanShareableAnalyzer
from streamdq.analyzers.frequency.arrow import state_from_keys
from streamdq.analyzers.frequency.query import key_projection, weight_projection
from streamdq.analyzers.row_aggregate import RowAggregate, evaluate_arrow
from streamdq.engine.plan_result import SegmentedResult, SegmentRow

log = logging.getLogger(__name__)

# (kind, projected column names, param): one reduction of the driver
Reduction = tuple[str, tuple[str, ...], int | float | None]


class _Projection:
    """The distinct per-row expressions of the one job, named ``_p0, _p1, ...``."""

    def __init__(self) -> None:
        self.columns: list[Column] = []
        self._names: dict[str, str] = {}
        self._by_name: dict[str, Column] = {}

    def copy(self) -> _Projection:
        other = _Projection()
        other.columns = list(self.columns)
        other._names = dict(self._names)
        other._by_name = dict(self._by_name)
        return other

    def column(self, name: str) -> Column:
        """The aliased projected column ``name``."""
        return self._by_name[name]

    def add(self, column: Column) -> str:
        key = str(column)
        name = self._names.get(key)
        if name is None:
            name = f"_p{len(self.columns)}"
            self._names[key] = name
            self._by_name[name] = column.alias(name)
            self.columns.append(self._by_name[name])
        return name

    def reduction(self, aggregate: RowAggregate) -> Reduction:
        return aggregate.kind, tuple(self.add(c) for c in aggregate.inputs), aggregate.param


@dataclass(frozen=True)
class DriverRefinement:
    """Projected columns the driver recomputes after the one job, before it segments the rows.

    For a value Spark could only give with a per-batch constant in its generated code (an
    event-time bound relative to processing time: Spark inlines ``current_timestamp()`` as a
    literal, so each microbatch would compile its projection anew). ``inputs`` are projected
    as usual; ``apply`` maps their arrays to one new array per column of ``outputs``, which
    must be segment or extra columns of the same call and replace theirs. Rows left out of the
    side rows by Spark's ``side_filter`` stay out: the caller collects them if it needs them.
    """

    inputs: tuple[Column, ...]
    outputs: tuple[Column, ...]
    apply: Callable[[Sequence[pa.ChunkedArray]], Sequence[pa.Array]]


def supports(analyzers: Sequence[Analyzer]) -> bool:
    """True when every scan analyzer has an Arrow form (grouping analyzers always do)."""
    return all(a.has_arrow_form() for a in analyzers if isinstance(a, ScanShareableAnalyzer))


def _segment_codes(arrays: Sequence[pa.Array]) -> tuple[np.ndarray, list[list[Any]], list[int]]:
    """A code per row for the combination of segment values; the distinct values per column."""
    n = len(arrays[0]) if arrays else 0
    codes = np.zeros(n, dtype=np.int64)
    values: list[list[Any]] = []
    sizes: list[int] = []
    for array in arrays:
        distinct = pc.unique(array)
        index = pc.index_in(array, value_set=distinct, skip_nulls=False)
        codes = codes * len(distinct) + np.asarray(index.to_numpy(zero_copy_only=False), dtype=np.int64)
        values.append(distinct.to_pylist())
        sizes.append(len(distinct))
    return codes, values, sizes


def _decode(code: int, values: list[list[Any]], sizes: list[int]) -> tuple[Any, ...]:
    out: list[Any] = []
    for distinct, size in zip(reversed(values), reversed(sizes), strict=True):
        code, i = divmod(code, size)
        out.append(distinct[i])
    return tuple(reversed(out))


@dataclass
class _Layout:
    """One batch shape's full projection: the program's columns plus segment, extra and side."""

    projection: _Projection
    segment_names: list[str]
    extras: list[Reduction]
    side_names: list[str]
    side_columns: list[Column]
    filter_name: str | None
    refine_inputs: list[str] = field(default_factory=list)
    refine_outputs: list[str] = field(default_factory=list)
    keep: Any = None  # the objects whose ids key this layout, kept alive
    java_columns: Any = None  # the JVM Seq of the job's columns, built on first use
    analyzed: Any = None  # the kept JVM plan, its input's output, whether optimised, JVM handles
    codegen: Any = None  # the JVM holder of the projection's generated source (ReusedPlan)
    arrow_schema: pa.Schema | None = None  # the job's Arrow schema, as toArrow gave it for ``analyzed``

    def parts(self) -> tuple[_Projection, list[str], list[Reduction], list[str], list[Column], str | None]:
        return (
            self.projection,
            self.segment_names,
            self.extras,
            self.side_names,
            self.side_columns,
            self.filter_name,
        )


def _layout(
    program: ArrowProgram,
    segment: Sequence[Column],
    extra: Sequence[RowAggregate],
    side: Sequence[tuple[str, Column]],
    side_filter: Column | None,
    refine: DriverRefinement | None = None,
) -> _Layout:
    projection = program.projection.copy()
    segment_names = [projection.add(c) for c in segment]
    extras = [projection.reduction(r) for r in extra]
    refine_inputs = [] if refine is None else [projection.add(c) for c in refine.inputs]
    refine_outputs = [] if refine is None else [projection.add(c) for c in refine.outputs]
    side_names: list[str] = []
    side_columns: list[Column] = []
    filter_name: str | None = None
    if side_filter is not None and side:
        filter_name = projection.add(F.coalesce(side_filter, F.lit(False)))
        for i, (name, c) in enumerate(side):
            side_names.append(name)
            side_columns.append(F.when(side_filter, c).alias(f"_side{i}"))
    return _Layout(
        projection,
        segment_names,
        extras,
        side_names,
        side_columns,
        filter_name,
        refine_inputs,
        refine_outputs,
    )


@dataclass(frozen=True)
class ArrowProgram:
    """The analyzers' part of the projection, compiled once per input schema and reused by
    every microbatch with that schema (building Spark expressions costs a py4j round trip
    each: hundreds per batch for a suite of checks)."""

    projection: _Projection
    per_analyzer: tuple[tuple[ScanShareableAnalyzer, tuple[Reduction, ...]], ...]
    keyed: tuple[tuple[Any, tuple[GroupingAnalyzer, ...], str, tuple[str, ...], str | None], ...]
    nullable: Mapping[str, bool]
    layouts: dict[Any, _Layout] = field(default_factory=dict)  # per batch shape (run_arrow)


def compile_program(
    df: DataFrame, scan: Sequence[ScanShareableAnalyzer], grouping: Sequence[GroupingAnalyzer]
) -> ArrowProgram:
    """The projection and reductions of ``scan`` and ``grouping`` over ``df``'s schema (no job)."""
    projection = _Projection()
    schema = df.schema
    per_analyzer = tuple(
        (a, tuple(projection.reduction(r) for r in a.row_aggregations(schema))) for a in scan
    )
    sets: dict[Any, list[GroupingAnalyzer]] = {}
    for g in grouping:
        sets.setdefault(g.frequency_spec(), []).append(g)
    keyed = []
    for spec, members in sets.items():
        scope, keys = key_projection(df, spec)
        weight = weight_projection(spec)  # a Histogram's Sum aggregate: its per-row values
        named = tuple(projection.add(k) for k in keys)
        weight_name = None if weight is None else projection.add(weight)
        keyed.append((spec, tuple(members), projection.add(scope), named, weight_name))
    key_names = sorted({k for _, _, _, keys, _ in keyed for k in keys})
    nullable: dict[str, bool] = {}
    if key_names:
        chosen = [projection.column(n) for n in key_names]
        nullable = {f.name: f.nullable for f in df.select(*chosen).schema.fields}  # analysis only
    return ArrowProgram(projection, per_analyzer, tuple(keyed), nullable)


def run_arrow(
    df: DataFrame,
    program: ArrowProgram,
    segment: Sequence[Column],
    extra: Sequence[RowAggregate],
    *,
    max_groups: int | None,
    out: SegmentedResult,
    side: Sequence[tuple[str, Column]] = (),
    side_filter: Column | None = None,
    refine: DriverRefinement | None = None,
) -> None:
    """Fill ``out.segments`` (and ``out.failures``) from ONE Spark job over ``df``.

    ``side`` (name, column) pairs are projected in the same job, NULL except where
    ``side_filter`` is TRUE (so rows not asked for cost a validity bit), and those rows are
    set as ``out.side`` (a pyarrow Table with the side columns' names). ``refine``: columns
    the driver recomputes before segmenting (``DriverRefinement``)."""
    # the same segment, extra and side objects come back every batch (the handler caches them
    # per schema): their projection is built once (each Spark expression is a py4j round trip)
    refine_ids = () if refine is None else (tuple(map(id, refine.inputs)), tuple(map(id, refine.outputs)))
    shape = (
        tuple(map(id, segment)),
        tuple(map(id, extra)),
        tuple(id(c) for _, c in side),
        id(side_filter),
        refine_ids,
    )
    layout = program.layouts.get(shape)
    if layout is None:
        layout = _layout(program, segment, extra, side, side_filter, refine)
        if len(program.layouts) > 64:
            program.layouts.clear()
        program.layouts[shape] = layout
        refine_cols = None if refine is None else (refine.inputs, refine.outputs)
        layout.keep = (tuple(segment), tuple(extra), tuple(side), side_filter, refine_cols)  # ids stay valid
    projection, segment_names, extras, side_names, side_columns, filter_name = layout.parts()
    per_analyzer = program.per_analyzer
    keyed = program.keyed
    nullable = program.nullable
    if not projection.columns:
        return
    selected, reused = _select(df, layout, [*projection.columns, *side_columns])
    if reused and layout.arrow_schema is not None:
        table = _collect(selected, layout.arrow_schema)
    else:
        table = selected.toArrow()
        layout.arrow_schema = table.schema
    if table.num_rows == 0:
        return
    table = table.combine_chunks()
    if refine is not None:
        new = refine.apply([table[name] for name in layout.refine_inputs])
        for name, array in zip(layout.refine_outputs, new, strict=True):
            table = table.set_column(table.schema.get_field_index(name), name, array)
    if filter_name is not None:
        rows = table.filter(table[filter_name])
        out.side = pa.table({name: rows[f"_side{i}"] for i, name in enumerate(side_names)})
        table = table.drop_columns([f"_side{i}" for i in range(len(side_names))])
    codes, values, sizes = _segment_codes([table[name].chunk(0) for name in segment_names])
    distinct, inverse = np.unique(codes, return_inverse=True)
    for i, code in enumerate(distinct.tolist()):
        part = table if len(distinct) == 1 else table.take(pa.array(np.flatnonzero(inverse == i)))
        key = _decode(code, values, sizes)
        out.segments[key] = _reduce(
            part, key, per_analyzer, extras, keyed, max_groups, nullable, out.failures
        )


# the functions Spark's optimiser replaces with the batch's time (ComputeCurrentTime), as the
# analysed plan prints them: a projection naming one is re-optimised for every batch
_READS_CLOCK = re.compile(r"\b(current_\w+|now|localtimestamp|unix_timestamp|curdate)\(", re.IGNORECASE)


def _collect(df: DataFrame, schema: pa.Schema) -> pa.Table:
    """``df.toArrow()`` for a projection whose Arrow ``schema`` is known (a reused layout's).

    The same job and the same Arrow stream as PySpark's ``toArrow``, without its per-call
    reads of the session's Arrow settings, of the frame's schema and of the UI call site
    (~20 py4j round trips, a few milliseconds a batch on an idle machine); the schema is the
    one ``toArrow`` gave for this layout's first batch, over the same input attributes. When
    PySpark's internals are not the expected ones it is ``toArrow`` itself."""
    try:
        from pyspark.errors.exceptions.captured import unwrap_spark_exception
        from pyspark.sql.pandas.serializers import ArrowCollectSerializer
        from pyspark.util import _load_from_socket

        collect = df._jdf.collectAsArrowToPython  # type: ignore[attr-defined]
    except (ImportError, AttributeError):
        return df.toArrow()
    served = collect()
    port, secret, server = served[0], served[1], served[2]  # by index: unpacking asks py4j more
    try:
        with _load_from_socket((port, secret), ArrowCollectSerializer()) as stream:
            batches = list(stream)
    finally:
        with unwrap_spark_exception():
            server.getResult()  # the job's own error, if it failed
    if not batches:
        return schema.empty_table()
    return pa.Table.from_batches(batches).cast(schema)


def _reused_plan(jvm: Any) -> Any:
    """``io.streamdq.ReusedPlan.over`` when the session has streamdq's jar (``streamdq.jvm``),
    else None."""
    from py4j.java_gateway import JavaClass

    cls = jvm.io.streamdq.ReusedPlan
    return cls.over if isinstance(cls, JavaClass) else None


def _select(df: DataFrame, layout: _Layout, columns: list[Column]) -> tuple[DataFrame, bool]:
    """``df.select(*columns)``, analysed and optimised once per layout and input; the flag
    says whether the layout's kept plan was reused (the input's attributes were its own).

    Spark analyses and optimises a projection anew on every ``select`` (tens of milliseconds
    for the standard suite's ~30 expressions), and PySpark converts the columns to a JVM Seq
    with a py4j round trip per column. A streaming query's microbatches are plans over the
    same attributes (the same names and expression ids: the query's plan is analysed once),
    so the optimised projection of an earlier batch is put over this batch's plan, which
    Spark then finds resolved and already simplified; the new plan is marked analysed
    (``setAnalyzed``), so Spark skips the analyser's rules and checks, which would find nothing
    to do over attributes that are the cached ones (~9 ms a batch at load 5). With streamdq's
    jar, ``io.streamdq.ReusedPlan`` does that in one call and, over a ``foreachBatch`` batch (a
    ``LogicalRDD`` leaf), also skips the optimiser: the kept plan is optimised already
    (~16 ms a batch at load 11), and keeps the Java source Spark generated for the projection's
    codegen stage (``layout.codegen``), which later batches run instead of generating it again
    (6-16 ms a batch). A projection that reads the clock
    (``current_timestamp()``, ``current_date()``, ...: the optimiser folds them into the
    batch's literals) reuses its analysed form only, so every batch gets its own time. When
    the input's attributes differ (another query, a static frame), or Spark's internals are
    not the expected ones, it selects as usual; a session without a JVM gateway (Spark
    Connect) too.
    """
    jdf = getattr(df, "_jdf", None)
    if jdf is None:
        return df.select(*columns), False
    session = df.sparkSession
    try:
        child = jdf.queryExecution().analyzed()
        cached = layout.analyzed
        if cached and cached[1].equals(child.output()):
            plan, output, optimized, over, to_seq, singleton, of_rows = cached
            jsession = session._jsparkSession  # type: ignore[attr-defined]
            if over is not None:
                try:
                    reused = over(jsession, plan, child, optimized, layout.codegen)
                    return type(df)(reused, session), True  # type: ignore[call-arg]
                except Exception:  # a jar that does not link against this Spark: the py4j way
                    log.debug("io.streamdq.ReusedPlan failed; reusing through py4j", exc_info=True)
                    layout.analyzed = (plan, output, optimized, None, to_seq, singleton, of_rows)
            plan = plan.withNewChildren(to_seq(singleton(child)))
            plan.setAnalyzed()
            return type(df)(of_rows(jsession, plan), session), True  # type: ignore[call-arg]
    except Exception:  # Spark's internals moved: select as usual from now on
        log.debug("re-using the analysed projection failed; selecting as usual", exc_info=True)
        layout.analyzed = False
    if layout.java_columns is None:
        layout.java_columns = df._jcols(*columns)  # type: ignore[operator]
    selected = type(df)(jdf.select(layout.java_columns), session)  # type: ignore[call-arg]
    if layout.analyzed is not False:
        try:
            execution = selected._jdf.queryExecution()  # type: ignore[attr-defined]
            analyzed = execution.analyzed()
            optimized = not _READS_CLOCK.search(analyzed.toString())
            if optimized:
                analyzed = execution.optimizedPlan()  # computed now, kept for this batch's job
            jvm: Any = session._jvm  # type: ignore[attr-defined]
            # the JVM classes too: each attribute of the gateway's view is a round trip
            handles = (
                _reused_plan(jvm),
                jvm.PythonUtils.toSeq,
                jvm.java.util.Collections.singletonList,
                jvm.org.apache.spark.sql.classic.Dataset.ofRows,
            )
            layout.analyzed = (analyzed, analyzed.child().output(), optimized, *handles)
            if handles[0] is not None:  # the projection's generated source, kept across batches
                layout.codegen = jvm.java.util.concurrent.atomic.AtomicReference()
        except Exception:
            layout.analyzed = False
    return selected, False


def _reduce(
    part: pa.Table,
    key: tuple[Any, ...],
    per_analyzer: Sequence[tuple[ScanShareableAnalyzer, Sequence[Reduction]]],
    extras: list[Reduction],
    keyed: Sequence[tuple[Any, Sequence[GroupingAnalyzer], str, Sequence[str], str | None]],
    max_groups: int | None,
    nullable: Mapping[str, bool],
    failures: dict[Analyzer, str],
) -> SegmentRow:
    cache: dict[Reduction, Any] = {}

    def value(reduction: Reduction) -> Any:
        if reduction not in cache:
            kind, names, param = reduction
            cache[reduction] = (
                part.num_rows if kind == "rows" else evaluate_arrow(kind, [part[n] for n in names], param)
            )
        return cache[reduction]

    row = SegmentRow(key)
    for analyzer, reductions in per_analyzer:
        values = [value(r) for r in reductions]
        try:
            row.states[analyzer] = analyzer.state_from(values, 0)
        except Exception as exc:  # a bad aggregated value fails this analyzer alone, as in Spark
            failures[analyzer] = f"{type(exc).__name__}: {exc}"[:500]
    row.extra = [value(r) for r in extras]
    for spec, members, scope, keys, weight in keyed:
        state = state_from_keys(
            part[scope],
            [part[k] for k in keys],
            histogram=spec.histogram,
            max_groups=max_groups,
            nullable=[nullable[k] for k in keys],
            weights=None if weight is None else part[weight],
        )
        for g in members:
            row.states[g] = state
    return row
