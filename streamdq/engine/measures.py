"""Running SQL measures: compiled ones from analyzer states, the others as Spark SQL.

Where it runs: the driver, in ``verify`` (once, on the whole input) and in the streaming
handler (each microbatch). ``MeasureRunner(measures, schema)`` decides each measure's form
once (``streamdq.checks.measure_compile``):

* compiled measures add their analyzers to the plan (``analyzers()``): they join the fused
  pass or the small-batch Arrow job, cost no Spark job of their own, and are read from the
  states of any scope (``from_states``): the batch, a closed window, the total;
* the others run as Spark SQL on ``data`` (``run_sql``): the frame is registered as a temp
  view with a unique name (``_streamdq_data_<uuid>``) in the frame's own session, the query's
  ``data`` tables are renamed to it (sqlglot; ``data.col`` references keep working through a
  ``data`` alias), and the view is dropped afterwards, so concurrent queries and measures of
  other datasets never see each other's data. One Spark job per SQL measure (``take(2)``).

Runtime failures fail that measure only (``MeasureResult.failure``): no row, several rows, a
Spark error (first line of its message), a ``map`` with repeated column names. Nothing raises.

A ``map`` measure's keys are Spark's own output column names (``count(order)`` unless
aliased). For compiled measures they are asked of Spark once per input schema (analysis of
the query only, no job) by ``resolve_names``; without them the keys are the aliases or the
items' SQL text.

>>> from streamdq.checks.measure import Measure
>>> from streamdq.spark import get_spark
>>> df = get_spark().createDataFrame([(1,), (None,)], "col1 INT")
>>> runner = MeasureRunner([Measure("Null Count", "select sum(cast((col1 is null) as int)) from data",
...                                 "single_value")], df.schema)
>>> [r.value for r in runner.run_sql(df)], runner.forms[0].compiled
([], True)
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterable, Mapping
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql.types import StructType

from streamdq.analyzers.base import Analyzer
from streamdq.analyzers.state import State
from streamdq.checks.measure import Measure, MeasureResult
from streamdq.checks.measure_compile import MeasureForm, measure_form, shaped
from streamdq.checks.measure_sql import parse_query, runnable_sql


class MeasureRunner:
    """The measures of one dataset, each in its form (see module docstring)."""

    def __init__(self, measures: Iterable[Measure], schema: StructType | None = None) -> None:
        self.forms: list[MeasureForm] = [measure_form(m, schema) for m in measures]
        self._names: dict[str, list[str]] = {}  # map measure -> Spark's output names
        self._schemas: set[str] = set()  # input schemas already resolved

    def __bool__(self) -> bool:
        return bool(self.forms)

    def analyzers(self) -> list[Analyzer]:
        """The analyzers of the compiled measures (deduplicated)."""
        return list(dict.fromkeys(a for f in self.forms if f.compiled for a in f.analyzers()))

    def explain(self) -> list[tuple[str, str]]:
        """(measure name, which form it took and why) per measure."""
        return [(f.measure.name, f.explain()) for f in self.forms]

    # -- compiled --------------------------------------------------------------------
    @property
    def names_known(self) -> bool:
        """True when no compiled ``map`` measure still waits for Spark's column names."""
        return bool(self._schemas) or not any(
            f.compiled and f.measure.result_type == "map" for f in self.forms
        )

    def resolve_names(self, df: DataFrame) -> None:
        """Ask Spark (analysis only, no job) for the output names of the compiled ``map``
        measures on ``df``'s schema, once per schema; a query Spark rejects keeps the default
        names (the SQL form would fail the same way)."""
        todo = [f for f in self.forms if f.compiled and f.measure.result_type == "map"]
        schema = df.schema.json()
        if not todo or schema in self._schemas:
            return
        self._schemas.add(schema)
        with _data_view(df) as view:
            for f in todo:
                try:
                    names = df.sparkSession.sql(runnable_sql(parse_query(f.measure.sql), view)).columns
                except Exception:  # Spark rejects the query: the default names stay
                    continue
                self._names[f.measure.name] = list(names)

    def from_states(
        self,
        states: Mapping[Analyzer, State],
        *,
        scope: str,
        window: tuple[str, str] | None = None,
        failures: Mapping[Analyzer, str] | None = None,
    ) -> tuple[MeasureResult, ...]:
        """Every compiled measure's value from ``states`` (the states of one scope; a missing
        state reads as empty: a window without rows of it counts 0)."""
        return tuple(
            f.result(states, self._names.get(f.measure.name), scope=scope, window=window, failures=failures)
            for f in self.forms
            if f.compiled
        )

    # -- Spark SQL ---------------------------------------------------------------------
    def run_sql(self, df: DataFrame) -> tuple[MeasureResult, ...]:
        """The measures that did not compile, run as Spark SQL on ``df`` (batch scope)."""
        forms = [f for f in self.forms if not f.compiled]
        if not forms:
            return ()
        with _data_view(df) as view:
            return tuple(_run_one(df, f.measure, view) for f in forms)


class _data_view:
    """``df`` as a temp view with a unique name in its own session, dropped on exit."""

    def __init__(self, df: DataFrame) -> None:
        self.df = df
        self.name = f"_streamdq_data_{uuid.uuid4().hex}"

    def __enter__(self) -> str:
        self.df.createOrReplaceTempView(self.name)
        return self.name

    def __exit__(self, *exc: Any) -> None:
        with contextlib.suppress(Exception):  # a stopped session has dropped its views
            self.df.sparkSession.catalog.dropTempView(self.name)


def _run_one(df: DataFrame, measure: Measure, view: str) -> MeasureResult:
    def failed(reason: str) -> MeasureResult:
        return MeasureResult(measure.name, measure.result_type, None, f"measure {measure.name!r}: {reason}")

    try:
        query = df.sparkSession.sql(runnable_sql(parse_query(measure.sql), view))
        rows = query.take(2)
        names = query.columns
    except Exception as exc:  # Spark's analysis or execution error: this measure fails alone
        return failed(f"Spark SQL failed: {_first_line(exc)}")
    if not rows:
        return failed("the query returned no row; a measure must return exactly one")
    if len(rows) > 1:
        return failed("the query returned several rows; a measure must return exactly one")
    return shaped(measure, list(rows[0]), names)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def window_label(start: Any, end: Any) -> tuple[str, str]:
    """A window's ``(start, end)`` as ISO strings (``MeasureResult.window``)."""
    return (start.isoformat(), end.isoformat())
