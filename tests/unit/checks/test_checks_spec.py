"""YAML/JSON check specs: exact error messages (file + path + expectation), round-trip, samples."""

from __future__ import annotations

from pathlib import Path

import pytest

from streamdq.checks import Check, Level, dump_checks, load_checks, load_suite, loads_suite, save_checks
from streamdq.checks.constraint import constraint_kinds
from streamdq.checks.kinds import make
from streamdq.errors import ConfigError

ROOT = Path(__file__).resolve().parents[3]


def every_kind() -> list[Check]:
    """One constraint of every built-in kind, with where/hint/scope and every assertion form."""
    c = (
        Check(Level.ERROR, "everything")
        .is_complete("id")
        .has_completeness("email", ">= 0.9", where="country = 'DE'", hint="emails are required")
        .are_complete(["id", "email"])
        .are_any_complete(["email", "phone"], ">= 0.5")
        .is_unique("id")
        .is_primary_key("id", "country")
        .has_uniqueness(["id"], "== 1")
        .has_distinctness("country", "< 0.5")
        .has_unique_value_ratio(["country"], {"between": [0, 1]})
        .has_number_of_distinct_values("country", "<= 5", max_bins=10)
        .has_histogram_values("country", ">= 0.1", key="DE", value="ratio")
        .has_entropy("country", "> 0")
        .has_mutual_information("country", "status", ">= 0")
        .has_approx_quantile("amount", 0.5, {"between": [1, 100]})
        .has_approx_count_distinct("id", "> 10")
        .has_min("amount", ">= 0")
        .has_max("amount", "<= 1000", scope="total")
        .has_mean("amount", "> 1", scope="window")
        .has_sum("amount", "> 0")
        .has_standard_deviation("amount", "< 100")
        .has_no_non_finite("amount")
        .has_non_finite_count("discount", "<= 2", scope="window")
        .has_min_length("email", ">= 3")
        .has_max_length("email", "<= 64", null_behavior="fail")
        .has_size("> 0")
        .has_range("amount", "<= 1000")
        .has_interquartile_range("amount", "< 50", scope="total")
        .has_exact_quantile("amount", 0.9, {"between": [0, 500]})
        .has_column_count("== 12")
        .has_variance("amount", "< 1e4", where="country = 'DE'")
        .has_skewness("amount", {"between": [-1, 1]})
        .has_kurtosis("amount", "< 3", scope="window")
        .has_zeros_count("discount", "<= 100")
        .has_duplicate_row_count("== 0", columns=["id"])
        .has_duplicate_row_count("== 0")
        .has_approx_quantile("amount", 0.9, "< 900", relative_error=0.05)
    )
    w = (
        Check(Level.WARNING, "everything else")
        .has_data_type("amount", "Numeric")
        .has_data_type("email", "String", ">= 0.99")
        .has_pattern("code", r"^[A-Z]{3}-\d+$", name="code format")
        .contains_email("email", ">= 0.9")
        .contains_url("site")
        .contains_credit_card_number("card", "== 0")
        .contains_social_security_number("ssn", "== 0")
        .has_correlation("amount", "discount", "> 0.5")
        .satisfies("amount >= discount", "amount covers discount", ">= 0.99", columns=["amount", "discount"])
        .is_non_negative("amount")
        .is_positive("quantity")
        .is_contained_in("status", ["new", "paid", "it's"])
        .is_contained_in("quantity", lower_bound=1, upper_bound=10, include_upper=False)
        .is_less_than("discount", "amount")
        .is_less_than_or_equal_to("discount", "amount")
        .is_greater_than("amount", "discount")
        .is_greater_than_or_equal_to("amount", "discount", ">= 0.9")
        .has_no_anomalies(make("Mean", column="amount"), {"type": "online_normal", "lower_factor": 3.0})
        .expression("not too big", 'metrics["Size"] < 1000000 && metrics["Mean(amount)"] > 0', scope="total")
        .aggregation("discreteValuesHistogram", "status")
        .aggregation("numericHistogram", "amount", {"bins": 5}, where="status = 'paid'", scope="window")
        .aggregation("average", "amount", assertion="< 100", hint="typical basket")
    )
    return [c, w]


