"""Expression checks (CEL): sandbox at load time, bounded evaluation, runtime failures as results,
metric keys, history references, and the ``expression`` kind in check files."""

from __future__ import annotations

import pytest

from streamdq.checks import Check, Level, loads_suite
from streamdq.checks.expression import (
    MAX_HISTORY,
    MAX_LENGTH,
    ExpressionError,
    HistoryRef,
    compile_expression,
    evaluate_expression,
)
from streamdq.checks.expression_kind import expression_history_refs, metric_key
from streamdq.checks.kinds import make
from streamdq.checks.measure import MeasureResult
from streamdq.errors import ConfigError

SEED_MEASURES = {
    "Null Count": MeasureResult("Null Count", "single_value", 100),
    "count vs count distinct": MeasureResult("count vs count distinct", "list", (100, 10)),
    "multiple values": MeasureResult("multiple values", "map", {"c": 100, "cd": 10}),
}


# -- the sandbox: reaching outside is a load-time error ----------------------------------------


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('open("/etc/passwd") == ""', "unknown function open()"),
        ('size(read("/etc/passwd")) > 0', "unknown function read()"),
        ('"x".system() == 0', "unknown function system()"),
        ('os.environ["HOME"] == ""', "unknown name 'os'"),
        ('env["HOME"] == ""', "unknown name 'env'"),
        ('environ.HOME == ""', "unknown name 'environ'"),
        ('__import__("os") == null', "unknown function __import__()"),
        ("measures.__class__ == null", "field '__class__'"),
        ('measures["a"].__globals__ == null', "field '__globals__'"),
        ("measures._private == 1", "field '_private'"),
        ('java.io.File{path: "f"} == null', "message construction"),
        ("new java.io.File('file').delete()", "syntax error"),  # the seed's JEXL example
        ("Foo{a: 1} == null", "message construction"),
        ("google.protobuf.Int32Value == null", "unknown name 'google'"),
    ],
)
def test_reaching_files_the_environment_or_host_attributes_is_a_load_time_error(text, problem):
    with pytest.raises(ExpressionError, match=problem.replace("(", r"\(").replace(")", r"\)")):
        compile_expression(text)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("1 +", "syntax error"),
        ('measures["a" == 1', "syntax error"),
        ("(" * 30 + "true" + ")" * 30, "nests deeper than"),
        ("true && " * (MAX_LENGTH // 8) + "true", "characters long"),
        ("[1, 2].all(a, [3].exists(b, a == b))", "comprehension inside a comprehension"),
        ('previous_values("x", measures["n"]) == []', "arguments must be literals"),
        (f'previous_values("x", {MAX_HISTORY + 1}) == []', "n must be an integer from 1"),
        ('previous_values("x") == []', "expected previous_values"),
        ("previous(1) == 1", "expected previous"),
    ],
)
def test_syntax_limits_and_history_arguments_are_load_time_errors(text, problem):
    with pytest.raises(ExpressionError, match=problem):
        compile_expression(text)


def test_a_check_file_names_the_file_the_key_and_the_check_of_a_bad_expression():
    text = """checks:
  - description: orders
    constraints:
      - is_complete: {column: id}
      - expression: {name: peek, expression: 'open("/etc/passwd") == ""'}
"""
    with pytest.raises(ConfigError) as err:
        loads_suite(text, file="orders.yaml")
    message = str(err.value)
    assert message.startswith(
        "orders.yaml: checks[0].constraints[1].expression.expression: expression 'peek':"
    )
    assert "unknown function open()" in message and "(line 5)" in message


def test_the_flat_kind_form_is_the_same_constraint():
    flat = loads_suite(
        "checks:\n  - description: d\n    constraints:\n"
        "      - {kind: expression, name: n, expression: 'metrics[\"Size\"] > 0'}\n"
    )
    nested = loads_suite(
        "checks:\n  - description: d\n    constraints:\n"
        "      - expression: {name: n, expression: 'metrics[\"Size\"] > 0'}\n"
    )
    assert flat.checks == nested.checks
    assert flat.checks[0].constraints[0].kind == "expression"


def test_an_expression_takes_no_where_or_assertion():
    with pytest.raises(ConfigError, match="takes no where"):
        Check(Level.ERROR, "d").expression("n", "true", where="x > 0")
    with pytest.raises(ConfigError, match="takes no assertion"):
        Check(Level.ERROR, "d").add_constraint("expression", name="n", expression="true", assertion="> 1")


# -- evaluation ---------------------------------------------------------------------------------


