"""Every registered constraint kind through the constraint-kind laws (streamdq.testing.constraint_checks):
spec round trips with a stable id, and evaluation on a small metric set. Kinds are data in the
vocabulary, so their cases live here, keyed by kind name; a registered kind without an entry fails
(a new kind cannot skip the laws), and so does an entry for a kind that is not registered."""

from __future__ import annotations

import pytest

from streamdq.checks.constraint import constraint_kinds
from streamdq.detectors import AnomalyEvaluator
from streamdq.testing import ContractViolation
from streamdq.testing.constraint_checks import KindCase, check_constraint_kind

FAILURE = "Failure"
COL = {"column": "amount"}
PAIR = {"column_a": "a", "column_b": "b"}


def _histogram(**counts: int) -> dict:
    total = sum(counts.values())
    return {
        "number_of_bins": len(counts),
        "values": {k: {"absolute": v, "ratio": v / total} for k, v in counts.items()},
    }


def _anomaly_context() -> dict:
    return {"seq": 0, "dataset": "kit", "anomaly_evaluator": AnomalyEvaluator()}


CASES: dict[str, list[KindCase]] = {
    "aggregation": [
        KindCase({"function": "median", "column": "bytes"}, metric=12.0),
        KindCase({"function": "average", "column": "bytes"}, metric=12.0, assertion="< 10", expect=FAILURE),
    ],
    "are_any_complete": [KindCase({"columns": ["a", "b"]}, metric=1.0)],
    "are_complete": [KindCase({"columns": ["a", "b"]}, metric=0.5, assertion=">= 0.4", where="a > 0")],
    "contains_credit_card_number": [KindCase(COL, metric=0.0, assertion="== 0")],
    "contains_email": [KindCase(COL, metric=0.2, assertion="< 0.1", expect=FAILURE)],
    "contains_social_security_number": [KindCase(COL, metric=0.0, assertion="== 0", scope="window")],
    "contains_url": [KindCase(COL, metric=1.0)],
    "expression": [
        KindCase({"name": "two", "expression": "1 + 1 == 2"}),
        KindCase({"name": "false", "expression": "1 > 2"}, expect=FAILURE),
    ],
    "has_approx_count_distinct": [KindCase(COL, metric=120.0, assertion={"between": [100, 200]})],
    "has_approx_quantile": [
        KindCase({"column": "amount", "quantile": 0.5, "relative_error": 0.01}, metric=3.5, assertion="< 10")
    ],
    "has_column_count": [KindCase({}, metric=4.0, assertion="== 4")],
    "has_completeness": [KindCase(COL, metric=0.9, assertion=">= 0.95", expect=FAILURE)],
    "has_correlation": [KindCase(PAIR, metric=0.8, assertion="> 0.5")],
    "has_data_type": [
        KindCase(
            {"column": "amount", "data_type": "Integral"},
            metric=_histogram(Integral=8, Fractional=2),
            assertion=">= 0.8",
        )
    ],
    "has_distinctness": [KindCase({"columns": ["a"]}, metric=0.5, assertion="> 0.4")],
    "has_duplicate_row_count": [
        KindCase({}, metric=0.0, assertion="== 0"),
        KindCase({"columns": ["a", "b"]}, metric=3.0, assertion="== 0", expect=FAILURE),
    ],
    "has_entropy": [KindCase(COL, metric=1.2, assertion="> 1")],
    "has_exact_quantile": [KindCase({"column": "amount", "quantile": 0.9}, metric=8.0, assertion="<= 9")],
    "has_histogram_values": [
        KindCase(
            {"column": "status", "key": "200"}, metric=_histogram(**{"200": 9, "500": 1}), assertion="> 0.8"
        ),
        KindCase(
            {"column": "status", "key": "500", "value": "absolute", "max_bins": 10},
            metric=_histogram(**{"200": 9, "500": 1}),
            assertion="== 0",
            expect=FAILURE,
        ),
    ],
    "has_interquartile_range": [KindCase(COL, metric=4.0, assertion="< 5")],
    "has_kurtosis": [KindCase(COL, metric=3.0, assertion={"between": [2, 4]})],
    "has_max": [KindCase(COL, metric=99.0, assertion="<= 100")],
    "has_max_length": [
        KindCase({"column": "name", "null_behavior": "empty_string"}, metric=12.0, assertion="<= 20")
    ],
    "has_mean": [KindCase(COL, metric=10.0, assertion={"between": [5, 15]}, where="amount > 0")],
    "has_min": [KindCase(COL, metric=-1.0, assertion=">= 0", expect=FAILURE)],
    "has_min_length": [KindCase({"column": "name"}, metric=1.0, assertion=">= 1")],
    "has_mutual_information": [KindCase(PAIR, metric=0.3, assertion="> 0.1")],
    "has_no_anomalies": [
        KindCase(
            {"metric": {"analyzer": "Mean", "column": "amount"}, "detector": {"type": "online_normal"}},
            metric=10.0,
            scope="window",
            context=_anomaly_context(),
        ),
        KindCase(
            {"metric": {"analyzer": "Size"}, "detector": {"type": "simple_threshold", "upper_bound": 5}},
            metric=10.0,
            context=_anomaly_context(),
            expect=FAILURE,
        ),
    ],
    "has_no_non_finite": [KindCase(COL, metric=0.0)],
    "has_non_finite_count": [KindCase(COL, metric=2.0, assertion="== 0", expect=FAILURE)],
    "has_number_of_distinct_values": [
        KindCase({"column": "status", "max_bins": 5}, metric=_histogram(a=1, b=2, c=3), assertion="<= 3")
    ],
    "has_pattern": [KindCase({"column": "code", "pattern": "^[A-Z]{3}$", "name": "iso"}, metric=1.0)],
    "has_range": [KindCase(COL, metric=50.0, assertion="< 100")],
    "has_size": [
        KindCase({}, metric=10.0, assertion=">= 5"),
        KindCase({}, metric=0.0, assertion="> 0", expect=FAILURE),
    ],
    "has_skewness": [KindCase(COL, metric=0.1, assertion={"between": [-1, 1]})],
    "has_standard_deviation": [KindCase(COL, metric=2.5, assertion="< 3")],
    "has_sum": [KindCase(COL, metric=1000.0, assertion="> 0", scope="total")],
    "has_unique_value_ratio": [KindCase({"columns": ["a", "b"]}, metric=0.7, assertion="> 0.5")],
    "has_uniqueness": [KindCase({"columns": ["id"]}, metric=1.0, assertion="== 1")],
    "has_variance": [KindCase(COL, metric=6.25, assertion="< 10")],
    "has_zeros_count": [KindCase(COL, metric=0.0, assertion="== 0")],
    "is_complete": [KindCase(COL, metric=1.0), KindCase(COL, metric=0.99, expect=FAILURE)],
    "is_contained_in": [
        KindCase({"column": "status", "values": ["200", "404"]}, metric=1.0),
        KindCase(
            {"column": "amount", "lower_bound": 0, "upper_bound": 10, "include_upper": False},
            metric=0.9,
            expect=FAILURE,
        ),
    ],
    "is_greater_than": [KindCase(PAIR, metric=1.0)],
    "is_greater_than_or_equal_to": [KindCase(PAIR, metric=1.0)],
    "is_less_than": [KindCase(PAIR, metric=0.5, expect=FAILURE)],
    "is_less_than_or_equal_to": [KindCase(PAIR, metric=1.0)],
    "is_non_negative": [KindCase(COL, metric=1.0)],
    "is_positive": [KindCase(COL, metric=1.0, where="amount IS NOT NULL")],
    "is_primary_key": [KindCase({"columns": ["id", "day"]}, metric=1.0)],
    "is_unique": [KindCase({"column": "id"}, metric=1.0)],
    "satisfies": [
        KindCase({"predicate": "amount >= 0", "name": "non-negative amount"}, metric=1.0),
        KindCase(
            {"predicate": "a < b", "name": "a before b", "columns": ["a", "b"]},
            metric=0.5,
            assertion=">= 0.9",
            expect=FAILURE,
        ),
    ],
}


