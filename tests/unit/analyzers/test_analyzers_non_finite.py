"""The non-finite policy (docs/non-finite.md): NaN, +Infinity and -Infinity are counted by
NonFinite and skipped by every value analyzer exactly like NULL, on both engine paths, and
judged by the ``has_no_non_finite`` check kind.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from pyspark.sql import functions as F

from streamdq.analyzers import (
    ApproxQuantile,
    Correlation,
    InterquartileRange,
    Kurtosis,
    Maximum,
    Mean,
    Minimum,
    NonFinite,
    RatioOfSums,
    Skewness,
    StandardDeviation,
    Sum,
    Variance,
)
from streamdq.analyzers.row_aggregate import RowAggregate
from streamdq.checks.check import Check, Level
from streamdq.checks.spec import checks_from_spec
from streamdq.checks.verification import verify
from streamdq.engine.plan import AnalysisPlan
from tests.unit.analyzers.analyzer_testkit import metrics_of

NAN, INF = float("nan"), float("inf")
# x: hostile doubles, f: a FLOAT column, y: finite partner column, i: integers
HOSTILE = [
    (1.0, 1.0, 2.0, 1),
    (NAN, NAN, 3.0, 2),
    (INF, INF, 5.0, 3),
    (-INF, -INF, 7.0, 4),
    (4.0, 4.0, 11.0, 5),
    (None, None, 13.0, 6),
    (9.0, 9.0, 17.0, 7),
]
SCHEMA = "x DOUBLE, f FLOAT, y DOUBLE, i INT"


def _as_null(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    def clean(v: Any) -> Any:
        return None if isinstance(v, float) and not math.isfinite(v) else v

    return [tuple(clean(v) for v in r) for r in rows]


VALUE_ANALYZERS = [
    Sum("x"),
    Mean("x"),
    Minimum("x"),
    Maximum("x"),
    StandardDeviation("x"),
    Variance("x"),
    Skewness("x"),
    Kurtosis("x"),
    Correlation("x", "y"),
    RatioOfSums("x", "y"),
    RatioOfSums("y", "x"),
    ApproxQuantile("x", 0.5),
    ApproxQuantile("x", 0.0),  # -Infinity in the sketch would be the minimum
    ApproxQuantile("x", 1.0),  # +Infinity (or NaN) in the sketch would be the maximum
    ApproxQuantile("f", 1.0, where="i > 1"),
    InterquartileRange("x"),
    Sum("f"),
    Maximum("f"),
    Minimum("f", where="i > 1"),
]


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)
    return bool(a == b)


def test_value_analyzers_treat_non_finite_as_null(spark):
    hostile = spark.createDataFrame(HOSTILE, SCHEMA)
    nulled = spark.createDataFrame(_as_null(HOSTILE), SCHEMA)
    for got, want, analyzer in zip(
        metrics_of(hostile, *VALUE_ANALYZERS),
        metrics_of(nulled, *VALUE_ANALYZERS),
        VALUE_ANALYZERS,
        strict=True,
    ):
        assert got.ok and want.ok, (analyzer, got, want)
        assert math.isfinite(got.value), (analyzer, got.value)
        assert _same(got.value, want.value), (analyzer, got.value, want.value)
    s, mx, mn = metrics_of(hostile, Sum("x"), Maximum("x"), Minimum("x"))
    assert (s.value, mx.value, mn.value) == (14.0, 9.0, 1.0)


def test_the_sketch_input_is_arithmetic_not_a_case_when(spark):
    """A KLL sketch reads ``x + x * 0.0`` (NaN for a non-finite value, which the sketch skips),
    not ``finite_value``'s CASE WHEN: Spark evaluates a sketch aggregate's input row by row
    without generated code, where the CASE WHEN cost up to 1.3 s per 10M rows (bench/engine)."""
    schema = spark.createDataFrame([], SCHEMA).schema
    for analyzer in (ApproxQuantile("x", 0.5), InterquartileRange("f")):
        (aggregate,) = analyzer.row_aggregations(schema)
        assert aggregate.kind == "kll"
        assert "CASE WHEN" not in str(aggregate.inputs[0]), aggregate.inputs[0]
    (integral,) = ApproxQuantile("i", 0.5).row_aggregations(schema)
    assert str(integral.inputs[0]) == "Column<'CAST(i AS DOUBLE)'>"


def test_non_finite_count_per_column(spark):
    df = spark.createDataFrame(HOSTILE, SCHEMA)
    x, f, y, i, scoped = metrics_of(
        df, NonFinite("x"), NonFinite("f"), NonFinite("y"), NonFinite("i"), NonFinite("x", where="i >= 3")
    )
    assert (x.value, f.value, y.value, i.value, scoped.value) == (3.0, 3.0, 0.0, 0.0, 2.0)
    assert x.name == "NonFinite" and x.instance == "x"
    empty = metrics_of(spark.createDataFrame([], SCHEMA), NonFinite("x"))[0]
    assert empty.ok and empty.value == 0.0


def test_all_non_finite_is_an_empty_statistic_not_a_nan(spark):
    df = spark.createDataFrame([(NAN, 1.0, 1.0, 1), (INF, 1.0, 1.0, 2)], SCHEMA)
    s, n = metrics_of(df, Sum("x"), NonFinite("x"))
    assert not s.ok and s.empty  # nothing finite to sum: the same failure as an all-NULL column
    assert n.value == 2.0


def test_string_column_is_a_precondition_failure(spark):
    df = spark.createDataFrame([("a",)], "s STRING")
    (m,) = metrics_of(df, NonFinite("s"))
    assert not m.ok and "numeric" in (m.failure or "")


def test_both_paths_agree_on_hostile_values(spark):
    df = spark.createDataFrame(HOSTILE, SCHEMA)
    analyzers = [*VALUE_ANALYZERS, NonFinite("x"), NonFinite("f")]
    plan = AnalysisPlan(analyzers)
    segment, extra = [F.lit(1)], [RowAggregate("rows")]
    fused = plan.run_segmented(df, segment, extra, path="fused")
    arrow = plan.run_segmented(df, segment, extra, path="arrow")
    assert arrow.path == "arrow"
    for a in analyzers:
        mf = a.metric(fused.segments[(1,)].states[a])
        ma = a.metric(arrow.segments[(1,)].states[a])
        assert _same(mf.value, ma.value), (a, mf, ma)


@pytest.mark.parametrize(
    "rows, status",
    [([(1.0, 1.0, 1.0, 1), (2.0, 2.0, 2.0, 2)], "Success"), (HOSTILE, "Error")],
)
def test_has_no_non_finite_check(spark, rows, status):
    df = spark.createDataFrame(rows, SCHEMA)
    (check,) = checks_from_spec(
        {"checks": [{"description": "finite", "level": "error", "constraints": [{"has_no_non_finite": "x"}]}]}
    )
    builder = Check(Level.ERROR, "finite").add_constraint(
        "has_non_finite_count", column="x", assertion="<= 3"
    )
    result = verify(df, [check, builder])
    assert result.check_results[0].status == status
    assert result.check_results[1].status == "Success"
