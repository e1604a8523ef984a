"""Histogram with Deequ's ``aggregateFunction = Sum(aggColumn)``: the value of a bin is the sum
of another column over its rows (``Histogram(column, sum_column=...)``).

Deequ's semantics: values cast to long, NULL values skipped, a bin whose values are all NULL
reads 0 and ranks last; ratio = bin sum / the column's sum over ALL rows (unfiltered);
ratios need an integral column. Both engine paths (the fused Spark grouping and the Arrow
small-batch path) run on the same rows; the checks' YAML reaches the analyzer too.
"""

from __future__ import annotations

from typing import Any

import pytest
from pyspark.sql import functions as F

from streamdq import analyze
from streamdq.analyzers import Histogram
from streamdq.analyzers.frequency import SampledFrequencies
from streamdq.analyzers.register import state_from_bytes
from streamdq.checks import Check, Level, verify
from streamdq.checks.spec import loads_suite
from streamdq.engine.plan import AnalysisPlan

ROWS = [
    # id, cat, amount, price
    (1, "a", 10, 1.9),
    (2, "a", 5, 2.5),
    (3, "b", None, 0.5),
    (4, None, 7, None),
    (5, "b", 1, 3.0),
    (6, "c", 20, 1.0),  # filtered out by WHERE
    (7, "d", None, 1.0),  # filtered out by WHERE
    (8, "e", None, 4.0),  # in scope, every value NULL: 0, ranked last
]
SCHEMA = "id INT, cat STRING, amount INT, price DOUBLE"
WHERE = "id NOT IN (6, 7)"


@pytest.fixture(scope="module")
def df(spark: Any) -> Any:
    return spark.createDataFrame(ROWS, SCHEMA)


def _metrics(df: Any, analyzers: list[Histogram], path: str) -> dict[Histogram, Any]:
    """The metric of each analyzer computed on ``path`` ("fused" or "arrow"), one segment."""
    plan = AnalysisPlan(analyzers, max_groups=100)
    out = plan.run_segmented(df, [F.lit(1)], path=path)
    assert out.path == path
    (row,) = out.segments.values()
    return {a: a.metric(row.states[a]) if a in row.states else out.failures[a] for a in analyzers}


def test_deequs_example_without_ratios(spark: Any) -> None:
    data = spark.createDataFrame(
        [("Electronics", 100), ("Electronics", 200), ("Furniture", 150), ("Electronics", 300),
         ("Furniture", 250), ("Cosmetics", 75)],
        "category STRING, sales INT",
    )  # fmt: skip
    h = Histogram("category", sum_column="sales", compute_frequencies_as_ratio=False)
    for path in ("fused", "arrow"):
        m = _metrics(data, [h], path)[h]
        assert m.ok and m.value["number_of_bins"] == 3
        assert {k: v["absolute"] for k, v in m.value["values"].items()} == {
            "Electronics": 600,
            "Furniture": 400,
            "Cosmetics": 75,
        }
        assert list(m.value["values"]) == ["Electronics", "Furniture", "Cosmetics"]
        assert m.value["values"]["Furniture"]["ratio"] == 400.0


@pytest.mark.parametrize("path", ["fused", "arrow"])
def test_ratios_over_the_unfiltered_sum_nulls_and_tail(df: Any, path: str) -> None:
    full = Histogram("cat", sum_column="amount", where=WHERE)
    top2 = Histogram("cat", sum_column="amount", where=WHERE, max_detail_bins=2)
    metrics = _metrics(df, [full, top2], path)
    total = 10 + 5 + 7 + 1 + 20  # every row's amount, the filtered ones included (Deequ's Sum.total)
    m = metrics[full]
    assert m.ok and m.entity == "Column" and m.instance == "cat"
    assert m.value["number_of_bins"] == 4  # a, b, NullValue, e
    assert m.value["values"] == {
        "a": {"absolute": 15, "ratio": 15 / total},
        "NullValue": {"absolute": 7, "ratio": 7 / total},  # the NULL key is a bin of its own
        "b": {"absolute": 1, "ratio": 1 / total},  # its NULL amount is skipped
        "e": {"absolute": 0, "ratio": 0.0},  # every amount NULL: 0, last
    }
    assert m.value["tail_count"] == 0
    shown = metrics[top2].value
    assert list(shown["values"]) == ["a", "NullValue"] and shown["tail_count"] == 1  # b's 1 and e's 0


