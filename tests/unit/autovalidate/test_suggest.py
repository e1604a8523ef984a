"""Constraint suggestion: every rule on hand-made profiles (no Spark), the Wilson/Wald
intervals against hand computation, the YAML/JSON checks files, and end to end on Spark."""

from __future__ import annotations

import json
import math

import pytest

from streamdq.autovalidate.suggest import (
    checks_document,
    render_json,
    render_text,
    render_yaml,
    sample,
    suggest_from_profile,
)
from streamdq.autovalidate.suggest.rules import (
    DEEQU_DEFAULT_RULES,
    DEFAULT_RULES,
    Z_95,
    CategoricalRange,
    CompleteIfComplete,
    FractionalCategoricalRange,
    HasMax,
    HasMaxLength,
    HasMean,
    HasMin,
    HasMinLength,
    HasStandardDeviation,
    Interval,
    NonNegativeNumbers,
    ProfiledColumn,
    RetainCompleteness,
    RetainType,
    Suggestion,
    TableProfile,
    UniqueIfApproximatelyUnique,
    builder_code,
    infer_type,
    outward_band,
    proportion_interval,
    wald_interval,
    wilson_interval,
)
from streamdq.checks import Check, Level
from streamdq.checks.spec import constraint_from_dict, loads_suite

# -- intervals ------------------------------------------------------------------------------


def test_z_is_the_two_sided_95_percent_normal_quantile():
    from statistics import NormalDist

    assert abs(Z_95 - NormalDist().inv_cdf(0.975)) < 1e-12


def test_wald_interval_by_hand():
    # p = 0.95, n = 100: se = sqrt(0.95 * 0.05 / 100) = 0.0217945; margin = 1.959964 * se = 0.0427164
    # raw [0.9072836, 0.9927164]: lower truncated -> 0.90 (not 0.91), upper away from zero -> 1.00 (not 0.99)
    assert wald_interval(0.95, 100) == Interval(0.90, 1.00)
    # p = 0.8, n = 1000: margin = 1.959964 * sqrt(0.16 / 1000) = 0.0247918 -> raw [0.7752082, 0.8247918]
    assert wald_interval(0.8, 1000) == Interval(0.77, 0.83)


def test_wilson_interval_by_hand():
    # p = 0.95, n = 100: z²/n = 0.0384146; centre = 0.95 + 0.0192073 = 0.9692073;
    # margin = 1.959964 * sqrt(0.000475 + 0.0384146 / 400) = 1.959964 * 0.0238964 = 0.0468358;
    # divided by 1.0384146: raw [0.8882495, 0.9784563] -> [0.88, 0.98]
    assert wilson_interval(0.95, 100) == Interval(0.88, 0.98)
    # p = 0.5, n = 10: z²/n = 0.3841459; centre = 0.6920729; margin = 1.959964 * sqrt(0.025 + 0.0096036)
    # = 0.3646022; / 1.3841459: raw [0.2365931, 0.7634069] -> [0.23, 0.77]
    assert wilson_interval(0.5, 10) == Interval(0.23, 0.77)


def test_intervals_are_clamped_to_probabilities():
    assert wald_interval(0.99, 10).upper == 1.0  # raw 1.0517
    assert wald_interval(0.01, 10).lower == 0.0  # raw -0.0517
    assert wilson_interval(1.0, 5) == Interval(0.56, 1.0)  # raw [0.5655, 1.0]


def test_interval_rejects_a_bad_proportion_or_strategy():
    with pytest.raises(ValueError, match="0 <= p <= 1"):
        wilson_interval(1.5, 10)
    with pytest.raises(ValueError, match="n > 0"):
        wald_interval(0.5, 0)
    with pytest.raises(ValueError, match="strategy"):
        proportion_interval(0.5, 10, "agresti")
    assert proportion_interval(0.95, 100, "wald") == wald_interval(0.95, 100)


