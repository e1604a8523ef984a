"""Measures on a real Spark DataFrame: the seed's three measures through ``verify``, runtime
failures that fail one measure only, and compiled measures equal to Spark SQL's own answer on
the same rows (fused pass and small-batch Arrow path)."""

from __future__ import annotations

import math

import pytest
from pyspark.sql import functions as F

from streamdq.checks.measure import Measure
from streamdq.checks.measure_compile import measure_form
from streamdq.checks.measure_sql import parse_query
from streamdq.checks.spec import loads_suite
from streamdq.checks.verification import verify
from streamdq.engine.measures import MeasureRunner
from streamdq.engine.plan import AnalysisPlan

SEED = """
checks:
  - description: any rows
    constraints: [{has_size: {assertion: ">= 0"}}]
measures:
  - {name: Null Count, sql: "select sum(cast((`col1` is null) as int)) from data", result_type: single_value}
  - name: count vs count distinct
    sql: select count(`order`) as c, count(distinct `order`) as cd from data
    result_type: list
  - name: multiple values
    sql: select count(`order`) as c, count(distinct `order`) as cd from data
    result_type: map
"""

ROWS = [
    (1, "a", 2.5, True),
    (None, "a", 1.0, False),
    (3, "b", None, None),
    (None, None, 4.0, True),
    (7, "c", -1.5, True),
]
DDL = "col1 INT, `order` STRING, price DOUBLE, flag BOOLEAN"


@pytest.fixture(scope="module")
def df(spark):
    return spark.createDataFrame(ROWS, DDL)


def test_verify_computes_the_seeds_three_measures(df):
    suite = loads_suite(SEED)
    result = verify(df, suite.checks, measures=suite.measures)
    by_name = {r.name: r for r in result.measures}
    assert [r.name for r in result.measures] == [m.name for m in suite.measures]
    assert by_name["Null Count"].value == 2
    assert by_name["count vs count distinct"].value == (4, 3)
    assert by_name["multiple values"].value == {"c": 4, "cd": 3}
    assert all(r.ok and r.scope == "batch" for r in result.measures)
    # the compiled one rode in the one analysis: no SQL job of its own shows in its form
    assert measure_form(suite.measures[0], df.schema).compiled
    doc = result.to_dict()["measures"]
    assert doc[2] == {
        "name": "multiple values",
        "result_type": "map",
        "value": {"c": 4, "cd": 3},
        "scope": "batch",
    }
    assert "Null Count: 2" in result.render_text()


def test_a_measure_returning_no_row_or_several_fails_alone(df):
    measures = [
        Measure("none", "select count(*) from data group by col1 having count(*) > 100", "single_value"),
        Measure("several", "select col1 from data", "single_value"),
        Measure("broken", "select max(raise_error('boom')) from data", "single_value"),
        Measure("fine", "select max(col1) from data", "single_value"),
    ]
    result = verify(df, [], measures=measures)
    by_name = {r.name: r for r in result.measures}
    assert (
        by_name["none"].failure
        == "measure 'none': the query returned no row; a measure must return exactly one"
    )
    assert "returned several rows" in (by_name["several"].failure or "")
    assert "measure 'broken': Spark SQL failed: " in (by_name["broken"].failure or "")
    assert "boom" in (by_name["broken"].failure or "")
    assert by_name["fine"].ok and by_name["fine"].value == 7
    assert [r.value for r in result.measures[:3]] == [None, None, None]


EQUIVALENT = [
    "select count(*) from data",
    "select count(col1), count(`order`) from data",
    "select sum(cast((`col1` is null) as int)) from data",
    "select sum(cast(price > 1 as int)), count_if(flag) from data where col1 is not null",
    "select sum(col1), min(col1), max(col1) from data",
    "select sum(price), min(price), max(price), avg(price), avg(col1) from data d where d.flag",
    "select approx_count_distinct(`order`), approx_count_distinct(col1) from data",
    "select sum(col1), avg(price), count(*) from data where col1 > 100",  # nothing in scope: NULLs, 0
    # predicates and filters are re-rendered by sqlglot for Spark: the same rows must match
    "select count_if(`order` = \"a\"), count_if(`order` like 'a%'), count_if(`order` rlike '^[ab]$') from data",
    "select count_if(col1 in (1, 3)), sum(cast(col1 between 1 and 3 as int)), count_if(col1 <=> 7) from data",
    "select count(*), max(price) from data where not flag or `order` is null",
    "select sum(cast((price > 1 and coalesce(col1, 0) < 5) as int)) from data where length(`order`) = 1",
    "select sum(case when price > 1 then 1 else 0 end), sum(if(flag, 1, 0)) from data where col1 > 0",
    "select count(*) filter (where flag), sum(col1) filter (where price > 0), max(price) filter (where not flag)"
    " from data where col1 is not null",
    "select sum(case when price > 1 then 1 else 0 end) from data where col1 > 100",  # no row: NULL
    # Spark resolves names case-insensitively; a lambda's variable is not a column
    "select sum(COL1), max(Price), count_if(exists(array(col1, 2), t -> t > 2)) from data",
]