def test_same_metric_from_analyze_and_after_a_merge(df: Any) -> None:
    h = Histogram("cat", sum_column="amount", where=WHERE)
    whole = analyze(df, [h])
    parts = [analyze(df.filter(cond), [h]) for cond in ("id <= 4", "id > 4")]
    merged = parts[0].states[h].merge(parts[1].states[h])
    assert merged == whole.states[h]
    assert h.metric(merged) == whole.metric(h)
    back = state_from_bytes(merged.to_bytes())
    assert back == merged and back.sums == merged.sums


def test_failures_where_deequ_fails(spark: Any, df: Any) -> None:
    double_ratio = Histogram("cat", sum_column="price")
    double_absolute = Histogram("cat", sum_column="price", compute_frequencies_as_ratio=False)
    not_numeric = Histogram("cat", sum_column="cat")
    missing = Histogram("cat", sum_column="nope")
    ctx = analyze(df, [double_ratio, double_absolute, not_numeric, missing])
    assert "integral" in (ctx.metric(double_ratio).failure or "")
    values = ctx.metric(double_absolute).value["values"]  # each price cast to long (truncated)
    assert values["a"]["absolute"] == 1 + 2 and values["e"]["absolute"] == 4
    assert "numeric" in (ctx.metric(not_numeric).failure or "")
    assert "does not exist" in (ctx.metric(missing).failure or "")
    h = Histogram("cat", sum_column="amount")
    empty = analyze(df.limit(0), [h]).metric(h)
    assert not empty.ok and empty.empty  # no value to divide by (Deequ: the total sum is NULL)
    all_null = analyze(df.filter("amount IS NULL"), [h]).metric(h)
    assert not all_null.ok and all_null.empty
    zero = analyze(spark.createDataFrame([("x", 0), ("y", 0)], "cat STRING, amount INT"), [h]).metric(h)
    assert not zero.ok and "is 0" in (zero.failure or "")


def test_bounded_form_keeps_the_heaviest_bins_within_their_bounds(spark: Any) -> None:
    # 200 bins; bin i sums i - 20 (negative sums too) over two rows: more bins than max_groups
    rows = [(f"k{i:03d}", v) for i in range(200) for v in (i - 20, 0)]
    data = spark.createDataFrame(rows, "cat STRING, amount LONG")
    h = Histogram("cat", sum_column="amount", max_detail_bins=3)
    total = sum(i - 20 for i in range(200))
    for state in (analyze(data, [h], max_groups=32).states[h], _arrow_state(data, h)):
        assert isinstance(state, SampledFrequencies) and state.sums is not None
        assert (state.sums.kept, state.sums.total) == (total, total)  # exact
        m = h.metric(state)
        assert m.approximate and list(m.value["values"]) == ["k199", "k198", "k197"]
        for key, entry in m.value["values"].items():
            truth = int(key[1:]) - 20
            assert entry["absolute"] <= truth <= entry["absolute"] + m.error_bound * total
        assert abs(m.value["number_of_bins"] - 200) <= m.extra["number_of_bins_bound"]
        assert state_from_bytes(state.to_bytes()) == state


def _arrow_state(data: Any, h: Histogram) -> Any:
    out = AnalysisPlan([h], max_groups=32).run_segmented(data, [F.lit(1)], path="arrow")
    (row,) = out.segments.values()
    return row.states[h]


def test_checks_yaml_and_builder_reach_the_sum(df: Any) -> None:
    suite = loads_suite(
        """
checks:
  - description: sales
    level: error
    constraints:
      - has_histogram_values:
          {column: cat, sum_column: amount, key: a, value: absolute, assertion: "== 15", where: "id NOT IN (6, 7)"}
"""
    )
    built = Check(Level.ERROR, "sales").has_histogram_values(
        "cat", "== 15", key="a", value="absolute", sum_column="amount", where=WHERE
    )
    (from_yaml,) = suite.checks
    assert from_yaml.constraints == built.constraints
    results = verify(df, [from_yaml, built]).constraint_results
    assert [r.status for r in results] == ["Success", "Success"]
    wrong = Check(Level.ERROR, "sales").has_histogram_values("cat", "== 15", key="a", value="absolute")
    assert verify(df, [wrong]).constraint_results[0].status == "Failure"  # a count, not a sum: 2