def test_outward_band_contains_the_value_and_rounds_outwards():
    assert outward_band(50.5, 5.65) == (44.8, 56.2)  # two significant digits of the margin
    assert outward_band(-3.14159, 0.0123) == (-3.154, -3.129)
    lo, hi = outward_band(0.1, 0.0)  # a constant column still gets a tiny band
    assert lo < 0.1 < hi and hi - lo < 1e-8


# -- the rules on hand-made columns -------------------------------------------------------------


def col(name: str = "c", **kw) -> ProfiledColumn:
    return ProfiledColumn(name, **kw)


def fired(rule, column: ProfiledColumn, rows: int = 100) -> Suggestion | None:
    s = rule(column, rows)
    if s is not None:  # every suggestion is a loadable constraint spec
        constraint_from_dict(dict(s.constraint))
        assert s.column == column.column and s.rule == rule.name and s.why
    return s


def test_complete_if_complete():
    s = fired(CompleteIfComplete(), col(completeness=1.0))
    assert s is not None
    assert s.constraint == {"is_complete": {"column": "c"}}
    assert s.code == ".is_complete('c')"
    assert "completeness 1.0" in s.why
    assert fired(CompleteIfComplete(), col(completeness=0.99)) is None
    assert fired(CompleteIfComplete(), col()) is None  # no completeness (empty table)


def test_retain_completeness_uses_the_wilson_lower_bound_and_states_both_intervals():
    s = fired(RetainCompleteness(), col(completeness=0.95))
    assert s is not None
    assert s.constraint == {"has_completeness": {"column": "c", "assertion": ">= 0.88"}}
    assert "Wilson interval [0.88, 0.98]" in s.why and "Wald interval [0.90, 1.00]" in s.why
    wald = fired(RetainCompleteness(strategy="wald"), col(completeness=0.95))
    assert wald is not None and wald.constraint["has_completeness"]["assertion"] == ">= 0.90"


@pytest.mark.parametrize("completeness", [1.0, 0.2, 0.1, None])
def test_retain_completeness_does_not_fire_outside_min_max(completeness):
    assert fired(RetainCompleteness(), col(completeness=completeness)) is None


@pytest.mark.parametrize(
    ("data_type", "suggested"), [("Integral", "Integral"), ("Fractional", "Numeric"), ("Boolean", "Boolean")]
)
def test_retain_type_on_an_inferred_type(data_type, suggested):
    s = fired(RetainType(), col(data_type=data_type, type_inferred=True, type_counts={data_type: 7}))
    assert s is not None
    assert s.constraint == {"has_data_type": {"column": "c", "data_type": suggested}}
    assert f"7 {data_type}" in s.why


def test_retain_type_does_not_fire_on_strings_or_typed_columns():
    assert fired(RetainType(), col(data_type="String", type_inferred=True)) is None
    assert fired(RetainType(), col(data_type="Unknown", type_inferred=True)) is None
    assert fired(RetainType(), col(data_type="Integral", type_inferred=False)) is None


def test_infer_type_follows_deequ():
    assert infer_type({}) == "Unknown"
    assert infer_type({"Integral": 3}) == "Integral"
    assert infer_type({"Integral": 3, "Fractional": 1}) == "Fractional"
    assert infer_type({"Boolean": 2}) == "Boolean"
    assert infer_type({"Boolean": 2, "Integral": 1}) == "String"
    assert infer_type({"Integral": 5, "String": 1}) == "String"


STATUS = {"new": 50, "paid": 40, "shipped": 5, "NullValue": 5}


def test_categorical_range_lists_all_values_by_popularity_without_null():
    s = fired(CategoricalRange(), col(data_type="String", histogram=STATUS))
    assert s is not None
    assert s.constraint == {"is_contained_in": {"column": "c", "values": ["new", "paid", "shipped"]}}
    assert "4 distinct values, 0 of them seen once" in s.why


def test_categorical_range_on_a_typed_integral_column_uses_numbers():
    s = fired(CategoricalRange(), col(data_type="Integral", histogram={"1": 9, "2": 3}))
    assert s is not None and s.constraint["is_contained_in"]["values"] == [1, 2]
    inferred = fired(CategoricalRange(), col(data_type="Integral", type_inferred=True, histogram={"1": 9}))
    assert inferred is not None and inferred.constraint["is_contained_in"]["values"] == ["1"]


