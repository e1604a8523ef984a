"""The Arrow path's one job reuses the JVM Seq of its columns across microbatches of one
schema (arrow_path._select): PySpark would build it anew per call, a py4j round trip per
column. The reuse must not change a result."""

from __future__ import annotations

from typing import Any

from pyspark.sql import functions as F

from streamdq.analyzers import Completeness, Maximum, Size
from streamdq.engine.plan import AnalysisPlan


def _run(plan: AnalysisPlan, df: Any, segment: list[Any]) -> dict[Any, list[float]]:
    out = plan.run_segmented(df, segment, path="arrow")
    assert out.path == "arrow"
    return {key: [a.metric(st).value for a, st in row.states.items()] for key, row in out.segments.items()}


def test_the_column_seq_is_built_once_per_layout_and_results_are_unchanged(spark):
    plan = AnalysisPlan([Size(), Completeness("s"), Maximum("x")])
    segment = [F.col("g")]
    first = spark.createDataFrame([(1, "a", 1.0), (1, None, 5.0), (2, "c", 3.0)], "g INT, s STRING, x DOUBLE")
    assert _run(plan, first, segment) == {(1,): [2.0, 0.5, 5.0], (2,): [1.0, 1.0, 3.0]}
    (program,) = plan._programs.values()
    (layout,) = program.layouts.values()
    seq = layout.java_columns
    assert seq is not None
    second = spark.createDataFrame([(2, None, -1.0), (3, "d", None)], "g INT, s STRING, x DOUBLE")
    assert _run(plan, second, segment) == {(2,): [1.0, 0.0, -1.0], (3,): [1.0, 1.0, None]}
    assert layout.java_columns is seq  # the same JVM Seq, not rebuilt
    assert len(program.layouts) == 1