def seed_check() -> Check:
    return (
        Check(Level.ERROR, "seed")
        .expression("no null value", 'measures["Null Count"] == 0')
        .expression("count bigger than 50", 'measures["count vs count distinct"][0] > 50')
        .expression("count > 50 in another way", 'measures["multiple values"]["c"] > 50')
        .expression(
            "all order is unique", 'measures["multiple values"]["c"] == measures["multiple values"]["cd"]'
        )
    )


def test_the_seed_checks_judge_the_seed_measures():
    result = seed_check().evaluate({}, scope=None, context={"measures": SEED_MEASURES})
    outcome = {r.constraint.split("'")[1]: not r.failed for r in result.constraint_results}
    assert outcome == {
        "no null value": False,
        "count bigger than 50": True,
        "count > 50 in another way": True,
        "all order is unique": False,
    }
    assert all(r.metric is None for r in result.constraint_results)  # an expression judges no analyzer
    assert result.status == "Error"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('measures["missing"] == 1', "no such key 'missing'"),
        ('measures["missing"]["c"] + 1 > 1', "no such key 'missing'"),
        ('!(measures["missing"]["c"] > 1)', "no such key 'missing'"),
        ('measures["multiple values"]["zz"] == 1', "no such key 'zz'"),
        (
            'measures["multiple values"] > 1',
            "type error: found no matching overload for > applied to '(map, int)'",
        ),
        ('measures["Null Count"]', "the expression gave int"),
        ('measures["Null Count"] / 0 == 1', "divide by zero"),
        ('measures["Null Count"] + "x" == 1', "type error"),
        ('measures["count vs count distinct"][7] == 1', "list index out of range"),
    ],
)
def test_runtime_errors_are_failed_checks_with_the_reason_never_exceptions(text, reason):
    check = Check(Level.WARNING, "c").expression("e", text)
    result = check.evaluate({}, scope=None, context={"measures": SEED_MEASURES})
    (r,) = result.constraint_results
    assert r.status == "Failure"
    assert r.message is not None and r.message.startswith("e: ") and reason in r.message


def test_a_failed_measure_fails_the_expression_with_its_reason():
    measures = {"Null Count": MeasureResult("Null Count", "single_value", None, failure="returned 2 rows")}
    check = Check(Level.ERROR, "c").expression("e", 'measures["Null Count"] == 0')
    (r,) = check.evaluate({}, scope=None, context={"measures": measures}).constraint_results
    assert r.failed and "measure failed: returned 2 rows" in (r.message or "")


def test_metrics_are_keyed_like_the_console_and_compare_across_int_and_double():
    size, complete, mean_where = (
        make("Size"),
        make("Completeness", column="email"),
        make("Mean", column="amount", where="amount > 0"),
    )
    quantile = make("ApproxQuantile", column="amount", quantile=0.5)
    assert metric_key(size) == "Size"
    assert metric_key(complete) == "Completeness(email)"
    assert metric_key(mean_where) == "Mean(amount where amount > 0)"
    assert metric_key(quantile).startswith("ApproxQuantile(amount, ") and "quantile=0.5" in metric_key(
        quantile
    )
    metrics = {
        size: size.ok(100.0),
        complete: complete.ok(0.95),
        mean_where: mean_where.failed("column 'amount' does not exist"),
    }
    ok = Check(Level.ERROR, "c").expression(
        "e", 'metrics["Size"] == 100 && metrics["Completeness(email)"] >= 0.9 && metrics["Size"] > 99.5'
    )
    (r,) = ok.evaluate(metrics, scope=None).constraint_results
    assert r.status == "Success", r.message
    bad = Check(Level.ERROR, "c").expression("e", 'metrics["Mean(amount where amount > 0)"] > 0')
    (r,) = bad.evaluate(metrics, scope=None).constraint_results
    assert r.failed and "metric failed: column 'amount' does not exist" in (r.message or "")


def test_history_is_prefetched_oldest_first_and_previous_is_the_last_value():
    e = compile_expression(
        'previous("Null Count") == 3 && previous_values("Null Count", 2) == [2, 3] '
        '&& previous_values("other", "row_count", 3).all(x, x > 0)'
    )
    assert e.history_refs == (
        HistoryRef(None, "Null Count", 1),
        HistoryRef(None, "Null Count", 2),
        HistoryRef("other", "row_count", 3),
    )
    history = {
        HistoryRef(None, "Null Count", 1): [3],
        HistoryRef(None, "Null Count", 2): [2, 3],
        HistoryRef("other", "row_count", 3): [10.0, 12.0, 11.0],
    }
    assert evaluate_expression(e, history=history) == (True, None)
    history[HistoryRef("other", "row_count", 3)] = [10.0, 0.0]
    assert evaluate_expression(e, history=history) == (False, None)
    empty = compile_expression('previous("x") == null && size(previous_values("x", 5)) == 0')
    assert evaluate_expression(
        empty, history={HistoryRef(None, "x", 1): [], HistoryRef(None, "x", 5): []}
    ) == (True, None)
    passed, reason = evaluate_expression(empty)
    assert not passed and reason == "history of 'x' was not prefetched"