def test_categorical_range_does_not_fire():
    many_singletons = {f"k{i}": 1 for i in range(2)} | {f"v{i}": 5 for i in range(17)}  # 2/19 > 0.1
    assert fired(CategoricalRange(), col(data_type="String", histogram=many_singletons)) is None
    assert fired(CategoricalRange(), col(data_type="Fractional", histogram={"1.5": 9})) is None
    assert fired(CategoricalRange(), col(data_type="String")) is None  # no histogram
    assert fired(CategoricalRange(), col(data_type="String", histogram={"NullValue": 9})) is None
    # exactly at the threshold it fires: 1 singleton among 10 keys
    at = {"x": 1} | {f"v{i}": 5 for i in range(9)}
    assert fired(CategoricalRange(), col(data_type="String", histogram=at)) is not None


def test_fractional_categorical_range_covers_the_target_with_an_interval_bound():
    s = fired(FractionalCategoricalRange(), col(data_type="String", histogram=STATUS))
    assert s is not None
    # new + paid = 90 of 100 rows reaches 0.9; Wilson(0.9, 100) lower bound = 0.82 (raw 0.8256)
    assert s.constraint == {
        "is_contained_in": {"column": "c", "values": ["new", "paid"], "assertion": ">= 0.82"}
    }
    assert "the top 2 cover 0.9 of 100 rows" in s.why and "Wald interval [0.84, 0.96]" in s.why


def test_fractional_categorical_range_does_not_fire():
    # the keys needed for 90% are all keys: the plain categorical range says it all
    assert fired(FractionalCategoricalRange(), col(data_type="String", histogram={"a": 50, "b": 50})) is None
    # too many values seen once (3/5 > 0.4)
    mostly_once = {"a": 90, "b": 5, "c": 1, "d": 1, "e": 1}
    assert fired(FractionalCategoricalRange(), col(data_type="String", histogram=mostly_once)) is None
    assert fired(FractionalCategoricalRange(), col(data_type="Boolean", histogram=STATUS)) is None
    # the top keys are only NULL: nothing to list
    nulls = {"NullValue": 95, "a": 3, "b": 2}
    assert fired(FractionalCategoricalRange(), col(data_type="String", histogram=nulls)) is None


def test_non_negative_numbers():
    s = fired(NonNegativeNumbers(), col(minimum=0.0))
    assert s is not None and s.constraint == {"is_non_negative": {"column": "c"}}
    assert s.why == "minimum 0 >= 0"
    assert fired(NonNegativeNumbers(), col(minimum=-0.5)) is None
    assert fired(NonNegativeNumbers(), col()) is None
    assert fired(NonNegativeNumbers(), col(minimum=math.nan)) is None


@pytest.mark.parametrize(
    ("rule", "field", "value", "kind", "assertion"),
    [
        (HasMin(), "minimum", -2.5, "has_min", ">= -2.5"),
        (HasMax(), "maximum", 7.0, "has_max", "<= 7"),
        (HasMinLength(), "min_length", 3.0, "has_min_length", ">= 3"),
        (HasMaxLength(), "max_length", 12.0, "has_max_length", "<= 12"),
    ],
)
def test_bound_rules(rule, field, value, kind, assertion):
    s = fired(rule, col(**{field: value}))
    assert s is not None and s.constraint == {kind: {"column": "c", "assertion": assertion}}
    assert fired(rule, col()) is None
    assert fired(rule, col(**{field: math.inf})) is None


def test_has_mean_is_the_95_percent_interval_of_the_mean():
    # margin = 1.959964 * 28.866 / sqrt(100) = 5.6577 -> [44.84, 56.16] rounded outwards to 0.1
    s = fired(HasMean(), col(mean=50.5, std_dev=28.866))
    assert s is not None and s.constraint == {
        "has_mean": {"column": "c", "assertion": {"between": [44.8, 56.2]}}
    }
    assert fired(HasMean(), col(mean=50.5)) is None
    assert fired(HasMean(), col(mean=math.nan, std_dev=1.0)) is None


