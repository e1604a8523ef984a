"""Every constraint kind against small frames with the SEMANTICS.md rules (runs on Spark)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from streamdq import Check, Level, verify
from streamdq.engine.plan import count_jobs

ROWS = [
    # id, item, att, x, y, s, email, status, z
    (1, "a", "c", 1.0, 5, "1", "user@example.com", "new", 2.0),
    (2, "b", None, 2.0, 6, "2", "not-an-email", "paid", 3.0),
    (3, "a", "d", 3.0, None, "x", None, "paid", 1.0),
    (4, "c", "c", 4.0, 8, "-1", "a@b.org", "shipped", 4.0),
]
SCHEMA = "id int, item string, att string, x double, y int, s string, email string, status string, z double"


@pytest.fixture(scope="module")
def df(spark):
    return spark.createDataFrame(ROWS, SCHEMA)


def check() -> Check:
    return Check(Level.ERROR, "t")


def results(df, c: Check):
    return verify(df, [c]).constraint_results


def statuses(df, c: Check) -> list[str]:
    return [r.status for r in results(df, c)]


S, F = "Success", "Failure"


def test_completeness_family(df):
    c = (
        check()
        .is_complete("id")
        .is_complete("att")
        .has_completeness("att", "== 0.75")
        .is_complete("att", where="id != 2")
        .are_complete(["id", "x"])
        .are_complete(["id", "att"])
        .are_any_complete(["att", "email"])
        .are_complete(["att", "email"], "== 0.5")
    )
    assert statuses(df, c) == [S, F, S, S, S, F, S, S]


def test_where_filter_leaving_no_rows_succeeds_but_missing_column_fails(df):
    r = results(df, check().is_complete("att", where="id > 100").is_complete("nope").has_mean("item", "> 0"))
    assert [x.status for x in r] == [S, F, F]
    assert "does not exist" in r[1].message
    assert r[2].message  # a string column has no mean: the analyzer's reason is reported


def test_uniqueness_family(df):
    c = (
        check()
        .is_unique("id")
        .is_unique("item")
        .has_uniqueness(["item"], "== 0.5")
        .has_distinctness(["item"], "== 0.75")
        .has_unique_value_ratio(["item"], {"between": [0.666, 0.667]})
        .is_primary_key("item", "att")
        .is_primary_key("status")
    )
    assert statuses(df, c) == [S, F, S, S, S, S, F]


def test_is_unique_and_primary_key_succeed_on_a_column_with_null(spark):
    d = spark.createDataFrame([("1",), ("2",), (None,), ("3",), ("4",), ("5",)], "v string")
    assert statuses(d, check().is_unique("v").is_primary_key("v")) == [S, S]


def test_histogram_based(df):
    c = (
        check()
        .has_number_of_distinct_values("att", "== 3")  # c, d and the NullValue bin
        .has_histogram_values("item", "== 0.5", key="a")
        .has_histogram_values("item", "== 2", key="a", value="absolute")
        .has_histogram_values("att", "== 0.25", key="NullValue")
        .has_histogram_values("item", "> 0", key="zzz")
    )
    r = results(df, c)
    assert [x.status for x in r] == [S, S, S, S, F]
    assert "key 'zzz' not found" in r[4].message


def test_entropy_and_mutual_information(df):
    entropy = -(0.5 * math.log(0.5) + 2 * 0.25 * math.log(0.25))
    c = (
        check()
        .has_entropy("item", {"between": [entropy - 1e-9, entropy + 1e-9]})
        .has_mutual_information("item", "status", "> 0")
        .has_mutual_information("item", "item", {"between": [entropy - 1e-9, entropy + 1e-9]})
    )
    assert statuses(df, c) == [S, S, S]


def test_statistics(df):
    corr = float(np.corrcoef([1, 2, 3, 4], [2, 3, 1, 4])[0, 1])
    c = (
        check()
        .has_min("x", "== 1")
        .has_max("x", "== 4")
        .has_mean("x", "== 2.5")
        .has_sum("x", "== 10")
        .has_standard_deviation("x", {"between": [1.118033, 1.118034]})
        .has_correlation("x", "z", {"between": [corr - 1e-9, corr + 1e-9]})
        .has_min_length("item", "== 1")
        .has_max_length("email", "== 16")
        .has_min_length("email", "== 0", null_behavior="empty_string")
        .has_approx_count_distinct("item", "== 3")
        .has_approx_quantile("x", 0.5, {"between": [2, 3]})
        .has_mean("y", "== 6.333333333333333")  # NULL skipped
        .has_max("x", "< 4")
    )
    assert statuses(df, c) == [S] * 12 + [F]


def test_size_with_and_without_where(df):
    assert statuses(df, check().has_size("== 4").has_size("== 2", where="id > 2").has_size("> 4")) == [
        S,
        S,
        F,
    ]


def test_data_type(df):
    c = (
        check()
        .has_data_type("s", "Integral", "== 0.75")
        .has_data_type("s", "String", "== 0.25")
        .has_data_type("x", "Fractional")
        .has_data_type("x", "Numeric")
        .has_data_type("email", "Null", "== 0.25")
        .has_data_type("email", "String")  # Unknown (NULL) excluded from the denominator
        .has_data_type("s", "Numeric")
    )
    assert statuses(df, c) == [S, S, S, S, S, S, F]


def test_patterns(df, spark):
    c = (
        check()
        .has_pattern("item", "[ab]", "== 0.75")
        .has_pattern("email", "example", "== 0.25")  # searched anywhere; NULL is a non-match
        .contains_email("email", "== 0.5")
        .contains_email("email")
    )
    assert statuses(df, c) == [S, S, S, F]
    d = spark.createDataFrame(
        [("https://example.com/a", "4111 1111 1111 1111", "123-45-6789"), ("nope", "12", "000-00-0000")],
        "url string, card string, ssn string",
    )
    c2 = (
        check()
        .contains_url("url", "== 0.5")
        .contains_credit_card_number("card", "== 0.5")
        .contains_social_security_number("ssn", "== 0.5")
        .has_pattern("url", "URL", "== 0.5")
    )
    assert statuses(d, c2) == [S, S, S, S]


def test_satisfies_and_comparisons(df):
    c = (
        check()
        .satisfies("x > 1", "x above one", "== 0.75", columns=["x"])
        .satisfies("y > 5", "y above five", "== 0.5")  # NULL predicate: not compliant, in denominator
        .is_less_than("x", "z", "== 0.5")
        .is_less_than_or_equal_to("x", "z", "== 0.75")
        .is_greater_than("z", "x", "== 0.5")
        .is_greater_than_or_equal_to("z", "x", "== 0.75")
        .is_less_than("x", "y", "== 0.75")  # the NULL y row fails
        .satisfies("x >", "broken predicate")
    )
    r = results(df, c)
    assert [x.status for x in r] == [S, S, S, S, S, S, S, F]


def test_non_negative_and_positive_let_null_pass_and_cast_strings(df):
    c = (
        check()
        .is_non_negative("y")
        .is_positive("y")
        .is_non_negative("s", "== 0.75")  # "x" casts to NULL and passes; "-1" fails
        .is_non_negative("x")
        .is_positive("s")
    )
    assert statuses(df, c) == [S, S, S, S, F]


def test_contained_in_values_and_ranges(df, spark):
    c = (
        check()
        .is_contained_in("status", ["new", "paid", "shipped"])
        .is_contained_in("status", ["new", "paid"], assertion="== 0.75")
        .is_contained_in("att", ["c", "d"])  # NULL passes
        .is_contained_in("status", [], assertion="== 0")  # renders IN ('')
        .is_contained_in("x", lower_bound=1, upper_bound=4)
        .is_contained_in("x", lower_bound=1, upper_bound=4, include_upper=False, assertion="== 0.75")
        .is_contained_in("x", lower_bound=1, upper_bound=4, include_lower=False, assertion="== 0.75")
        .is_contained_in("y", lower_bound=5, upper_bound=6, assertion="== 0.75")  # NULL passes
        .is_contained_in("x", lower_bound=-math.inf, upper_bound=3, assertion="== 0.75")
    )
    assert statuses(df, c) == [S] * 9
    quoted = spark.createDataFrame([("it's",), ("back\\slash",), (None,)], "v string")
    assert statuses(quoted, check().is_contained_in("v", ["it's", "back\\slash"])) == [S]


def test_column_names_are_quoted(spark):
    d = spark.createDataFrame([(1.0, 2.0), (3.0, None)], "`my col` double, `we``ird` double")
    c = check().is_non_negative("my col").is_less_than("my col", "we`ird", "== 0.5").is_complete("my col")
    assert statuses(d, c) == [S, S, S]


def test_empty_input(spark):
    d = spark.createDataFrame([], "a int")
    r = verify(d, [check().has_size("== 0").is_complete("a").has_size("> 0")])
    assert [x.status for x in r.constraint_results] == [S, F, F]
    assert r.status == "Error"


def test_verify_runs_all_scan_shareable_constraints_in_one_pass(df):
    with count_jobs(df.sparkSession) as jobs:
        df.agg({"x": "sum"}).collect()
    baseline = jobs[0]
    scan = (
        check()
        .is_complete("id")
        .has_mean("x", "> 0")
        .is_non_negative("y")
        .contains_email("email", "> 0")
        .has_approx_quantile("x", 0.5, "> 0")
        .has_data_type("s", "Integral", "> 0")
    )
    other = Check(Level.WARNING, "u").has_max("x", "> 0").has_size("> 0").is_complete("id")
    result = verify(df, [scan, other])
    assert result.jobs == baseline
    assert len(result.metrics) == 8  # Completeness(id) shared by both checks
    grouped = verify(df, [scan.is_unique("id").has_uniqueness(["id"], "== 1").is_unique("item")])
    assert grouped.jobs > baseline  # one more pass per grouping set ({id} and {item})
    assert grouped.jobs <= baseline + 2 * max(baseline, 2)


def test_results_as_rows_and_dataframes(df, spark):
    result = verify(
        df, [check().is_complete("att").has_size("== 4"), Check(Level.WARNING, "w").has_mean("x", "> 0")]
    )
    rows = result.check_results_as_rows()
    assert [(r["check"], r["constraint_status"], r["check_status"]) for r in rows] == [
        ("t", F, "Error"),
        ("t", S, "Error"),
        ("w", S, "Success"),
    ]
    frame = result.check_results_as_dataframe(spark)
    assert frame.count() == 3
    metrics = {(r["name"], r["instance"]): r["value"] for r in result.metrics_as_dataframe(spark).collect()}
    assert metrics == {("Completeness", "att"): 0.75, ("Size", "*"): 4.0, ("Mean", "x"): 2.5}
