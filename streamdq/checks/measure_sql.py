"""A measure's SQL, parsed and checked without Spark (sqlglot, Spark dialect).

Why sqlglot and not Spark's own parser: measures are checked when a check file loads, before
any Spark session exists (``streamdq verify --explain``, the pre-Spark config check of
``streamdq run``, unit tests). Spark's parser lives in the JVM; starting one costs seconds
and a config mistake must read the same with or without it. sqlglot parses the Spark dialect
in pure Python, gives a tree we can walk to decide whether a measure compiles into mergeable
analyzers, and resolves column names against a schema (``qualify``) the way Spark's analyzer
does for plain references. Where the two disagree on an exotic construct, Spark has the last
word: the query still runs in Spark, and a runtime error fails that measure alone.

* ``parse_query(sql)``: one SELECT statement, else ``MeasureSqlError`` (syntax error with its
  line and column, several statements, not a query, a table other than ``data``).
* ``unknown_columns(tree, columns)``: the reason a column reference does not resolve against
  ``columns`` (None when all resolve); CTEs, subqueries and aliases are followed.
* ``runnable_sql(tree, view)``: the SQL with every ``data`` table renamed to ``view``.

>>> tree = parse_query("select count(*) as n from data where x > 1")
>>> unknown_columns(tree, ["x"]) is None
True
>>> unknown_columns(tree, ["y"])
"column 'x' does not exist (columns: y)"
>>> runnable_sql(tree, "v_1")
'SELECT COUNT(*) AS n FROM v_1 AS data WHERE x > 1'
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import sqlglot
from sqlglot import exp
from sqlglot.errors import OptimizeError, ParseError
from sqlglot.optimizer.qualify import qualify

from streamdq.errors import StreamdqError

DIALECT = "spark"
DATA = "data"


class MeasureSqlError(StreamdqError, ValueError):
    """A measure's SQL is wrong (the message says what and where)."""


def parse_query(sql: str) -> exp.Query:
    """The one SELECT statement of ``sql``, reading only ``data`` (see module docstring)."""
    try:
        statements = [s for s in sqlglot.parse(sql, read=DIALECT) if s is not None]
    except ParseError as exc:
        raise MeasureSqlError(f"SQL syntax error: {_parse_message(exc)}") from None
    except sqlglot.errors.TokenError as exc:
        raise MeasureSqlError(f"SQL syntax error: {exc}") from None
    if len(statements) != 1:
        raise MeasureSqlError(f"expected one SELECT statement; got {len(statements)}")
    tree = statements[0]
    if not isinstance(tree, exp.Query):
        raise MeasureSqlError(f"expected a SELECT query; got a {tree.key.upper()} statement")
    ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
    for table in tree.find_all(exp.Table):
        name = table.name
        if not name:
            raise MeasureSqlError(f"reads {table.sql(DIALECT)!r}; a measure reads only the table `data`")
        if table.args.get("db") or table.args.get("catalog"):
            raise MeasureSqlError(
                f"reads table {table.sql(DIALECT)!r}; a measure reads only `data` (the data under validation)"
            )
        if name.lower() != DATA and name.lower() not in ctes:
            raise MeasureSqlError(
                f"reads table {name!r}; a measure reads only `data` (the data under validation)"
            )
    if not any(t.name.lower() == DATA for t in tree.find_all(exp.Table)):
        raise MeasureSqlError("reads no table; a measure reads `FROM data`")
    return tree


def _parse_message(exc: ParseError) -> str:
    errors = getattr(exc, "errors", None) or []
    if errors:
        e = errors[0]
        desc = re.sub(r"\x1b\[[0-9;]*m", "", str(e.get("description", "")))
        return f"{desc} (line {e.get('line')}, column {e.get('col')}, near {e.get('highlight')!r})"
    return re.sub(r"\x1b\[[0-9;]*m", "", str(exc)).splitlines()[0]


def unknown_columns(tree: exp.Query, columns: Sequence[str]) -> str | None:
    """Why a column reference of ``tree`` does not resolve against ``columns``; None if all do.

    Names compare case-insensitively, as Spark's default analyzer does."""
    schema: dict[str, object] = {DATA: {_quote(c): "string" for c in columns}}
    try:
        qualify(
            tree.copy(),
            schema=schema,
            dialect=DIALECT,
            validate_qualify_columns=True,
            quote_identifiers=False,
            identify=False,
        )
    except OptimizeError as exc:
        message = str(exc)
        found = re.search(r"Column '([^']*)' could not be resolved", message)
        listed = ", ".join(columns)
        if found:
            return f"column {found.group(1)!r} does not exist (columns: {listed})"
        return f"{message} (columns: {listed})"
    return None


def _quote(name: str) -> str:
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        return name.lower()
    return "`" + name.replace("`", "``") + "`"


def runnable_sql(tree: exp.Query, view: str) -> str:
    """``tree`` as Spark SQL with every table ``data`` (not a CTE of that name) renamed ``view``."""
    renamed = tree.copy()
    for table in renamed.find_all(exp.Table):
        if table.name.lower() == DATA:
            if not table.alias:  # keep `data.col` references valid
                table.set("alias", exp.TableAlias(this=exp.to_identifier(DATA)))
            table.set("this", exp.to_identifier(view))
    return renamed.sql(DIALECT)


def select_width(tree: exp.Query) -> int | None:
    """How many columns the query's SELECT list has; None when it holds a ``*``."""
    if not isinstance(tree, exp.Select):
        return None
    items = tree.expressions
    if any(isinstance(e, exp.Star) or (isinstance(e, exp.Column) and e.is_star) for e in items):
        return None
    return len(items)
