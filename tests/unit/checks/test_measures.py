"""Measures without Spark: the check-file format, load-time errors (syntax, tables, columns,
result types), which form each measure takes and why, and values read from analyzer states."""

from __future__ import annotations

import json

import pytest
from pyspark.sql.types import BooleanType, DoubleType, IntegerType, StringType, StructField, StructType

from streamdq.analyzers.basic_states import NumMatches, NumMatchesAndCount, SumState
from streamdq.checks.measure import Measure, MeasureResult
from streamdq.checks.measure_compile import measure_form
from streamdq.checks.measure_spec import measure_column_errors, measures_from_list
from streamdq.checks.measure_sql import parse_query, runnable_sql
from streamdq.checks.spec import loads_suite
from streamdq.errors import ConfigError

SCHEMA = StructType(
    [
        StructField("col1", IntegerType()),
        StructField("order", StringType()),
        StructField("price", DoubleType()),
        StructField("flag", BooleanType()),
    ]
)

SEED = """
dataset: orders
checks:
  - description: sizes
    constraints: [{has_size: {assertion: ">= 0"}}]
measures:
  - name: Null Count
    description: check null
    sql: select sum(cast((`col1` is null) as int)) from data
    result_type: single_value
  - name: count vs count distinct
    description: data uniq
    sql: select count(`order`) as c, count(distinct `order`) as cd from data
    result_type: list
  - name: multiple values
    sql: select count(`order`) as c, count(distinct `order`) as cd from data
    result_type: map
"""


def test_the_seeds_three_measures_load_beside_checks():
    suite = loads_suite(SEED, file="orders.yaml")
    assert [m.name for m in suite.measures] == ["Null Count", "count vs count distinct", "multiple values"]
    assert [m.result_type for m in suite.measures] == ["single_value", "list", "map"]
    assert suite.measures[0].description == "check null"
    assert len(suite.checks) == 1


def test_a_file_without_measures_has_none():
    assert loads_suite("checks: []\n").measures == ()


@pytest.mark.parametrize(
    ("entry", "key", "words"),
    [
        ({"name": "m", "sql": "selec count(*) from data"}, "measures[0].sql", "SQL syntax error"),
        ({"name": "m", "sql": "select count(* from data"}, "measures[0].sql", "SQL syntax error"),
        ({"name": "m", "sql": "select count(*) from orders"}, "measures[0].sql", "reads table 'orders'"),
        ({"name": "m", "sql": "select 1; select 2"}, "measures[0].sql", "one SELECT statement"),
        ({"name": "m", "sql": "insert into data values (1)"}, "measures[0].sql", "SELECT"),
        ({"name": "m", "sql": "select count(*) from data", "result_type": "table"}, "result_type", "one of"),
        (
            {"name": "m", "sql": "select 1, 2 from data", "result_type": "single_value"},
            "result_type",
            "selects 2",
        ),
        ({"name": "m", "sql": "select 1 from data", "typo": 1}, "measures[0].typo", "unknown key"),
        ({"sql": "select 1 from data"}, "measures[0].name", "measure name"),
    ],
)
def test_load_time_errors_name_the_file_the_key_and_the_measure(entry, key, words):
    text = json.dumps({"checks": [], "measures": [entry]})
    with pytest.raises(ConfigError) as info:
        loads_suite(text, file="dq.json")
    message = str(info.value)
    assert message.startswith("dq.json: "), message
    assert key in message and words in message, message
    if "name" in entry:
        assert "'m'" in message, message


def test_every_measure_mistake_is_reported_at_once_with_its_line():
    text = (
        SEED
        + "  - {name: bad, sql: 'select count( from data'}\n  - {name: Null Count, sql: 'select 1 from data'}\n"
    )
    with pytest.raises(ConfigError) as info:
        loads_suite(text, file="orders.yaml")
    lines = str(info.value).splitlines()
    assert len(lines) == 2, lines
    assert "measures[3].sql: measure 'bad': SQL syntax error" in lines[0] and "(line 18)" in lines[0]
    assert "measures[4].name" in lines[1] and "already used by measures[0]" in lines[1]


def test_unknown_columns_are_found_against_a_schema_without_spark():
    ms = measures_from_list(
        [
            {
                "name": "ok",
                "sql": "select count(`order`), max(d.col1) from data d where price > 0",
                "result_type": "list",
            },
            {"name": "cte", "sql": "with t as (select col1 as z from data) select max(z) from t"},
            {"name": "bad", "sql": "select sum(amount) from data", "result_type": "single_value"},
            {"name": "bad where", "sql": "select count(*) from data where colour = 'x'"},
        ]
    )
    errors = measure_column_errors(ms, SCHEMA.fieldNames(), file="orders.yaml")
    assert [e.key for e in errors] == ["measures[2].sql", "measures[3].sql"]
    assert str(errors[0]) == (
        "orders.yaml: measures[2].sql: measure 'bad': column 'amount' does not exist "
        "(columns: col1, order, price, flag)"
    )
    assert "'colour'" in str(errors[1])


def test_the_data_table_is_renamed_to_the_view_and_keeps_its_qualifier():
    tree = parse_query("select count(*) from data where data.col1 > 1")
    assert runnable_sql(tree, "v_9") == "SELECT COUNT(*) FROM v_9 AS data WHERE data.col1 > 1"
    aliased = parse_query("select count(*) from data d where d.col1 > 1")
    assert runnable_sql(aliased, "v_9") == "SELECT COUNT(*) FROM v_9 AS d WHERE d.col1 > 1"


