"""Constraint/check evaluation in pure Python (no Spark), following SEMANTICS.md."""

from __future__ import annotations

import pytest

from streamdq.analyzers.metric import Metric
from streamdq.checks import (
    Check,
    Constraint,
    ConstraintKind,
    Level,
    Param,
    constraint_kinds,
    register_constraint_kind,
    unregister_constraint_kind,
)
from streamdq.checks.kinds import make
from streamdq.checks.spec import loads_suite
from streamdq.report import SUCCESS


def ok(value, name="X", instance="c"):
    return Metric("Column", name, instance, value=value)


def failed(reason, *, empty=False):
    return Metric("Column", "X", "c", failure=reason, empty=empty)


def judge(check: Check, metric: Metric | None, scope: str | None = None):
    c = check.constraints[-1]
    metrics = {} if metric is None else {c.analyzer: metric}
    return check.evaluate(metrics, scope=scope).constraint_results[-1]


CHECK = Check(Level.ERROR, "orders")


def test_default_assertion_is_exactly_one():
    assert judge(CHECK.is_complete("a"), ok(1.0)).status == SUCCESS
    r = judge(CHECK.is_complete("a"), ok(0.9999))
    assert r.status == "Failure"
    assert "Value: 0.9999 does not meet the constraint requirement" in r.message


def test_hint_is_appended_and_bound_reported():
    r = judge(CHECK.has_completeness("a", ">= 0.9", hint="emails are required"), ok(0.5))
    assert r.message.endswith("emails are required")
    assert r.bound == ">= 0.9"


def test_failed_metric_fails_the_constraint_with_its_reason():
    r = judge(CHECK.has_mean("a", "> 0"), failed("column 'a' does not exist"))
    assert r.status == "Failure" and r.message == "column 'a' does not exist"


def test_empty_state_under_where_is_success_but_not_without_where():
    assert judge(CHECK.is_complete("a", where="x > 1"), failed("empty", empty=True)).status == SUCCESS
    assert judge(CHECK.is_complete("a"), failed("empty", empty=True)).status == "Failure"
    # a non-empty failure stays a failure even with a where filter
    assert judge(CHECK.is_complete("a", where="x > 1"), failed("bad type")).status == "Failure"


def test_missing_metric_is_a_failure():
    r = judge(CHECK.is_complete("a"), None)
    assert r.status == "Failure" and "No metric computed for Completeness" in r.message


def test_throwing_assertion_is_a_failure():
    def boom(v):
        raise RuntimeError("nope")

    r = judge(CHECK.has_size(boom), ok(3.0))
    assert r.status == "Failure" and "Can't execute the assertion: RuntimeError: nope" in r.message


def histogram(counts: dict[str, int]) -> dict:
    total = sum(counts.values())
    return {
        "number_of_bins": len(counts),
        "values": {k: {"absolute": v, "ratio": v / total} for k, v in counts.items()},
    }


def test_histogram_values_and_absent_key():
    dist = histogram({"a": 2, "NullValue": 1, "b": 1})
    check = CHECK.has_histogram_values("c", ">= 0.5", key="a")
    assert judge(check, ok(dist)).status == SUCCESS
    absolute = CHECK.has_histogram_values("c", "== 1", key="b", value="absolute")
    assert judge(absolute, ok(dist)).status == SUCCESS
    r = judge(CHECK.has_histogram_values("c", "> 0", key="zzz"), ok(dist))
    assert r.status == "Failure" and "Can't retrieve the value to assert on: key 'zzz' not found" in r.message
    whole = CHECK.has_histogram_values("c", lambda d: d["values"]["a"]["absolute"] == 2)
    assert judge(whole, ok(dist)).status == SUCCESS


def test_number_of_distinct_values_uses_number_of_bins():
    dist = histogram({"a": 2, "NullValue": 1, "b": 2, "c": 1})
    assert judge(CHECK.has_number_of_distinct_values("c", "== 4"), ok(dist)).status == SUCCESS


def test_data_type_ratios_exclude_unknown():
    dist = histogram({"Unknown": 4, "Integral": 3, "Fractional": 1, "String": 0})
    assert judge(CHECK.has_data_type("c", "Integral", "== 0.75"), ok(dist)).status == SUCCESS
    assert judge(CHECK.has_data_type("c", "Numeric"), ok(dist)).status == SUCCESS
    assert judge(CHECK.has_data_type("c", "Null", "== 0.5"), ok(dist)).status == SUCCESS
    assert judge(CHECK.has_data_type("c", "Boolean", "== 0"), ok(dist)).status == SUCCESS
    assert judge(CHECK.has_data_type("c", "String", "== 0"), ok(dist)).status == SUCCESS