def test_has_standard_deviation_band():
    # margin = 1.959964 * 28.866 / sqrt(2 * 99) = 4.0207 -> [24.845, 32.887] -> [24.8, 32.9]
    s = fired(HasStandardDeviation(), col(std_dev=28.866))
    assert s is not None
    assert s.constraint == {"has_standard_deviation": {"column": "c", "assertion": {"between": [24.8, 32.9]}}}
    one_row = fired(HasStandardDeviation(), col(std_dev=0.0), rows=1)
    assert one_row is not None
    lo, hi = one_row.constraint["has_standard_deviation"]["assertion"]["between"]
    assert lo == 0.0 < hi
    assert fired(HasStandardDeviation(), col()) is None


def test_unique_if_approximately_unique():
    s = fired(UniqueIfApproximatelyUnique(), col(completeness=1.0, approx_distinct=93.0))
    assert s is not None and s.constraint == {"is_unique": {"column": "c"}}
    assert "|1 - distinct/rows| = 0.070 <= 0.08" in s.why
    assert fired(UniqueIfApproximatelyUnique(), col(completeness=1.0, approx_distinct=107.0)) is not None
    assert fired(UniqueIfApproximatelyUnique(), col(completeness=1.0, approx_distinct=91.0)) is None
    assert fired(UniqueIfApproximatelyUnique(), col(completeness=0.99, approx_distinct=100.0)) is None


def test_builder_code_builds_the_same_constraint_as_the_spec():
    profile = table_profile()
    for s in suggest_from_profile(profile):
        built = eval(f"Check(Level.ERROR, 'x'){s.code}", {"Check": Check, "Level": Level})
        assert built.constraints == (constraint_from_dict(dict(s.constraint)),), s.code
    assert builder_code("has_min", {"column": "a", "assertion": ">= 1"}) == ".has_min('a', assertion='>= 1')"


# -- a whole profile ------------------------------------------------------------------------------


def table_profile() -> TableProfile:
    return TableProfile(
        rows=100,
        columns=(
            col("id", data_type="Integral", completeness=1.0, approx_distinct=100, minimum=1, maximum=100,
                mean=50.5, std_dev=28.866),
            col("status", data_type="String", type_inferred=True, completeness=0.95, approx_distinct=3,
                min_length=3, max_length=7, histogram=STATUS, type_counts={"String": 95}),
            col("blob", data_type="Unknown", completeness=0.1),
        ),
    )  # fmt: skip


def test_suggest_from_profile_runs_every_rule_in_order_per_column():
    suggestions = suggest_from_profile(table_profile())
    got = [(s.column, s.rule) for s in suggestions]
    assert got == [
        ("id", "CompleteIfComplete"),
        ("id", "NonNegativeNumbers"),
        ("id", "HasMin"),
        ("id", "HasMax"),
        ("id", "HasMean"),
        ("id", "HasStandardDeviation"),
        ("id", "UniqueIfApproximatelyUnique"),
        ("status", "RetainCompleteness"),
        ("status", "CategoricalRange"),
        ("status", "FractionalCategoricalRange"),
        ("status", "HasMinLength"),
        ("status", "HasMaxLength"),
    ]
    assert suggest_from_profile(table_profile(), rules=[CompleteIfComplete()]) == suggestions[:1]
    assert len(DEFAULT_RULES) == 13
    assert [r.name for r in DEEQU_DEFAULT_RULES] == [
        "CompleteIfComplete",
        "RetainCompleteness",
        "RetainType",
        "CategoricalRange",
        "FractionalCategoricalRange",
        "NonNegativeNumbers",
    ]


def test_suggest_from_an_empty_profile_is_empty():
    empty = TableProfile(rows=0, columns=(col("a", data_type="String", type_inferred=True),))
    assert suggest_from_profile(empty) == []