def test_every_built_in_kind_is_covered_by_the_round_trip_fixture():
    used = {k.kind for check in every_kind() for k in check.constraints}
    builtin = {name for name in constraint_kinds() if not name.startswith("test_")}
    assert builtin == used


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_round_trip(fmt, tmp_path):
    checks = every_kind()
    text = dump_checks(checks, "orders", fmt=fmt)
    suite = loads_suite(text, file=f"x.{fmt}")
    assert suite.dataset == "orders"
    assert list(suite.checks) == checks
    assert dump_checks(list(suite.checks), "orders", fmt=fmt) == text
    path = tmp_path / f"checks.{fmt}"
    save_checks(path, checks, "orders")
    assert load_checks(path) == checks


def test_shorthand_scalar_is_the_first_parameter():
    suite = loads_suite("checks:\n- description: d\n  level: warning\n  constraints:\n  - is_unique: id\n")
    assert suite.checks[0] == Check(Level.WARNING, "d").is_unique("id")
    assert suite.dataset is None


def test_level_defaults_to_error():
    assert (
        loads_suite("checks:\n- description: d\n  constraints:\n  - is_complete: a\n").checks[0].level
        is Level.ERROR
    )


def test_callable_assertion_cannot_be_dumped():
    check = Check(Level.ERROR, "c").is_complete("a").has_size(lambda n: n > 3)
    with pytest.raises(ConfigError) as err:
        dump_checks([check])
    assert str(err.value).startswith("checks[0].constraints[1].has_size.assertion: custom assertion <lambda>")