def test_check_status_follows_level():
    metrics_bad = {make("Size"): ok(0.0)}
    assert Check(Level.ERROR, "e").has_size("> 0").evaluate(metrics_bad).status == "Error"
    assert Check("warning", "w").has_size("> 0").evaluate(metrics_bad).status == "Warning"
    assert Check(Level.ERROR, "e").has_size(">= 0").evaluate(metrics_bad).status == SUCCESS


def test_evaluate_judges_only_the_requested_scope():
    check = CHECK.has_size("> 0").has_size("> 10", scope="total").has_size("> 100", scope="window")
    size = make("Size")
    metrics = {size: ok(50.0)}
    batch = check.evaluate(metrics, scope="batch")
    assert [r.scope for r in batch.constraint_results] == ["batch"]
    assert batch.status == SUCCESS
    window = check.evaluate(metrics, scope="window")
    assert [r.status for r in window.constraint_results] == ["Failure"] and window.status == "Error"
    everything = check.evaluate(metrics, scope=None)
    assert [r.scope for r in everything.constraint_results] == ["batch", "total", "window"]
    assert check.required_analyzers() == [size]


def test_required_analyzers_are_deduplicated():
    check = CHECK.is_complete("a").has_completeness("a", ">= 0.5").has_mean("b", "> 0")
    assert check.required_analyzers() == [make("Completeness", column="a"), make("Mean", column="b")]


def test_constraint_id_is_stable_and_ignores_the_threshold():
    a = CHECK.has_completeness("a", ">= 0.9").constraints[0]
    b = CHECK.has_completeness("a", ">= 0.8").constraints[0]
    c = CHECK.has_completeness("b", ">= 0.9").constraints[0]
    assert a.constraint_id("orders") == b.constraint_id("orders")
    assert a.constraint_id("orders") != c.constraint_id("orders")
    assert a.constraint_id("orders") != a.constraint_id("customers")
    assert len(a.constraint_id("orders")) == 16
    # golden: alert ids and stored results key on it, so it must not drift between releases
    assert a.constraint_id("orders") == "7811b8c29a8a0484"
    r = CHECK.has_completeness("a", ">= 0.9").evaluate({a.analyzer: ok(1.0)})
    assert r.constraint_results[0].constraint_id == a.constraint_id("orders")


def test_check_needs_a_description():
    with pytest.raises(ValueError, match="expected a non-empty string"):
        Check(Level.ERROR, "  ")
    with pytest.raises(ValueError, match="expected 'error' or 'warning'"):
        Check("fatal", "x")


def test_builder_is_immutable():
    base = Check(Level.ERROR, "x")
    more = base.is_complete("a")
    assert base.constraints == () and len(more.constraints) == 1


def test_has_no_anomalies_is_judged_by_the_evaluator_in_the_context_and_fails_without_one():
    check = CHECK.has_no_anomalies(make("Mean", column="amount"), {"type": "online_normal"})
    c = check.constraints[0]
    assert c.scope == "window" and c.analyzer == make("Mean", column="amount")
    r = check.evaluate({c.analyzer: ok(3.0)}, scope="window").constraint_results[0]
    assert r.status == "Failure" and "needs a detector evaluator" in r.message

    seen = []

    def evaluator(constraint, metric, context):
        seen.append((constraint.params["detector"]["type"], metric.value, context.get("history")))
        return SUCCESS, None

    context = {"history": [1, 2], "anomaly_evaluator": evaluator}
    r = check.evaluate({c.analyzer: ok(3.0)}, scope="window", context=context)
    assert r.status == SUCCESS
    assert seen == [("online_normal", 3.0, [1, 2])]
    # nothing was installed process-wide: without the context entry it fails again
    r = check.evaluate({c.analyzer: ok(3.0)}, scope="window", context={"history": [1, 2]})
    r = r.constraint_results[0]
    assert r.status == "Failure" and "needs a detector evaluator" in r.message


@pytest.fixture
def row_count_kind():
    """The kind ``test_has_row_count_at_least``, registered for one test only: the vocabulary is
    process-wide, and the conformance suite wants cases for every kind it finds there."""
    kind = register_constraint_kind(
        ConstraintKind(
            "test_has_row_count_at_least",
            (Param("minimum", "number"),),
            lambda p, w: make("Size", where=w),
            value=lambda p, m: m.value - p["minimum"],
            default_assertion=None,
        )
    )
    yield kind
    assert unregister_constraint_kind(kind.name) is kind


