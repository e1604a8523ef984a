"""has_range, has_interquartile_range, has_exact_quantile, has_column_count, has_variance,
has_skewness, has_kurtosis, has_zeros_count, has_duplicate_row_count and
has_approx_quantile's relative_error: Python and YAML, judged on Deequ's reference values."""

from __future__ import annotations

import pytest

from streamdq.checks import Check, Level
from streamdq.checks.spec import dump_checks, loads_suite
from streamdq.checks.verification import verify
from streamdq.errors import ConfigError

YAML = """
checks:
  - description: deequ vocabulary
    constraints:
      - has_range: {column: x, assertion: "== 5"}
      - has_interquartile_range: {column: x, assertion: "== 2.5"}
      - has_exact_quantile: {column: x, quantile: 0.5, assertion: "== 3.5"}
      - has_column_count: {assertion: "== 3"}
      - has_variance: {column: x, assertion: {between: [2.9166, 2.9167]}}
      - has_skewness: {column: x, assertion: "== 0"}
      - has_kurtosis: {column: x, assertion: {between: [-1.26858, -1.26856]}}
      - has_zeros_count: {column: z, assertion: "== 2"}
      - has_duplicate_row_count: {columns: [z], assertion: "== 6"}
      - has_duplicate_row_count: {assertion: "== 0"}
      - has_approx_quantile: {column: x, quantile: 0.5, relative_error: 0.05, assertion: "== 3"}
"""


@pytest.fixture(scope="module")
def df(spark):
    rows = [(float(i), "s", 0 if i <= 2 else 1) for i in range(1, 7)]
    return spark.createDataFrame(rows, "x double, s string, z int")


def test_yaml_kinds_judge_deequs_values(df):
    checks = loads_suite(YAML).checks
    result = verify(df, checks)
    failed = [(r.constraint, r.message) for r in result.failed_constraints()]
    assert failed == []
    assert len(result.constraint_results) == 11


def test_python_builder_compiles_to_the_same_constraints(df):
    check = (
        Check(Level.ERROR, "deequ vocabulary")
        .has_range("x", "== 5")
        .has_interquartile_range("x", "== 2.5")
        .has_exact_quantile("x", 0.5, "== 3.5")
        .has_column_count("== 3")
        .has_variance("x", {"between": [2.9166, 2.9167]})
        .has_skewness("x", "== 0")
        .has_kurtosis("x", {"between": [-1.26858, -1.26856]})
        .has_zeros_count("z", "== 2")
        .has_duplicate_row_count("== 6", columns=["z"])
        .has_duplicate_row_count("== 0")
        .has_approx_quantile("x", 0.5, "== 3", relative_error=0.05)
    )
    assert check.constraints == loads_suite(YAML).checks[0].constraints
    assert loads_suite(dump_checks([check])).checks[0] == check


def test_failures_where_deequ_fails(df):
    check = (
        Check(Level.ERROR, "bad")
        .has_range("s", ">= 0")  # a string column
        .has_exact_quantile("x", 0.5, "> 0", where="x > 100")  # empty by the filter: success
        .has_kurtosis("nope", "> 0")
        .has_approx_quantile("x", 0.5, "> 0", relative_error=0.0)  # outside (0, 1]
    )
    statuses = [r.status for r in verify(df, [check]).constraint_results]
    assert statuses == ["Failure", "Success", "Failure", "Failure"]
    msg = verify(df, [check]).constraint_results[3].message
    assert msg is not None and "Relative error parameter" in msg


def test_yaml_mistakes_are_config_errors():
    with pytest.raises(ConfigError, match="quantile"):
        loads_suite(
            "checks:\n  - description: x\n    constraints:\n      - has_exact_quantile: {column: x, assertion: '> 0'}\n"
        )
    with pytest.raises(ConfigError, match="assertion"):
        loads_suite("checks:\n  - description: x\n    constraints:\n      - has_range: {column: x}\n")
