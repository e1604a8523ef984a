"""Pass policies (always/all/any/[names]/at_least) and the measure/check/pass document."""

from __future__ import annotations

import pytest

from streamdq.checks import Check, Level, loads_suite
from streamdq.checks.kinds import make
from streamdq.checks.measure import MeasureResult
from streamdq.checks.pass_policy import PassPolicy
from streamdq.checks.result_document import build_document, check_names, check_outcomes
from streamdq.errors import ConfigError
from streamdq.result_document import MeasureCheckPass

NAMES = ["a", "b", "c", "d"]
SEED = {"a": False, "b": True, "c": True, "d": False}


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (None, True),
        ("always", True),
        ("all", False),
        ("any", True),
        (["b", "c"], True),
        (["a", "b"], False),
        ({"at_least": 2}, True),
        ({"at_least": 3}, False),
    ],
)
def test_each_policy_decides_the_seed_outcomes(spec, expected):
    policy = PassPolicy.parse(spec, names=NAMES)
    assert policy.decide(SEED) is expected
    assert PassPolicy.parse(policy.to_spec(), names=NAMES) == policy


def test_policies_on_edge_outcomes():
    assert PassPolicy("all").decide({"a": True, "b": True})
    assert not PassPolicy("any").decide({"a": False, "b": False})
    assert PassPolicy("all").decide({}) and PassPolicy("any").decide({})  # nothing judged here
    # a listed check judged at another scope is not required in this document
    assert PassPolicy("checks", ("a", "z")).decide({"a": True})
    assert not PassPolicy("at_least", at_least=1).decide({})


@pytest.mark.parametrize(
    ("spec", "path", "problem"),
    [
        ("sometimes", "pass", "expected always, all, any"),
        ("alll", "pass", "did you mean 'all'?"),
        (["b", "nope"], "pass[1]", "unknown check 'nope'"),
        ([], "pass", "non-empty list"),
        ({"at_least": 0}, "pass.at_least", "from 1 to 4"),
        ({"at_least": 5}, "pass.at_least", "from 1 to 4"),
        ({"at_least": True}, "pass.at_least", "from 1 to 4"),
        ({"at_most": 2}, "pass", "expected always"),
        (3, "pass", "expected always"),
    ],
)
def test_bad_policies_are_load_time_errors(spec, path, problem):
    with pytest.raises(ConfigError) as err:
        PassPolicy.parse(spec, names=NAMES, file="f.yaml")
    assert err.value.file == "f.yaml" and err.value.key == path and problem in err.value.problem


def test_a_check_file_pass_key_is_validated_against_its_check_names():
    text = """checks:
  - description: orders
    constraints:
      - is_complete: {column: id}
      - expression: {name: big, expression: 'metrics["Size"] > 50'}
pass: [orders, bgi]
"""
    with pytest.raises(ConfigError) as err:
        loads_suite(text, file="f.yaml")
    assert "f.yaml: pass[1]: unknown check 'bgi'" in str(err.value) and "did you mean 'big'?" in str(
        err.value
    )
    suite = loads_suite(text.replace("bgi", "big"), file="f.yaml")
    assert suite.pass_policy == PassPolicy("checks", ("orders", "big"))
    assert loads_suite(text.replace("pass: [orders, bgi]\n", "")).pass_policy is None
    assert loads_suite(text.replace("[orders, bgi]", "always")).pass_policy == PassPolicy("always")
    with pytest.raises(ConfigError, match="from 1 to 2"):
        loads_suite(text.replace("[orders, bgi]", "{at_least: 3}"))


def test_the_document_keys_expressions_by_name_and_other_checks_by_description():
    size = make("Size")
    complete = make("Completeness", column="id")
    checks = [
        Check(Level.ERROR, "orders").is_complete("id").expression("big", 'metrics["Size"] > 50'),
        Check(Level.WARNING, "only expressions").expression("small", 'metrics["Size"] < 10'),
    ]
    assert check_names(checks) == ["orders", "big", "small"]
    metrics = {size: size.ok(100.0), complete: complete.ok(1.0)}
    results = [c.evaluate(metrics, scope=None) for c in checks]
    assert check_outcomes(checks, results) == {"orders": True, "big": True, "small": False}
    measures = [
        MeasureResult("ok", "list", (1, 2)),
        MeasureResult("broken", "single_value", None, failure="returned 0 rows"),
    ]
    doc = build_document(checks, results, measures, PassPolicy("checks", ("orders", "big")))
    assert doc.to_dict() == {
        "measure": {"ok": [1, 2], "broken": None},
        "check": {"orders": True, "big": True, "small": False},
        "pass": True,
    }
    assert build_document(checks, results, measures, PassPolicy("all")).passed is False
    record = build_document(checks, results, (), PassPolicy(), scope="window", window=("s", "e")).to_record()
    assert record["scope"] == "window" and record["window"] == ["s", "e"]
    assert MeasureCheckPass.from_record(record).to_record() == record


def test_only_the_entries_judged_at_a_scope_are_in_its_document():
    checks = [
        Check(Level.ERROR, "c")
        .expression("per batch", 'metrics["Size"] > 0')
        .expression("per window", 'metrics["Size"] > 0', scope="window")
    ]
    size = make("Size")
    batch = [checks[0].evaluate({size: size.ok(3.0)}, scope="batch")]
    assert check_outcomes(checks, batch) == {"per batch": True}
