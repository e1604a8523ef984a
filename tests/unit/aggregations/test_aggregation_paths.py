"""Aggregations in the engine: the small-batch Arrow job and the fused Spark pass give the same
states, a Spark-only user class joins the fused ``agg``, an Arrow-only one ships its values in it,
and the one-job rule of the Arrow path holds with aggregations in the plan."""

from __future__ import annotations

from typing import Any

import pytest
from pyspark.sql import functions as F

from streamdq.analyzers import AggregationAnalyzer, Size
from streamdq.engine.plan import AnalysisPlan
from streamdq.testing.laws import close

ROWS = [
    (0, 200, "http://a.example/", 120.0),
    (0, 200, "http://b.example/", 80.0),
    (0, 404, None, None),
    (0, 500, "http://a.example/", float("nan")),
    (1, 200, "-", 3.5),
    (1, 301, "http://a.example/", 10.0),
    (None, 200, "http://c.example/", 7.0),
]
SCHEMA = "g INT, status INT, referrer STRING, bytes DOUBLE"
USER = "tests.unit.aggregations.user_aggs"


def _analyzers() -> list[AggregationAnalyzer]:
    return [
        AggregationAnalyzer("discreteValuesHistogram", "status"),
        AggregationAnalyzer("discreteValuesHistogram", "referrer", where="status = 200"),
        AggregationAnalyzer("uniqueValues", "referrer"),
        AggregationAnalyzer("average", "bytes"),
        AggregationAnalyzer("standardDeviation", "bytes"),
        AggregationAnalyzer("median", "bytes", {"k": 50}),
        AggregationAnalyzer("numericHistogram", "bytes", {"bins": 3}),
        AggregationAnalyzer(f"{USER}:WindowMax", "status"),
    ]


def _values(result: Any, analyzers: list[Any]) -> dict[Any, dict[Any, Any]]:
    out: dict[Any, dict[Any, Any]] = {}
    for key, seg in result.segments.items():
        out[key] = {a: a.metric(seg.states[a]).value for a in analyzers}
    return out


def test_arrow_and_fused_paths_give_the_same_metrics(spark: Any) -> None:
    df = spark.createDataFrame(ROWS, SCHEMA)
    analyzers = _analyzers()
    plan = AnalysisPlan([Size(), *analyzers])
    fused = plan.run_segmented(df, [F.col("g")], path="fused")
    arrow = plan.run_segmented(df, [F.col("g")], path="arrow")
    assert not fused.failures and not arrow.failures
    assert arrow.jobs == 1  # aggregations ride in the batch's one Spark job
    got, want = _values(arrow, analyzers), _values(fused, analyzers)
    assert got.keys() == want.keys() == {(0,), (1,), (None,)}
    for key in want:
        for a in analyzers:
            assert close(got[key][a], want[key][a]), (key, a, got[key][a], want[key][a])
    seg0 = want[(0,)]
    assert seg0[analyzers[0]] == {"200": 2, "404": 1, "500": 1}
    assert seg0[analyzers[1]] == {"http://a.example/": 1, "http://b.example/": 1}  # where status = 200
    assert seg0[analyzers[2]] == ["http://a.example/", "http://b.example/"]
    assert seg0[analyzers[3]] == 100.0  # NaN skipped like NULL
    assert seg0[analyzers[7]] == 500.0


def test_a_spark_only_aggregation_joins_the_fused_pass(spark: Any) -> None:
    df = spark.createDataFrame(ROWS, SCHEMA)
    total = AggregationAnalyzer(f"{USER}:SparkOnlyTotal", "status", where="g = 0")
    hist = AggregationAnalyzer("discreteValuesHistogram", "status")
    plan = AnalysisPlan([total, hist])
    fused = plan.run(df)
    # the user's Spark aggregates and the collect_list ride in the fused agg: no job of their own
    assert fused.jobs == AnalysisPlan([Size()]).run(df).jobs
    assert total.metric(fused.states[total]).value == {"total": 1304.0, "count": 4}
    assert total.metric(fused.states[total]).name == "sparkTotal"
    # the Arrow path cannot build it: the plan runs the fused path instead, with the same states
    arrow = plan.run_segmented(df, [F.lit(1)], path="arrow")
    assert arrow.segments[(1,)].states[total] == fused.states[total]
    assert hist.metric(arrow.segments[(1,)].states[hist]).value == {"200": 4, "301": 1, "404": 1, "500": 1}


def test_a_column_of_the_wrong_type_fails_that_aggregation_alone(spark: Any) -> None:
    df = spark.createDataFrame(ROWS, SCHEMA)
    bad = AggregationAnalyzer("average", "referrer")
    good = AggregationAnalyzer("average", "status")
    result = AnalysisPlan([bad, good]).run(df)
    assert "needs a numeric type" in result.failures[bad]
    assert good.metric(result.states[good]).value == pytest.approx(2005 / 7)


def test_no_value_in_scope_is_the_empty_state_on_both_paths(spark: Any) -> None:
    """A where-filter that keeps no row gives the class's empty state: it is never handed a
    typeless empty array (what collect_list's [] becomes)."""
    df = spark.createDataFrame(ROWS, SCHEMA)
    none = AggregationAnalyzer(f"{USER}:IntegerCount", "status", where="status > 1000")
    some = AggregationAnalyzer(f"{USER}:IntegerCount", "status")
    plan = AnalysisPlan([none, some])
    for path in ("fused", "arrow"):
        out = plan.run_segmented(df, [F.lit(1)], path=path)
        assert not out.failures, (path, out.failures)
        states = out.segments[(1,)].states
        assert (states[none].value({}), states[some].value({})) == (0, 7), path