ERRORS = [
    (
        "checks:\n- description: d\n  constraints:\n  - is_complete: id\n  - is_complet: {column: a}\n",
        "checks.yaml: checks[0].constraints[1]: unknown constraint 'is_complet'; did you mean 'is_complete'?",
    ),
    (
        "checks:\n- description: d\n  constraints:\n  - is_complete: {where: 'x > 1'}\n",
        "checks.yaml: checks[0].constraints[0].is_complete.column: missing required key: "
        "expected a column name (non-empty string)",
    ),
    (
        "checks:\n- description: d\n  constraints:\n  - is_complete: a\n  - has_mean: {column: a}\n"
        "  - has_completeness: {column: a, assertion: 'at least 0.9'}\n",
        "checks.yaml: checks[0].constraints[1].has_mean.assertion: missing required key: "
        'expected a comparison such as ">= 0.95" or {between: [lower, upper]}',
    ),
    (
        "checks:\n- description: d\n  constraints:\n  - has_completeness: {column: a, assertion: 'at least 0.9'}\n",
        "checks.yaml: checks[0].constraints[0].has_completeness.assertion: got 'at least 0.9'; "
        'expected a comparison such as "== 1", ">= 0.95", "< 10", a number (meaning == that number), '
        "or {between: [lower, upper]}",
    ),
    (
        "checks:\n- description: d\n  constraints:\n  - has_size: {assertion: {between: [10, 1]}}\n",
        "checks.yaml: checks[0].constraints[0].has_size.assertion.between: "
        "lower bound 10.0 is above upper bound 1.0; expected lower <= upper",
    ),
    (
        "checks:\n- description: d\n  constraints:\n  - is_complete: {column: a, hnt: x}\n",
        "checks.yaml: checks[0].constraints[0].is_complete.hnt: unknown key 'hnt' for is_complete; "
        "did you mean 'hint'? (keys: column, assertion, where, hint, scope)",
    ),
    (
        "checks:\n- description: d\n  level: fatal\n  constraints:\n  - is_complete: a\n",
        "checks.yaml: checks[0].level: got 'fatal'; expected 'error' or 'warning'",
    ),
    (
        "checks:\n- description: d\n  constraints:\n  - is_complete: {column: a, scope: hourly}\n",
        "checks.yaml: checks[0].constraints[0].is_complete.scope: got 'hourly'; expected one of batch, window, total",
    ),
    (
        "checks:\n- description: d\n  constraints:\n  - has_size: {assertion: >= 1}\n",
        "checks.yaml: line 4, column 27: invalid YAML: found character '>' that cannot start any token "
        '(quote assertions that start with ">" or "<", e.g. ">= 0.95")',
    ),
    (
        "dataset: x\nchecs: []\n",
        "checks.yaml: checs: unknown key; did you mean 'checks'? (expected keys: dataset, checks, measures, pass)",
    ),
    ("- a\n", "checks.yaml: got list; expected a mapping with keys 'dataset' (optional) and 'checks'"),
    (
        "dataset: x\n",
        "checks.yaml: checks: missing required key: expected a list of checks (fix: add a checks: list "
        "(see docs/checks.md))",
    ),
    (
        "checks:\n- description: d\n  constraints: []\n",
        "checks.yaml: checks[0].constraints: got []; expected a non-empty list of constraints such as "
        "- is_complete: {column: id}",
    ),
    (
        "checks:\n- description: d\n  constraints:\n  - {is_complete: a, is_unique: a}\n",
        "checks.yaml: checks[0].constraints[0]: got {'is_complete': 'a', 'is_unique': 'a'}; expected a mapping "
        "with exactly one constraint name, e.g. - is_complete: {column: id}",
    ),
    (
        "checks:\n- description: d\n  constraints:\n  - has_approx_quantile: {column: a, quantile: 1.5, assertion: '> 0'}\n",
        "checks.yaml: checks[0].constraints[0].has_approx_quantile.quantile: got 1.5; "
        "expected a number between 0 and 1 (the quantile, 0..1)",
    ),
    (
        "checks:\n- description: d\n  constraints:\n  - are_complete: {columns: []}\n",
        "checks.yaml: checks[0].constraints[0].are_complete.columns: got []; expected a non-empty list of column names",
    ),
    (
        "checks:\n- description: d\n  constraints:\n  - is_contained_in: {column: a, lower_bound: 3}\n",
        "checks.yaml: checks[0].constraints[0].is_contained_in.upper_bound: "
        "missing: a range needs both lower_bound and upper_bound (numbers)",
    ),
    (
        "checks:\n- description: d\n  constraints:\n  - is_contained_in: {column: a, values: [a, [b]]}\n",
        "checks.yaml: checks[0].constraints[0].is_contained_in.values: got ['a', ['b']]; "
        "expected a list of allowed values (strings or numbers) (allowed values)",
    ),
    (
        "checks:\n- description: d\n  constraints:\n  - has_data_type: {column: a, data_type: Float}\n",
        "checks.yaml: checks[0].constraints[0].has_data_type.data_type: got 'Float'; "
        "expected one of 'Null', 'Fractional', 'Integral', 'Boolean', 'String', 'Numeric'",
    ),
    (
        "checks:\n- description: d\n  constraints:\n  - has_histogram_values: {column: a, assertion: '> 0.1'}\n",
        "checks.yaml: checks[0].constraints[0].has_histogram_values.assertion: '> 0.1' needs a histogram key: "
        "expected key: <value> (or, in Python code, a callable receiving the whole distribution)",
    ),
    (
        "checks:\n- level: error\n  constraints:\n  - is_complete: a\n",
        "checks.yaml: checks[0].description: got None; expected a non-empty description (string)",
    ),
    (
        "checks:\n- description: d\n  constraints:\n  - has_no_anomalies: {metric: {column: a}, detector: {type: x}}\n",
        "checks.yaml: checks[0].constraints[0].has_no_anomalies.metric.analyzer: "
        "missing: expected an analyzer name such as Mean or Completeness",
    ),
    (
        "checks:\n- description: d\n  constraints:\n  - has_no_anomalies: {metric: {analyzer: Mean, column: a}, detector: {}}\n",
        "checks.yaml: checks[0].constraints[0].has_no_anomalies.detector.type: "
        "missing: expected the detector type, e.g. online_normal",
    ),
    (
        "checks:\n- description: d\n  constraints:\n"
        "  - has_no_anomalies: {metric: {analyzer: Mean, column: a}, detector: {type: online_normal}, "
        "assertion: '> 1'}\n",
        "checks.yaml: checks[0].constraints[0].has_no_anomalies.assertion: has_no_anomalies takes no assertion",
    ),
]


# the YAML line of the offending node (or of its nearest parent), appended to each message
ERROR_LINES = [5, 4, 5, 4, 4, 4, 3, 4, None, 2, None, None, 3, 4, 4, 4, 4, 4, 4, 4, 2, 4, 4, 4]