@pytest.fixture(scope="module")
def sql_answers(spark, df) -> list[list[object]]:
    """Spark SQL's own answer to each of ``EQUIVALENT``, in one query (each returns one row)."""
    joined = " cross join ".join(f"({sql}) q{i}" for i, sql in enumerate(EQUIVALENT))
    df.createOrReplaceTempView("data")
    try:
        row = list(spark.sql(f"select * from {joined}").collect()[0])
    finally:
        spark.catalog.dropTempView("data")
    out, at = [], 0
    for sql in EQUIVALENT:
        n = len(parse_query(sql).expressions)
        out.append(row[at : at + n])
        at += n
    assert at == len(row)
    return out


@pytest.mark.parametrize("path", ["fused", "arrow"])
def test_compiled_measures_equal_spark_sqls_answer_on_the_same_rows(df, sql_answers, path):
    measures = [Measure(f"m{i}", sql, "list") for i, sql in enumerate(EQUIVALENT)]
    runner = MeasureRunner(measures, df.schema)
    assert all(f.compiled for f in runner.forms), [f.reason for f in runner.forms if not f.compiled]
    plan = AnalysisPlan(runner.analyzers())
    out = plan.run_segmented(df, [F.lit(1)], path=path)
    assert out.path == path
    compiled = runner.from_states(out.segments[(1,)].states, scope="batch", failures=out.failures)
    for measure, got, want in zip(measures, compiled, sql_answers, strict=True):
        assert got.ok, got.failure
        assert len(got.value) == len(want)
        for g, w in zip(got.value, want, strict=True):
            if isinstance(w, float):
                assert isinstance(g, float) and math.isclose(g, w, rel_tol=1e-12), (measure.sql, g, w)
            else:
                assert g == w and type(g) is type(w), (measure.sql, g, w)


def test_a_measure_on_a_missing_column_is_a_config_error_before_any_job(spark, df):
    from streamdq.engine.plan import count_jobs
    from streamdq.errors import ConfigError

    bad = [Measure("amounts", "select sum(amount) from data", "single_value")]
    with count_jobs(spark) as jobs, pytest.raises(ConfigError) as info:
        verify(df, [], measures=bad)
    assert "measures[0].sql: measure 'amounts': column 'amount' does not exist" in str(info.value)
    assert jobs[0] == 0


def test_cli_verify_explains_each_measures_form_and_reports_them_in_json(tmp_path, spark, capsys):
    import json

    from streamdq.cli import main

    data = tmp_path / "orders.jsonl"
    data.write_text(
        "\n".join(
            json.dumps({"col1": c, "order": o}) for c, o in [(1, "a"), (None, "a"), (3, "b"), (None, None)]
        )
        + "\n"
    )
    checks = tmp_path / "dq.yaml"
    checks.write_text(SEED)
    assert main(["verify", "--data", str(data), "--checks", str(checks), "--explain"]) == 0
    out = capsys.readouterr().out
    assert "  Null Count: compiled (batch, window and total scopes): " in out
    assert "Compliance" in out
    assert "  multiple values: per-batch Spark SQL (batch scope only): count(DISTINCT `order`)" in out
    assert "count vs count distinct: [3, 2]" in out
    assert (
        main(["verify", "--data", str(data), "--checks", str(checks), "--format", "json", "--explain"]) == 0
    )
    doc = json.loads(capsys.readouterr().out)
    assert [m["value"] for m in doc["measures"]] == [2, [3, 2], {"c": 3, "cd": 2}]
    assert [e["name"] for e in doc["explain"]["measures"]] == [
        "Null Count",
        "count vs count distinct",
        "multiple values",
    ]
    checks.write_text(SEED.replace("count(`order`) as c", "count(`ordr`) as c", 1))
    assert main(["verify", "--data", str(data), "--checks", str(checks)]) == 2
    err = capsys.readouterr().err
    assert (
        f"{checks}: measures[1].sql: measure 'count vs count distinct': column 'ordr' does not exist" in err
    )
