"""The fused scan's aggregate columns are built once per (schema, analyzer) and reused
(``plan.scan_aggregations``): building them is all py4j round trips, paid at every ``verify``
and every fused microbatch otherwise."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from streamdq.analyzers import Mean
from streamdq.analyzers.basic_states import SumState
from streamdq.analyzers.row_aggregate import RowAggregate
from streamdq.analyzers.state import State
from streamdq.engine.plan import AnalysisPlan, scan_aggregations


@dataclass(frozen=True)
class CountingMean(Mean):
    """A Mean that counts how often its row aggregates are built."""

    built: ClassVar[list[str]] = []

    def row_aggregations(self, schema: StructType) -> list[RowAggregate]:
        CountingMean.built.append(schema.simpleString())
        return super().row_aggregations(schema)


@dataclass(frozen=True)
class OpaqueSum(Mean):
    """A scan analyzer with its own Spark aggregates (like a user aggregation)."""

    built: ClassVar[list[str]] = []

    def aggregations(self, schema: StructType) -> list[Column]:
        OpaqueSum.built.append(schema.simpleString())
        return [F.sum(F.col(self.column)).cast("double"), F.count(F.col(self.column))]

    def state_from(self, row: Sequence[Any], offset: int) -> State:
        return SumState(float(row[offset] or 0.0), int(row[offset + 1]))


def test_a_schema_builds_its_columns_once(spark):
    CountingMean.built.clear()
    analyzer = CountingMean("x")
    plan = AnalysisPlan([analyzer])
    first = spark.createDataFrame([(1.0,), (3.0,)], "x double")
    second = spark.createDataFrame([(10.0,)], "x double")
    assert analyzer.metric(plan.run(first).states[analyzer]).value == 2.0
    assert analyzer.metric(plan.run(second).states[analyzer]).value == 10.0
    assert CountingMean.built == ["struct<x:double>"]  # the second DataFrame reused them
    # another schema builds its own (a LONG column has no non-finite guard)
    longs = spark.createDataFrame([(4,), (6,)], "x long")
    assert analyzer.metric(AnalysisPlan([analyzer]).run(longs).states[analyzer]).value == 5.0
    assert CountingMean.built == ["struct<x:double>", "struct<x:bigint>"]
    assert scan_aggregations(second, [analyzer])[0][0] is scan_aggregations(first, [analyzer])[0][0]


def test_an_analyzer_with_its_own_aggregations_is_asked_every_time(spark):
    OpaqueSum.built.clear()
    analyzer = OpaqueSum("x")
    df = spark.createDataFrame([(1.0,), (5.0,)], "x double")
    for _ in range(2):
        assert analyzer.metric(AnalysisPlan([analyzer]).run(df).states[analyzer]).value == 3.0
    assert OpaqueSum.built == ["struct<x:double>"] * 2