def test_profiled_column_rejects_an_unknown_type():
    with pytest.raises(ValueError, match="data_type"):
        ProfiledColumn("a", data_type="Text")


def test_yaml_checks_file_loads_back_with_rule_comments():
    suggestions = suggest_from_profile(table_profile())
    text = render_yaml(suggestions, "orders: v2", level="warning", header=["made by a test"])
    assert text.startswith("# made by a test\n")
    suite = loads_suite(text, file="suggested.yaml")
    assert suite.dataset == "orders: v2"
    assert [c.description for c in suite.checks] == [
        "suggested constraints for column id",
        "suggested constraints for column status",
    ]
    assert all(c.level == Level.WARNING for c in suite.checks)
    loaded = [c for check in suite.checks for c in check.constraints]
    assert loaded == [constraint_from_dict(dict(s.constraint)) for s in suggestions]
    lines = text.splitlines()
    for s in suggestions:  # each constraint is preceded by its rule and reason
        comment = next(i for i, line in enumerate(lines) if line.strip() == f"# {s.rule}: {s.why}")
        assert lines[comment + 1].lstrip().startswith("- {" + s.kind + ":")


def test_yaml_quotes_awkward_names_and_handles_no_suggestions():
    values = {"x\ny": 2, "é'\"": 3}
    odd = TableProfile(
        rows=5, columns=(col("a: #b\n", data_type="String", completeness=1.0, histogram=values),)
    )
    text = render_yaml(suggest_from_profile(odd), "d\n")
    suite = loads_suite(text)
    assert suite.dataset == "d\n"
    (check,) = suite.checks
    assert [c.params.to_dict() for c in check.constraints] == [
        {"column": "a: #b\n"},
        {"column": "a: #b\n", "values": ["é'\"", "x\ny"]},
    ]
    assert loads_suite(render_yaml([])).checks == ()
    with pytest.raises(ValueError, match="level"):
        render_yaml(suggest_from_profile(odd), level="fatal")


def test_json_document_and_text():
    suggestions = suggest_from_profile(table_profile())
    doc = json.loads(render_json(suggestions, "orders"))
    assert doc == checks_document(suggestions, "orders")
    assert (
        loads_suite(render_json(suggestions), file="x.json").checks
        == loads_suite(render_yaml(suggestions)).checks
    )
    text = render_text(suggestions)
    assert "status: RetainCompleteness" in text and "code: .has_completeness('status'" in text
    assert render_text([]) == "no suggestions\n"
    assert suggestions[0].to_dict()["constraint"] == {"is_complete": {"column": "id"}}
    assert suggestions[0].kind == "is_complete"


def test_sample_rejects_a_bad_fraction():
    for bad in (0, -0.1, 1.5, True, "0.5"):
        with pytest.raises(ValueError, match="sample fraction"):
            sample(object(), bad)  # type: ignore[arg-type]
    marker = object()
    assert sample(marker, None) is marker  # type: ignore[arg-type]
    assert sample(marker, 1) is marker  # type: ignore[arg-type]


# -- end to end on Spark ------------------------------------------------------------------------


ROWS = 60


@pytest.fixture(scope="module")
def orders(spark):
    from pyspark.sql.types import DoubleType, IntegerType, StringType, StructField, StructType

    schema = StructType(
        [
            StructField("id", IntegerType()),
            StructField("status", StringType()),
            StructField("amount", DoubleType()),
            StructField("qty", StringType()),
            StructField("flag", StringType()),
            StructField("price", StringType()),
            StructField("email", StringType()),
        ]
    )
    rows = [
        (
            i,
            None if i % 10 == 0 else ["new", "paid", "shipped"][i % 3],
            (i % 7) * 1.5,
            str(i % 5 + 1),
            "true" if i % 2 else "false",
            "1.5" if i % 3 else "2",
            f"user{i}@example.org",
        )
        for i in range(ROWS)
    ]
    return spark.createDataFrame(rows, schema)


@pytest.fixture(scope="module")
def orders_profile(orders):
    from streamdq.autovalidate.suggest import profile_table

    return profile_table(orders)