def _registered() -> list[str]:
    return sorted(constraint_kinds())


@pytest.mark.parametrize("kind", _registered())
def test_every_registered_kind_keeps_the_laws(kind: str) -> None:
    assert kind in CASES, f"the registered constraint kind {kind!r} has no cases in CASES: add one or more"
    report = check_constraint_kind(kind, CASES[kind])
    assert report.laws >= 5 * len(CASES[kind]) - 2


def test_every_case_names_a_registered_kind() -> None:
    assert sorted(CASES) == _registered()


def test_a_kind_without_cases_or_unregistered_fails() -> None:
    with pytest.raises(ContractViolation, match="no cases"):
        check_constraint_kind("has_size", [])
    with pytest.raises(ContractViolation, match="unknown constraint"):
        check_constraint_kind("has_sise", [KindCase({})])


def test_a_wrong_expectation_and_an_unjudgeable_metric_fail() -> None:
    with pytest.raises(ContractViolation, match="expected Failure"):
        check_constraint_kind("has_size", [KindCase({}, metric=10.0, assertion=">= 5", expect=FAILURE)])
    # a histogram kind handed a plain number cannot extract its value: an evaluation error
    with pytest.raises(ContractViolation, match="could not be evaluated"):
        check_constraint_kind(
            "has_data_type", [KindCase({"column": "a", "data_type": "Integral"}, metric=1.0)]
        )


def test_a_constraint_that_is_not_data_fails() -> None:
    """A Python-callable assertion cannot be written to a spec: the round-trip law says so."""
    with pytest.raises(ContractViolation, match="does not round-trip"):
        check_constraint_kind("has_size", [KindCase({}, metric=10.0, assertion=lambda v: v > 5)])


def test_the_kit_examples_run() -> None:
    import doctest

    import streamdq.testing.constraint_checks as kit

    assert doctest.testmod(kit).failed == 0