@pytest.mark.parametrize(
    ("sql", "analyzers"),
    [
        ("select count(*) from data", ["Size"]),
        ("select count(1) from data where price > 1", ["Size"]),
        ("select count(`order`) from data", ["Completeness"]),
        ("select count_if(price > 3) from data", ["Compliance"]),
        ("select sum(cast((`col1` is null) as int)) from data", ["Compliance"]),
        ("select sum(cast(flag as int)) from data", ["Compliance"]),
        (
            "select sum(col1), min(price), max(col1), avg(price) from data",
            ["Sum", "Minimum", "Maximum", "Mean"],
        ),
        ("select approx_count_distinct(`order`) as d from data d2 where d2.flag", ["ApproxCountDistinct"]),
        (
            "select sum(case when price > 1 then 1 else 0 end), sum(if(flag, 1, 0)) from data",
            ["Compliance"] * 2,
        ),
        (
            "select count(*) filter (where flag), sum(col1) filter (where price > 0) from data",
            ["Size", "Sum"],
        ),
    ],
)
def test_decomposable_aggregates_compile_into_mergeable_analyzers(sql, analyzers):
    form = measure_form(Measure("m", sql, "list"), SCHEMA)
    assert form.compiled, form.reason
    assert [p.analyzer.NAME for p in form.parts] == analyzers
    assert form.explain().startswith("compiled (batch, window and total scopes): ")


def test_the_where_clause_becomes_every_analyzers_filter_without_qualifiers():
    form = measure_form(
        Measure("m", "select count(*), sum(d.col1) from data d where d.price > 0 and flag", "list"), SCHEMA
    )
    assert {p.analyzer.where for p in form.parts} == {"price > 0 AND flag"}


@pytest.mark.parametrize(
    ("sql", "reason"),
    [
        ("select count(`order`) as c, count(distinct `order`) as cd from data", "not mergeable"),
        ("select count(*) from data group by col1", "GROUP BY"),
        ("select count(*) from (select * from data)", "subquery in FROM"),
        ("with t as (select * from data) select count(*) from data", "WITH"),
        ("select count(*) from data where col1 in (select col1 from data)", "subquery"),
        ("select sum(col1 + 1) from data", "not an expression"),
        ("select max(`order`) from data", "not numeric"),
        ("select count(*) + 1 from data", "over aggregates"),
        ("select col1 from data", "not an aggregate"),
        ("select stddev(price) from data", "not one of the decomposable"),
        ("select count(*) from data a join data b on a.col1 = b.col1", "JOIN"),
        ("select count(*) from data tablesample (10 percent)", "SAMPLE"),
        ("select sum(case when price > 1 then 2 else 0 end) from data", "not an expression"),
        ("select count(distinct col1) filter (where flag) from data", "not mergeable"),
    ],
)
def test_anything_else_runs_as_spark_sql_per_batch_and_says_why(sql, reason):
    form = measure_form(Measure("m", sql, "list"), SCHEMA)
    assert not form.compiled
    assert reason in (form.reason or ""), form.reason
    assert form.explain().startswith("per-batch Spark SQL (batch scope only): ")


def test_values_come_from_the_states_with_spark_sqls_types_and_nulls():
    form = measure_form(
        Measure(
            "m",
            "select count(*) as n, sum(cast((col1 is null) as int)) as nulls, sum(col1) as s, avg(price) as a "
            "from data",
            "map",
        ),
        SCHEMA,
    )
    size, nulls, total, mean = (p.analyzer for p in form.parts)
    states = {
        size: NumMatches(4),
        nulls: NumMatchesAndCount(1, 4, 4),
        total: SumState(6.0, 3),
        mean: SumState(5.0, 2),
    }
    result = form.result(states)
    assert result.ok and result.value == {"n": 4, "nulls": 1, "s": 6, "a": 2.5}
    assert isinstance(result.value["s"], int)
    # an empty scope: count is 0, sums and averages are NULL (as Spark SQL's over no rows)
    empty = form.result({})
    assert empty.value == {"n": 0, "nulls": None, "s": None, "a": None}


def test_a_filter_clause_joins_the_where_of_its_aggregate():
    form = measure_form(
        Measure("m", "select count(*) filter (where flag) as n from data d where d.price > 0", "map"), SCHEMA
    )
    assert form.parts[0].analyzer.where == "(price > 0) AND (flag)"
    assert form.parts[0].label == "count(*) FILTER(WHERE flag)" and form.parts[0].alias == "n"


def test_a_failed_analyzer_fails_its_measure_naming_the_item():
    form = measure_form(Measure("m", "select sum(col1) from data", "single_value"), SCHEMA)
    result = form.result({}, failures={form.parts[0].analyzer: "column 'col1' does not exist"})
    assert not result.ok and result.value is None
    assert result.failure == "sum(col1): column 'col1' does not exist"


def test_measure_results_are_json_safe_and_round_trip():
    r = MeasureResult("counts", "list", (3, 2), scope="window", window=("2024-01-01T00:00:00+00:00", "x"))
    doc = r.to_json()
    assert json.loads(json.dumps(doc, allow_nan=False)) == doc
    assert MeasureResult.from_json(doc) == r
    assert MeasureResult("x", "single_value", float("nan")).to_json()["value"] is None


def test_the_modules_docstring_examples_run():
    import doctest

    from streamdq import measure_result
    from streamdq.checks import measure, measure_compile, measure_spec, measure_sql

    for module in (measure, measure_compile, measure_spec, measure_sql, measure_result):
        failed, attempted = doctest.testmod(module)
        assert attempted > 0 and failed == 0, module.__name__