def test_profile_from_spark(orders_profile):
    p = {c.column: c for c in orders_profile.columns}
    assert orders_profile.rows == ROWS
    assert (p["id"].data_type, p["id"].type_inferred, p["id"].minimum, p["id"].maximum) == (
        "Integral",
        False,
        0.0,
        ROWS - 1.0,
    )
    assert (p["qty"].data_type, p["flag"].data_type, p["price"].data_type) == (
        "Integral",
        "Boolean",
        "Fractional",
    )
    assert all(p[c].type_inferred for c in ("qty", "flag", "price", "status", "email"))
    assert p["status"].completeness == pytest.approx(0.9)
    assert p["status"].histogram == {"new": 18, "paid": 18, "shipped": 18, "NullValue": 6}
    assert p["qty"].histogram == {str(k): 12 for k in range(1, 6)}
    assert p["email"].histogram is not None and len(p["email"].histogram) == ROWS
    assert p["amount"].histogram is None  # Fractional: no categorical rules, no histogram pass
    assert (p["email"].min_length, p["email"].max_length) == (
        len("user0@example.org"),
        len("user10@example.org"),
    )


def test_suggested_checks_load_back_and_verify_ok_on_the_same_data(orders, orders_profile, tmp_path):
    from streamdq import load_checks, verify

    suggestions = suggest_from_profile(orders_profile)
    got = {(s.column, s.rule) for s in suggestions}
    assert {
        ("id", "CompleteIfComplete"),
        ("id", "UniqueIfApproximatelyUnique"),
        ("email", "UniqueIfApproximatelyUnique"),
        ("status", "RetainCompleteness"),
        ("status", "CategoricalRange"),
        ("qty", "RetainType"),
        ("qty", "CategoricalRange"),
        ("flag", "RetainType"),
        ("price", "RetainType"),
        ("amount", "NonNegativeNumbers"),
        ("amount", "HasMean"),
        ("email", "HasMaxLength"),
    } <= got
    path = tmp_path / "suggested.yaml"
    path.write_text(render_yaml(suggestions, "orders"))
    checks = load_checks(path)
    assert sum(len(c.constraints) for c in checks) == len(suggestions)
    result = verify(orders, checks)
    failed = [
        (r.constraint.describe(), r.message)
        for cr in result.check_results
        for r in cr.constraint_results
        if r.status != "Success"
    ]
    assert result.status == "Success", failed


def test_profile_job_count_does_not_grow_with_the_number_of_columns(orders, orders_profile):
    from pyspark.sql import functions as F

    from streamdq.autovalidate.suggest import profile_table
    from streamdq.checks.kinds import make
    from streamdq.engine.analysis import analyze

    one_histogram = analyze(orders, [make("Histogram", column="status")]).jobs
    scan_only = profile_table(orders, histogram_threshold=0).jobs
    wide = orders.select("*", *[(F.col("amount") * k).alias(f"x{k}") for k in range(10)])
    assert profile_table(wide, histogram_threshold=0).jobs == scan_only  # 17 columns, same single pass
    assert profile_table(orders.select("id"), histogram_threshold=0).jobs == scan_only
    histogram_columns = [c.column for c in orders_profile.columns if c.histogram is not None]
    assert sorted(histogram_columns) == ["email", "id", "qty", "status"]  # String or Integral only
    assert orders_profile.jobs == scan_only + one_histogram * len(histogram_columns)
    # high-cardinality columns (id, email) get no histogram pass
    assert profile_table(orders, histogram_threshold=10).jobs == scan_only + one_histogram * 2


def test_suggest_on_a_sample_and_on_selected_columns(orders):
    from streamdq.autovalidate.suggest import profile_table, suggest

    sampled = profile_table(sample(orders, 0.5, seed=7))
    assert 0 < sampled.rows < ROWS
    only = suggest(orders, columns=["status"])
    assert {s.column for s in only} == {"status"}
    with pytest.raises(ValueError, match="unknown column.*'nope'"):
        profile_table(orders, columns=["status", "nope"])