def test_a_kind_registered_elsewhere_works_in_code_and_yaml(row_count_kind):
    check = Check(Level.ERROR, "x").add_constraint("test_has_row_count_at_least", minimum=5, assertion=">= 0")
    assert check.evaluate({make("Size"): ok(7.0)}).status == SUCCESS
    assert check.evaluate({make("Size"): ok(3.0)}).status == "Error"
    suite = loads_suite(
        "checks:\n- description: x\n  level: error\n  constraints:\n"
        "  - test_has_row_count_at_least: {minimum: 5, assertion: '>= 0'}\n"
    )
    assert suite.checks[0] == check
    with pytest.raises(ValueError, match="already registered"):
        register_constraint_kind(ConstraintKind("is_complete", (), lambda p, w: make("Size")))


def test_unregister_undoes_register_and_a_replaced_builtin_goes_back():
    builtin = constraint_kinds()["has_size"]
    assert unregister_constraint_kind("no_such_kind") is None
    stand_in = ConstraintKind("has_size", (), lambda p, w: make("Size"), doc="a stand-in")
    register_constraint_kind(stand_in, replace=True)
    try:
        assert constraint_kinds()["has_size"] is stand_in
    finally:
        assert unregister_constraint_kind("has_size") is stand_in
        assert "has_size" not in constraint_kinds()  # removed, not restored by itself
        register_constraint_kind(builtin)
    assert constraint_kinds()["has_size"] is builtin
    gone = register_constraint_kind(ConstraintKind("test_gone", (), lambda p, w: make("Size")))
    assert Constraint.create("test_gone").kind == "test_gone"
    assert unregister_constraint_kind("test_gone") is gone
    with pytest.raises(ValueError, match="unknown constraint 'test_gone'"):
        Constraint.create("test_gone")


def test_constraint_create_validates_in_code_too():
    from streamdq.errors import ConfigError

    with pytest.raises(ConfigError, match="is_contained_in.values: give either values"):
        Constraint.create(
            "is_contained_in", {"column": "a", "values": ["x"], "lower_bound": 1}, path="is_contained_in"
        )
    with pytest.raises(ConfigError, match=r"has_mean\.assertion: missing required key"):
        CHECK.add_constraint("has_mean", column="a")


def test_sql_literals_and_identifiers_are_quoted():
    from streamdq.checks.kinds import sql_ident, sql_literal

    assert sql_literal("it's") == "'it\\'s'"
    assert sql_literal("a\\b") == "'a\\\\b'"
    assert sql_literal(3) == "3" and sql_literal(2.5) == "2.5" and sql_literal(True) == "TRUE"
    assert sql_literal(float("-inf")) == "CAST('-Infinity' AS DOUBLE)"
    assert sql_ident("we`ird col") == "`we``ird col`"
    c = CHECK.is_contained_in("v", ["it's", 1]).constraints[0]
    assert c.analyzer.predicate == "`v` IS NULL OR `v` IN ('it\\'s', 1)"
    assert CHECK.is_contained_in("v", []).constraints[0].analyzer.predicate == "`v` IS NULL OR `v` IN ('')"
    rng = (
        CHECK.is_contained_in("v", lower_bound=0, upper_bound=1, include_lower=False).constraints[0].analyzer
    )
    assert rng.predicate == "`v` IS NULL OR (`v` > 0.0 AND `v` <= 1.0)"
    assert rng.name == "v between (0.0, 1.0]"
    assert CHECK.is_non_negative("v").constraints[0].analyzer.predicate == (
        "COALESCE(CAST(`v` AS DOUBLE), 0.0) >= 0"
    )


def test_constraint_id_is_hashed_once_per_instance_and_check(monkeypatch):
    """The handler asks for every constraint's id on every microbatch: it is kept per instance
    and check description, and the kept ids take no part in equality or hashing."""
    import hashlib

    import streamdq.checks.constraint as constraint_module

    calls = []
    real = hashlib.sha256

    def counting(data):
        calls.append(data)
        return real(data)

    monkeypatch.setattr(constraint_module.hashlib, "sha256", counting)
    a = CHECK.has_completeness("a", ">= 0.9").constraints[0]
    fresh = CHECK.has_completeness("a", ">= 0.9").constraints[0]
    for _ in range(3):
        assert a.constraint_id("orders") == "7811b8c29a8a0484"
    assert a.constraint_id("customers") != a.constraint_id("orders")
    assert len(calls) == 2  # one per check description
    assert a == fresh and hash(a) == hash(fresh)
