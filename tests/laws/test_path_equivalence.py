"""Path equivalence: the small-batch Arrow path and the fused Spark passes give equal states.

Every registered analyzer (found through ``registered_analyzers``: a new analyzer without an
example here fails ``test_every_registered_analyzer_has_an_example``) runs on the same rows,
segmented by a group column (with a NULL group and a segment its ``where`` empties), through
``AnalysisPlan.run_segmented(path="fused")`` and ``path="arrow"``. Exact states must be equal
(data are integer-valued where floats are summed, so float sums are exact too; moments are
compared with a tight relative tolerance since the paths sum in different orders); KLL and HLL
states must give the same metric (at these sizes both sketches are exact). The hostile values
are in: NaN, +-Infinity (skipped by the statistics, counted by NonFinite), -0.0, NULLs, empty strings, a where-filter that keeps no row of a segment.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from pyspark.sql import functions as F

from streamdq.analyzers import (
    AggregationAnalyzer,
    ApproxCountDistinct,
    ApproxQuantile,
    ApproxQuantiles,
    ColumnCount,
    Completeness,
    Compliance,
    Correlation,
    CountDistinct,
    DataType,
    Distinctness,
    DuplicateRowCount,
    Entropy,
    ExactQuantile,
    Histogram,
    InterquartileRange,
    Kurtosis,
    Maximum,
    MaxLength,
    Mean,
    Minimum,
    MinLength,
    MutualInformation,
    NonFinite,
    PatternMatch,
    Range,
    RatioOfSums,
    Size,
    Skewness,
    StandardDeviation,
    Sum,
    Uniqueness,
    UniqueValueRatio,
    Variance,
    ZerosCount,
)
from streamdq.analyzers.base import Analyzer
from streamdq.analyzers.register import registered_analyzers
from streamdq.analyzers.row_aggregate import RowAggregate
from streamdq.engine.plan import AnalysisPlan

W = "i > 2"
EXAMPLES: dict[str, list[Analyzer]] = {
    "Aggregation": [  # the built-in aggregation functions (streamdq.aggregations)
        AggregationAnalyzer("discreteValuesHistogram", "s"),
        AggregationAnalyzer("discreteValuesHistogram", "x", where=W),
        AggregationAnalyzer("uniqueValues", "s", where=W),
        AggregationAnalyzer("average", "x"),
        AggregationAnalyzer("standardDeviation", "y", where=W),
        AggregationAnalyzer("median", "x"),
        AggregationAnalyzer("numericHistogram", "i", {"bins": 3}),
    ],
    "ApproxCountDistinct": [
        ApproxCountDistinct("s"),
        ApproxCountDistinct("i"),
        ApproxCountDistinct("x", where=W),
    ],
    "ApproxQuantile": [ApproxQuantile("x", 0.5), ApproxQuantile("i", 0.9, where=W)],
    "ApproxQuantiles": [
        ApproxQuantiles("x", (0.1, 0.5, 1.0)),
        ApproxQuantiles("y", (0.5,), relative_error=0.05),
    ],
    "ColumnCount": [ColumnCount()],
    "Completeness": [Completeness("s"), Completeness("x", where=W)],
    "Compliance": [Compliance("pos", "x >= 0", ("x",)), Compliance("len", "length(s) > 2", ("s",), where=W)],
    "Correlation": [Correlation("i", "x"), Correlation("i", "y", where=W)],
    "CountDistinct": [CountDistinct(("s",)), CountDistinct(("x",))],
    "DataType": [DataType("s"), DataType("x", where=W)],
    "Distinctness": [Distinctness(("s", "i"))],
    "DuplicateRowCount": [DuplicateRowCount(("s",)), DuplicateRowCount()],
    "Entropy": [Entropy("s"), Entropy("x", where=W)],
    "ExactQuantile": [ExactQuantile("x", 0.25), ExactQuantile("y", 0.5, where=W), ExactQuantile("i", 1.0)],
    "Histogram": [
        Histogram("s"),
        Histogram("x", where=W),
        Histogram("s", max_detail_bins=2, binning={"aa": "A", "NullValue": "missing"}, default_bin="rest"),
        Histogram("s", sum_column="i", where=W),  # Deequ's Sum(aggColumn): per-bin sums
        Histogram("x", sum_column="y", compute_frequencies_as_ratio=False),  # +-Infinity: not a long
    ],
    "InterquartileRange": [InterquartileRange("x"), InterquartileRange("i", where=W)],
    "Kurtosis": [Kurtosis("y")],
    "MaxLength": [MaxLength("s"), MaxLength("s", null_behavior="fail")],
    "Maximum": [Maximum("x"), Maximum("y", where=W)],
    "Mean": [Mean("y"), Mean("i", where=W)],
    "MinLength": [MinLength("s", null_behavior="empty_string")],
    "Minimum": [Minimum("x"), Minimum("y", where=W)],
    "MutualInformation": [MutualInformation(("s", "i"))],
    "NonFinite": [NonFinite("x"), NonFinite("y", where=W), NonFinite("i")],
    "PatternMatch": [PatternMatch("s", r"^a+$"), PatternMatch("s", "EMAIL", where=W)],
    "Range": [Range("x"), Range("y", where=W)],
    "RatioOfSums": [RatioOfSums("i", "y")],
    "Size": [Size(), Size(where=W)],
    "Skewness": [Skewness("y")],
    "StandardDeviation": [StandardDeviation("y"), StandardDeviation("x", where=W)],
    "Sum": [Sum("y"), Sum("i", where="s IS NOT NULL")],
    "UniqueValueRatio": [UniqueValueRatio(("s",))],
    "Uniqueness": [Uniqueness(("i",)), Uniqueness(("s",), where=W)],
    "Variance": [Variance("y")],
    "ZerosCount": [ZerosCount("x")],
}

NAN = float("nan")
INF = float("inf")
ROWS = [
    # g, i, x (hostile doubles), y (integer-valued), s
    (0, 1, 1.5, 2.0, "aa"),
    (0, 2, NAN, 4.0, "a@b.com"),
    (0, 3, -0.0, 4.0, ""),
    (0, 4, 0.0, None, None),
    (0, 5, 2.5, 10.0, "aa"),
    (1, 1, None, 1.0, "b"),
    (1, 2, 7.0, 3.0, "bbb"),
    (None, 6, 3.0, 5.0, "x@y.org"),
    (None, 7, NAN, 6.0, "x@y.org"),
    (None, 8, -4.0, 8.0, None),
    (1, 9, INF, 9.0, "c"),
    (1, 10, -INF, INF, "c"),
    (None, 11, 1e300, -INF, "d"),
]
SCHEMA = "g INT, i INT, x DOUBLE, y DOUBLE, s STRING"


def test_every_registered_analyzer_has_an_example() -> None:
    assert sorted(registered_analyzers()) == sorted(EXAMPLES)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return bool(a == b)


def _metric_value(analyzer: Analyzer, state: Any) -> Any:
    metric = analyzer.metric(state)
    return metric.value if metric.failure is None else ("failure", metric.failure)


@pytest.fixture(scope="module")
def both_paths(spark: Any) -> tuple[Any, Any, list[Analyzer]]:
    analyzers = [a for group in EXAMPLES.values() for a in group]
    df = spark.createDataFrame(ROWS, SCHEMA)  # two partitions (local[2])
    segment = [F.col("g")]
    extra = [RowAggregate("rows"), RowAggregate("max", (F.col("x"),))]
    plan = AnalysisPlan(analyzers, max_groups=100)
    fused = plan.run_segmented(df, segment, extra, path="fused")
    arrow = plan.run_segmented(df, segment, extra, path="arrow")
    return fused, arrow, analyzers


def test_the_arrow_path_ran_as_one_job(both_paths: Any) -> None:
    fused, arrow, _ = both_paths
    assert arrow.path == "arrow" and fused.path == "fused"
    assert arrow.jobs == 1
    assert fused.jobs > 1


def test_same_segments_and_extras(both_paths: Any) -> None:
    fused, arrow, _ = both_paths
    assert sorted(fused.segments, key=repr) == sorted(arrow.segments, key=repr)
    for key, row in fused.segments.items():
        assert _same(row.extra[0], arrow.segments[key].extra[0])
        assert _same(float(row.extra[1]), float(arrow.segments[key].extra[1]))


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_equal_states_per_segment(both_paths: Any, name: str) -> None:
    fused, arrow, _ = both_paths
    assert fused.failures == arrow.failures
    for key, row in fused.segments.items():
        other = arrow.segments[key].states
        for analyzer in EXAMPLES[name]:
            if analyzer in fused.failures:
                continue
            mine, theirs = row.states[analyzer], other[analyzer]
            inexact = ("KllState", "HllState", "MomentsState", "CoMomentsState")
            inexact += ("Average", "StandardDeviation", "Median", "NumericHistogram")  # moments, KLL inside
            exact = type(mine).__name__ not in inexact
            if exact:
                assert mine == theirs or mine.to_bytes() == theirs.to_bytes(), (analyzer, key)
            assert _same(_metric_value(analyzer, mine), _metric_value(analyzer, theirs)), (analyzer, key)


def test_fallback_to_fused_for_a_bad_predicate(spark: Any) -> None:
    """A where-filter that does not resolve fails the arrow job: the fused path isolates it."""
    df = spark.createDataFrame(ROWS, SCHEMA)
    bad = Completeness("s", where="no_such_column > 1")
    out = AnalysisPlan([Size(), bad]).run_segmented(df, [F.lit(1)], [RowAggregate("rows")], path="arrow")
    assert out.path == "fused"
    assert bad in out.failures
    assert Size().metric(out.segments[(1,)].states[Size()]).value == len(ROWS)