def test_history_refs_of_checks_are_collected_per_scope():
    check = (
        Check(Level.ERROR, "c")
        .expression("a", 'previous("Size") >= 0', scope="batch")
        .expression("b", 'size(previous_values("Size", 5)) >= 0', scope="window")
    )
    assert expression_history_refs([check], "batch") == [HistoryRef(None, "Size", 1)]
    assert expression_history_refs([check]) == [HistoryRef(None, "Size", 1), HistoryRef(None, "Size", 5)]


def test_one_comprehension_over_the_largest_history_stays_bounded():
    import time

    e = compile_expression(f'previous_values("x", {MAX_HISTORY}).all(v, v >= 0 && v < 1000000)')
    started = time.perf_counter()
    assert evaluate_expression(e, history={HistoryRef(None, "x", MAX_HISTORY): list(range(MAX_HISTORY))}) == (
        True,
        None,
    )
    assert time.perf_counter() - started < 5.0  # generous: ~0.2 s; nested comprehensions are refused


# -- load-time references -------------------------------------------------------------------


def test_unknown_measure_and_metric_keys_are_load_time_errors_with_suggestions():
    text = """measures:
  - {name: Null Count, sql: "select count(*) from data", result_type: single_value}
checks:
  - description: orders
    constraints:
      - is_complete: {column: email}
      - expression: {name: a, expression: 'measures["Null Cnt"] == 0'}
      - expression: {name: b, expression: 'metrics["Completeness(emial)"] > 0.5'}
"""
    with pytest.raises(ConfigError) as err:
        loads_suite(text, file="f.yaml")
    message = str(err.value)
    assert "measures['Null Cnt'] is not a measure of this file" in message
    assert "did you mean 'Null Count'?" in message
    assert "metrics['Completeness(emial)'] is not a metric of the plan" in message
    assert "did you mean 'Completeness(email)'?" in message


def test_expression_names_must_not_collide():
    text = """checks:
  - description: orders
    constraints:
      - is_complete: {column: email}
  - description: more
    constraints:
      - expression: {name: orders, expression: 'true'}
      - expression: {name: x, expression: 'true'}
      - expression: {name: x, expression: 'false'}
"""
    with pytest.raises(ConfigError) as err:
        loads_suite(text, file="f.yaml")
    assert "two checks are named 'orders'" in str(err.value)
    assert "two checks are named 'x'" in str(err.value)


def test_the_activation_holds_plain_data_never_host_objects():
    import decimal
    from datetime import date

    class Host:
        secret = "x"

        def __str__(self) -> str:
            return "host"

    e = compile_expression(
        'measures["d"] == 1.5 && measures["i"] == 2 && measures["day"] == "2026-11-26" && measures["o"] == "host"'
    )
    measures = {
        "d": decimal.Decimal("1.5"),
        "i": decimal.Decimal("2"),
        "day": date(2026, 11, 26),
        "o": Host(),
    }
    assert evaluate_expression(e, measures=measures) == (True, None)
    # the host object arrived as its text: its attributes are not there to read
    passed, reason = evaluate_expression(compile_expression('measures["o"].secret == "x"'), measures=measures)
    assert not passed and "does not support field selection" in (reason or "")


def test_null_equals_only_null_so_a_first_batch_guard_works():
    e = compile_expression('previous("Size") == null || metrics["Size"] >= previous("Size") / 2.0')
    ref = HistoryRef(None, "Size", 1)
    assert evaluate_expression(e, metrics={"Size": 10.0}, history={ref: []}) == (True, None)
    assert evaluate_expression(e, metrics={"Size": 10.0}, history={ref: [8.0]}) == (True, None)
    assert evaluate_expression(e, metrics={"Size": 3.0}, history={ref: [8.0]}) == (False, None)
    assert evaluate_expression(compile_expression('measures["m"] != null'), measures={"m": [1]}) == (
        True,
        None,
    )