@pytest.mark.parametrize(
    ("text", "message", "line"), [(t, m, n) for (t, m), n in zip(ERRORS, ERROR_LINES, strict=True)]
)
def test_errors_name_file_path_line_and_expectation(text, message, line):
    with pytest.raises(ConfigError) as err:
        loads_suite(text, file="checks.yaml")
    # every mistake is reported (one line each); the first one is the case's
    assert str(err.value).splitlines()[0] == (message if line is None else f"{message} (line {line})")


@pytest.mark.parametrize(
    ("detector", "key"),
    [
        ("{type: online_normal, lower_facter: 3}", "detector.lower_facter"),
        ("{type: online_normal, min_points: -1}", "detector.min_points"),
        ("{type: no_such_detector}", "detector"),
    ],
)
def test_a_bad_detector_spec_fails_at_load_time_naming_its_key(detector, key):
    # it used to load, and fail as "can't evaluate" at every judgement of the stream
    text = (
        "checks:\n- description: d\n  constraints:\n"
        f"  - has_no_anomalies: {{metric: {{analyzer: Mean, column: a}}, detector: {detector}}}\n"
    )
    with pytest.raises(ConfigError) as err:
        loads_suite(text, file="checks.yaml")
    assert err.value.key.startswith(f"checks[0].constraints[0].has_no_anomalies.{key}"), err.value.key


def test_line_of_finds_nested_nodes_and_nearest_parent():
    from streamdq.checks.spec import line_of

    text = (
        "checks:\n- description: d\n  constraints:\n  - is_complete: a\n  - has_size:\n      assertion: x\n"
    )
    assert line_of(text, "checks[0].constraints[1].has_size.assertion") == 6
    assert line_of(text, "checks[0].constraints[1].has_size.missing") == 5
    assert line_of(text, "checks[0].constraints[0]") == 4
    assert line_of(text, "") is None


def test_exponent_numbers_without_a_dot_are_numbers():
    # YAML 1.1 resolves 1e-3 (no dot) to a string; numbers and assertions accept it anyway
    text = "checks:\n- description: d\n  constraints:\n  - is_contained_in: {column: x, lower_bound: 1e-3, upper_bound: 2e3}\n  - has_sum: {column: x, assertion: 1e3}\n"
    check = loads_suite(text).checks[0]
    expected = (
        Check(Level.ERROR, "d")
        .is_contained_in("x", lower_bound=0.001, upper_bound=2000.0)
        .has_sum("x", "== 1000")
    )
    assert check == expected
    json_text = '{"checks": [{"description": "d", "constraints": [{"has_sum": {"column": "x", "assertion": {"between": [5e-324, 1e300]}}}]}]}'
    assert loads_suite(json_text).checks[0] == Check(Level.ERROR, "d").has_sum(
        "x", {"between": [5e-324, 1e300]}
    )


def test_json_files_are_strict_json(tmp_path):
    good = tmp_path / "c.json"
    good.write_text('{\n\t"checks": [{"description": "d", "constraints": [{"is_complete": "id"}]}]\n}\n')
    assert load_checks(good) == [Check(Level.ERROR, "d").is_complete("id")]
    bad = tmp_path / "bad.json"
    bad.write_text('{"checks": [\n  {"description": "d",}\n]}')
    with pytest.raises(ConfigError) as err:
        load_checks(bad)
    assert (
        str(err.value)
        == f"{bad}: line 2, column 23: invalid JSON: Expecting property name enclosed in double quotes"
    )


def test_missing_file_names_it(tmp_path):
    missing = tmp_path / "nope.yaml"
    with pytest.raises(ConfigError) as err:
        load_suite(missing)
    assert str(err.value) == f"{missing}: cannot read the checks file: No such file or directory"


def test_sample_checks_are_valid_and_packaged_copy_is_identical():
    sample = ROOT / "examples" / "checks.yaml"
    packaged = ROOT / "streamdq" / "examples" / "checks.yaml"
    assert sample.read_text() == packaged.read_text()
    suite = load_suite(sample)
    assert suite.dataset == "orders"
    assert [c.level for c in suite.checks] == [Level.ERROR, Level.WARNING]


def test_docs_example_is_valid():
    text = (ROOT / "docs" / "checks.md").read_text()
    block = text.split("```yaml\n", 1)[1].split("```", 1)[0]
    suite = loads_suite(block, file="docs/checks.md")
    kinds = {c.kind for check in suite.checks for c in check.constraints}
    assert len(kinds) >= 15
