"""Which form a measure takes: mergeable analyzers (compiled) or Spark SQL per microbatch.

Pure Python (sqlglot), no Spark job: ``measure_form(measure, schema)`` decides once, when the
checks load. A measure compiles when its query is ``SELECT <aggregates> FROM data [WHERE p]``
(no join, GROUP BY, HAVING, DISTINCT, window, subquery, CTE, ORDER BY or LIMIT) and every
selected item is one decomposable aggregate of a plain column or predicate:

========================================  =========================================  ==============
SQL item                                  analyzer (joins the fused pass)            value from its state
========================================  =========================================  ==============
``count(*)``, ``count(1)``                ``Size(where)``                            rows in scope
``count(c)``                              ``Completeness(c, where)``                 non-NULL rows
``count_if(p)``                           ``Compliance(p, where)``                   rows where p is TRUE
``sum(cast(p as int))`` (p boolean)       ``Compliance(p, where)``                   rows where p is TRUE (NULL if no p is non-NULL)
``sum(case when p then 1 else 0 end)``    ``Compliance(p, where)``                   rows where p is TRUE (NULL over no row); also ``if(p, 1, 0)``
``sum(c)``                                ``Sum(c, where)``                          Σ (NULL when no value)
``min(c)``, ``max(c)``                    ``Minimum`` / ``Maximum``                  the extreme (NULL when no value)
``avg(c)``, ``mean(c)``                   ``Mean(c, where)``                         Σ / n (NULL when no value)
``approx_count_distinct(c)``              ``ApproxCountDistinct(c, where)``          HLL estimate
========================================  =========================================  ==============

``agg(...) FILTER (WHERE q)`` compiles as ``agg`` with ``q`` added to its filter. The ``WHERE``
predicate becomes each analyzer's ``where`` (rows where it is FALSE or NULL are
out of scope, as in SQL). Compiled measures exist at every scope (batch, window, total): their
states merge like any analyzer's. Integral results (counts, sums/min/max of integral columns)
are returned as Python ints, as Spark SQL returns them; ``sum``/``min``/``max``/``avg`` of a
floating column skip NaN and infinities (streamdq's non-finite policy; Spark SQL would return
NaN). Anything else (``count(distinct c)``, arithmetic over aggregates, string ``min``...)
runs as Spark SQL on each microbatch and exists at batch scope only; ``reason`` says why.

>>> from streamdq.checks.measure import Measure
>>> f = measure_form(Measure("n", "select count(*) as n, sum(cast((a is null) as int)) from data where b > 0", "list"))
>>> f.compiled, [p.analyzer.NAME for p in f.parts]
(True, ['Size', 'Compliance'])
>>> measure_form(Measure("d", "select count(distinct a) from data", "single_value")).reason
'count(DISTINCT a) is not mergeable (use approx_count_distinct(a) to compile it)'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql.types import (
    BooleanType,
    ByteType,
    DataType,
    IntegerType,
    LongType,
    NumericType,
    ShortType,
    StructType,
)
from sqlglot import exp

from streamdq.analyzers.approx_count_distinct import ApproxCountDistinct
from streamdq.analyzers.base import Analyzer
from streamdq.analyzers.basic_states import MaxState, MinState, NumMatches, NumMatchesAndCount, SumState
from streamdq.analyzers.completeness import Completeness
from streamdq.analyzers.compliance import Compliance
from streamdq.analyzers.maximum import Maximum
from streamdq.analyzers.mean import Mean
from streamdq.analyzers.minimum import Minimum
from streamdq.analyzers.size import Size
from streamdq.analyzers.state import State
from streamdq.analyzers.sum import Sum
from streamdq.checks.measure import Measure, MeasureResult
from streamdq.checks.measure_sql import DATA, DIALECT, MeasureSqlError, parse_query

INTEGRAL = (ByteType, ShortType, IntegerType, LongType)
INT_CASTS = {
    exp.DataType.Type.INT,
    exp.DataType.Type.BIGINT,
    exp.DataType.Type.SMALLINT,
    exp.DataType.Type.TINYINT,
}


@dataclass(frozen=True)
class MeasurePart:
    """One compiled SELECT item: its alias (or None), its SQL text, the aggregate function and
    the analyzer whose state answers it; ``integral``: Spark SQL returns an integer."""

    alias: str | None
    label: str
    function: str
    analyzer: Analyzer
    integral: bool

    def value(self, state: State | None) -> Any:
        """The item's value from the analyzer's state (None for Spark SQL's NULL)."""
        if state is None:
            return None
        f = self.function
        if f in ("count_rows",):
            assert isinstance(state, NumMatches)
            return int(state.matches)
        if f in ("count", "count_if"):
            assert isinstance(state, NumMatchesAndCount)
            return int(state.matches)
        if f == "sum_bool":
            assert isinstance(state, NumMatchesAndCount)
            return int(state.matches) if state.evaluated else None
        if f == "sum_case":  # sum(case when p then 1 else 0 end): NULL only over no row
            assert isinstance(state, NumMatchesAndCount)
            return int(state.matches) if state.count else None
        if f == "sum":
            assert isinstance(state, SumState)
            if state.n == 0:
                return None
            return _int(state.total) if self.integral else float(state.total)
        if f in ("min", "max"):
            assert isinstance(state, MinState | MaxState)
            if state.value is None:
                return None
            return _int(state.value) if self.integral else float(state.value)
        if f == "avg":
            assert isinstance(state, SumState)
            return None if state.n == 0 else float(state.total / state.n)
        if f == "approx_count_distinct":
            return int(round(float(self.analyzer.metric(state).value or 0.0)))
        raise AssertionError(f"unknown compiled function {f}")  # pragma: no cover


def _int(value: float) -> int:
    return int(round(value))


@dataclass(frozen=True)
class MeasureForm:
    """How ``measure`` runs: ``parts`` (compiled) or Spark SQL per microbatch (``reason``)."""

    measure: Measure
    parts: tuple[MeasurePart, ...] = ()
    reason: str | None = None

    @property
    def compiled(self) -> bool:
        return self.reason is None

    def analyzers(self) -> list[Analyzer]:
        return list(dict.fromkeys(p.analyzer for p in self.parts))

    def result(
        self,
        states: Mapping[Analyzer, State],
        names: Sequence[str] | None = None,
        *,
        scope: str = "batch",
        window: tuple[str, str] | None = None,
        failures: Mapping[Analyzer, str] | None = None,
    ) -> MeasureResult:
        """The measure's value from ``states`` (a missing state reads as the empty state).

        ``names``: the query's output column names as Spark names them (the ``map`` keys);
        by default each item's alias, else its SQL text."""
        m = self.measure
        for p in self.parts:
            if failures and p.analyzer in failures:
                return MeasureResult(
                    m.name, m.result_type, None, f"{p.label}: {failures[p.analyzer]}", scope, window
                )
        try:
            values = [p.value(states.get(p.analyzer, p.analyzer.empty_state())) for p in self.parts]
        except Exception as exc:  # a state of another shape: fail this measure only
            return MeasureResult(m.name, m.result_type, None, f"{type(exc).__name__}: {exc}", scope, window)
        keys = list(names) if names is not None else [p.alias or p.label for p in self.parts]
        return shaped(m, values, keys, scope=scope, window=window)

    def explain(self) -> str:
        """One line: ``compiled: count(*) -> Size, ...`` or ``per-batch Spark SQL: <reason>``."""
        if not self.compiled:
            return f"per-batch Spark SQL (batch scope only): {self.reason}"
        items = ", ".join(f"{p.label} -> {_describe(p.analyzer)}" for p in self.parts)
        return f"compiled (batch, window and total scopes): {items}"


def _describe(a: Analyzer) -> str:
    params = {k: v for k, v in a.to_spec().items() if k not in ("analyzer", "name") and v not in ((), [])}
    inner = ", ".join(f"{k}={v!r}" if k == "where" else repr(v) for k, v in params.items())
    return f"{a.NAME}({inner})"


def shaped(
    measure: Measure,
    values: Sequence[Any],
    names: Sequence[str],
    *,
    scope: str = "batch",
    window: tuple[str, str] | None = None,
) -> MeasureResult:
    """One row's ``values`` (with column ``names``) read as the measure's result type."""
    from streamdq.checks.measure import json_value

    rt = measure.result_type
    clean = [json_value(v) for v in values]
    if rt == "single_value":
        if len(clean) != 1:
            return MeasureResult(
                measure.name,
                rt,
                None,
                f"measure {measure.name!r}: single_value needs one column; the query returned {len(clean)}",
                scope,
                window,
            )
        return MeasureResult(measure.name, rt, clean[0], None, scope, window)
    if rt == "list":
        return MeasureResult(measure.name, rt, tuple(clean), None, scope, window)
    if len(set(names)) != len(names):
        dup = sorted({n for n in names if list(names).count(n) > 1})
        return MeasureResult(
            measure.name,
            rt,
            None,
            f"measure {measure.name!r}: map needs distinct column names; repeated: {', '.join(dup)} "
            "(give each an alias: ... as c)",
            scope,
            window,
        )
    return MeasureResult(measure.name, rt, dict(zip(names, clean, strict=True)), None, scope, window)


# -- deciding the form ------------------------------------------------------------------------


class _NotCompiled(Exception):
    pass


def measure_form(measure: Measure, schema: StructType | None = None) -> MeasureForm:
    """The form of ``measure`` (see module docstring); ``schema`` (when known) decides the
    numeric and integral column types. A measure whose SQL does not parse gets a reason too
    (the load-time check reports it as an error)."""
    try:
        tree = parse_query(measure.sql)
    except MeasureSqlError as exc:
        return MeasureForm(measure, reason=str(exc))
    try:
        parts = _compile(tree, schema)
    except _NotCompiled as exc:
        return MeasureForm(measure, reason=str(exc))
    return MeasureForm(measure, tuple(parts))


def _compile(tree: exp.Query, schema: StructType | None) -> list[MeasurePart]:
    if not isinstance(tree, exp.Select):
        raise _NotCompiled("not a plain SELECT (a set operation)")
    for key, words in (
        ("with_", "a WITH clause"),
        ("with", "a WITH clause"),
        ("joins", "a JOIN"),
        ("group", "GROUP BY"),
        ("having", "HAVING"),
        ("distinct", "SELECT DISTINCT"),
        ("order", "ORDER BY"),
        ("limit", "LIMIT"),
        ("laterals", "LATERAL VIEW"),
        ("windows", "a WINDOW clause"),
        ("qualify", "QUALIFY"),
    ):
        if tree.args.get(key):
            raise _NotCompiled(f"the query has {words}")
    source = tree.args.get("from_") or tree.args.get("from")
    table = source.this if source is not None else None
    if not isinstance(table, exp.Table) or table.name.lower() != DATA:
        raise _NotCompiled("it does not read `data` directly (a subquery in FROM)")
    for key in ("sample", "pivots", "laterals", "joins", "version"):
        if table.args.get(key):
            raise _NotCompiled(f"it reads `data` with {key.upper()}")
    alias = table.alias or None
    where_node = tree.args.get("where")
    where = None
    if where_node is not None:
        _plain(where_node.this, "WHERE")
        where = _sql(where_node.this, alias)
    parts = []
    for item in tree.expressions:
        name = item.alias if isinstance(item, exp.Alias) else None
        node = item.this if isinstance(item, exp.Alias) else item
        parts.append(_part(node, name, where, alias, schema))
    if not parts:
        raise _NotCompiled("it selects nothing")
    return parts


def _part(
    node: exp.Expression, name: str | None, where: str | None, alias: str | None, schema: StructType | None
) -> MeasurePart:
    label = node.sql(DIALECT, normalize_functions="lower")
    if isinstance(node, exp.Filter) and isinstance(node.this, exp.AggFunc):  # agg(...) FILTER (WHERE p)
        condition = node.expression.this if isinstance(node.expression, exp.Where) else node.expression
        _plain(condition, label)
        p = _sql(condition, alias)
        aggregate: exp.Expression = node.args["this"]
        part = _part(aggregate, name, f"({where}) AND ({p})" if where else p, alias, schema)
        return MeasurePart(part.alias, label, part.function, part.analyzer, part.integral)
    if isinstance(node, exp.Count):
        arg = node.this
        if isinstance(arg, exp.Distinct):
            listed = ", ".join(e.sql(DIALECT, normalize_functions="lower") for e in arg.expressions)
            raise _NotCompiled(
                f"{label} is not mergeable (use approx_count_distinct({listed}) to compile it)"
            )
        if arg is None or isinstance(arg, exp.Star) or (isinstance(arg, exp.Literal) and not arg.is_string):
            return MeasurePart(name, label, "count_rows", Size(where), True)
        column = _column(arg, label, alias, schema)
        if column is not None:
            _require_column(schema, column, label)
            return MeasurePart(name, label, "count", Completeness(column, where), True)
        raise _NotCompiled(f"{label}: count over an expression compiles only as count_if(predicate)")
    if isinstance(node, exp.CountIf):
        pred = node.this
        _plain(pred, label)
        return MeasurePart(name, label, "count_if", _compliance(pred, where, alias, schema), True)
    if isinstance(node, exp.Sum):
        arg = _unparen(node.this)
        if isinstance(arg, exp.Cast | exp.TryCast) and arg.to.this in INT_CASTS:
            inner = _unparen(arg.args["this"])
            if _is_predicate(inner, schema, alias):
                _plain(inner, label)
                return MeasurePart(name, label, "sum_bool", _compliance(inner, where, alias, schema), True)
        one_zero = _one_zero(arg)
        if one_zero is not None:
            _plain(one_zero, label)
            return MeasurePart(name, label, "sum_case", _compliance(one_zero, where, alias, schema), True)
        column = _column(arg, label, alias, schema)
        if column is None:
            raise _NotCompiled(
                f"{label}: sum compiles over a column or cast(<predicate> as int), not an expression"
            )
        dtype = _numeric(schema, column, label)
        integral = isinstance(dtype, INTEGRAL)
        return MeasurePart(name, label, "sum", Sum(column, where), integral)
    for cls, function, analyzer_cls in (
        (exp.Min, "min", Minimum),
        (exp.Max, "max", Maximum),
        (exp.Avg, "avg", Mean),
    ):
        if isinstance(node, cls):
            if node.expressions:
                raise _NotCompiled(f"{label}: {function} with several arguments")
            column = _column(_unparen(node.this), label, alias, schema)
            if column is None:
                raise _NotCompiled(f"{label}: {function} compiles over a plain column, not an expression")
            dtype = _numeric(schema, column, label)
            integral = function != "avg" and isinstance(dtype, INTEGRAL)
            return MeasurePart(name, label, function, analyzer_cls(column, where), integral)  # type: ignore[abstract]
    if isinstance(node, exp.ApproxDistinct):
        if node.args.get("accuracy") is not None:
            raise _NotCompiled(f"{label}: approx_count_distinct with a relative error argument")
        column = _column(_unparen(node.this), label, alias, schema)
        if column is None:
            raise _NotCompiled(f"{label}: approx_count_distinct compiles over a plain column")
        _require_column(schema, column, label)
        return MeasurePart(name, label, "approx_count_distinct", ApproxCountDistinct(column, where), True)
    if isinstance(node, exp.AggFunc):
        raise _NotCompiled(f"{label}: {node.key} is not one of the decomposable aggregates")
    if node.find(exp.AggFunc) is not None:
        raise _NotCompiled(f"{label}: an expression over aggregates (compile each aggregate on its own)")
    raise _NotCompiled(f"{label} is not an aggregate (a measure compiles when every item is one)")


def _one_zero(node: exp.Expression) -> exp.Expression | None:
    """``p`` of ``case when p then 1 else 0 end`` or ``if(p, 1, 0)``, else None."""

    def is_int(e: exp.Expression | None, value: str) -> bool:
        e = _unparen(e) if e is not None else None
        return isinstance(e, exp.Literal) and not e.is_string and e.name == value

    if isinstance(node, exp.Case) and node.this is None and len(node.args.get("ifs") or []) == 1:
        branch = node.args["ifs"][0]
        if is_int(branch.args.get("true"), "1") and is_int(node.args.get("default"), "0"):
            return _unparen(branch.this)
    if (
        isinstance(node, exp.If)
        and is_int(node.args.get("true"), "1")
        and is_int(node.args.get("false"), "0")
    ):
        return _unparen(node.this)
    return None


def _unparen(node: exp.Expression) -> exp.Expression:
    while isinstance(node, exp.Paren):
        node = node.this
    return node


def _column(
    node: exp.Expression | None, label: str, alias: str | None, schema: StructType | None
) -> str | None:
    """The plain column ``node`` names (``c``, ``data.c``, ``alias.c``), else None; spelled as
    in ``schema`` when known (Spark resolves names case-insensitively, analyzers exactly)."""
    node = _unparen(node) if node is not None else None
    if not isinstance(node, exp.Column) or node.is_star:
        return None
    qualifier = node.table
    if qualifier and qualifier.lower() not in {DATA, (alias or DATA).lower()}:
        raise _NotCompiled(f"{label}: column qualifier {qualifier!r} is not the data table")
    name = str(node.name)
    return _field_name(schema, name) or name


def _field(schema: StructType | None, column: str) -> DataType | None:
    if schema is None:
        return None
    for f in schema.fields:
        if f.name.lower() == column.lower():
            return f.dataType
    return None


def _require_column(schema: StructType | None, column: str, label: str) -> None:
    if schema is not None and _field(schema, column) is None:
        raise _NotCompiled(f"{label}: column {column!r} is not in the schema")


def _numeric(schema: StructType | None, column: str, label: str) -> DataType | None:
    if schema is None:
        return None
    dtype = _field(schema, column)
    if dtype is None:
        raise _NotCompiled(f"{label}: column {column!r} is not in the schema")
    if not isinstance(dtype, NumericType):
        raise _NotCompiled(f"{label}: column {column!r} is {dtype.simpleString()}, not numeric")
    return dtype


def _is_predicate(node: exp.Expression, schema: StructType | None, alias: str | None) -> bool:
    if isinstance(node, exp.Predicate | exp.Connector | exp.Not | exp.Boolean):
        return True
    if isinstance(node, exp.Column) and schema is not None:
        return isinstance(_field(schema, str(node.name)), BooleanType)
    return False


def _plain(node: exp.Expression, where: str) -> None:
    """A row-level expression: no aggregate, window function or subquery inside."""
    if node.find(exp.AggFunc) is not None:
        raise _NotCompiled(f"{where}: holds an aggregate")
    if node.find(exp.Window) is not None:
        raise _NotCompiled(f"{where}: holds a window function")
    if node.find(exp.Subquery, exp.Select) is not None:  # EXISTS (SELECT ...) holds a Select
        raise _NotCompiled(f"{where}: holds a subquery")


def _sql(node: exp.Expression, alias: str | None) -> str:
    """``node`` as Spark SQL over the data frame itself (table qualifiers dropped)."""
    bare = node.copy()
    for c in bare.find_all(exp.Column):
        if c.table and c.table.lower() in {DATA, (alias or DATA).lower()}:
            c.set("table", None)
    return bare.sql(DIALECT)


def _compliance(
    pred: exp.Expression, where: str | None, alias: str | None, schema: StructType | None
) -> Compliance:
    """``Compliance`` of ``pred``; its ``columns`` (checked before the pass) are the schema's
    columns the predicate names (not lambda variables); none without a schema."""
    predicate = _sql(_unparen(pred), alias)
    named = [_field_name(schema, str(c.name)) for c in pred.find_all(exp.Column)]
    columns = tuple(dict.fromkeys(n for n in named if n is not None))
    return Compliance(f"measure: {predicate}", predicate, columns, where)


def _field_name(schema: StructType | None, column: str) -> str | None:
    for f in schema.fields if schema is not None else ():
        if f.name.lower() == column.lower():
            return f.name
    return None
