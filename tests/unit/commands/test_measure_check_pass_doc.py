"""docs/measure-check-pass.md's example runs as written: the seed's measures, checks and pass
options through ``streamdq verify`` on examples/measure-check-pass (a real CSV table)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from streamdq.cli import main

ROOT = Path(__file__).resolve().parents[3]
DOC = ROOT / "docs" / "measure-check-pass.md"
EXAMPLE = ROOT / "examples" / "measure-check-pass"

# the seed's expected results (DolphinScheduler proposal, sections 2.2 and 3)
SEED_CHECKS = {
    "no null value": False,
    "count bigger than 50": True,
    "count > 50 in another way": True,
    "all order is unique": False,
}
SEED_MEASURES = {
    "Null Count": 100,
    "count vs count distinct": [100, 10],
    "multiple values": {"c": 100, "cd": 10},
}


def block(marker: str, lang: str) -> str:
    text = DOC.read_text(encoding="utf-8")
    found = re.search(rf"<!-- example: {re.escape(marker)} -->\n```{lang}\n(.*?)```", text, re.S)
    assert found, f"no {lang} block after the '{marker}' marker in {DOC}"
    return found.group(1)


def pass_options() -> list[tuple[str, bool, int]]:
    text = DOC.read_text(encoding="utf-8").split("<!-- example: pass options -->", 1)[1]
    rows = []
    for line in text.splitlines()[3:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows.append((cells[0].strip("`"), cells[2].strip("`") == "true", int(cells[3])))
    return rows


def verify(capsys, checks: Path) -> tuple[dict, int]:
    code = main(
        ["verify", "--data", str(EXAMPLE / "orders.csv"), "--checks", str(checks), "--format", "json"]
    )
    out = capsys.readouterr().out
    return json.loads(out), code


def test_the_doc_shows_the_example_file_verbatim():
    assert block("checks.yaml", "yaml") == (EXAMPLE / "checks.yaml").read_text(encoding="utf-8")


def test_the_seed_example_gives_the_seed_document(spark, capsys):
    report, code = verify(capsys, EXAMPLE / "checks.yaml")
    document = report["measure_check_pass"]
    assert document == json.loads(block("document", "json"))
    assert document["check"] == SEED_CHECKS and document["measure"] == SEED_MEASURES
    assert document["pass"] is True and code == 0
    assert list(document) == ["check", "measure", "pass"]  # the seed's keys, nothing else (sorted JSON)


def test_every_pass_option_of_the_doc_gives_its_verdict_and_exit_code(spark, capsys, tmp_path):
    from streamdq.checks import loads_suite

    options = pass_options()
    assert len(options) == 7 and {o[0] for o in options} >= {"always", "all", "any"}
    base = (EXAMPLE / "checks.yaml").read_text(encoding="utf-8")
    assert base.endswith("pass: always\n")
    for i, (spec, passed, exit_code) in enumerate(options):
        text = base.replace("pass: always\n", f"pass: {spec}\n")
        policy = loads_suite(text).pass_policy  # the file as the doc's row writes it
        assert policy is not None and policy.decide(SEED_CHECKS) is passed, spec
        if spec in ("all", "any"):  # and through streamdq verify: the verdict is the exit code
            checks = tmp_path / f"checks{i}.yaml"
            checks.write_text(text, encoding="utf-8")
            report, code = verify(capsys, checks)
            assert report["measure_check_pass"]["check"] == SEED_CHECKS, spec
            assert (report["measure_check_pass"]["pass"], code) == (passed, exit_code), spec
        else:
            assert exit_code == (0 if passed else 1), spec


def test_without_a_pass_key_the_exit_code_follows_the_check_levels(spark, capsys, tmp_path):
    checks = tmp_path / "checks.yaml"
    checks.write_text((EXAMPLE / "checks.yaml").read_text().replace("pass: always\n", ""), encoding="utf-8")
    report, code = verify(capsys, checks)
    assert report["measure_check_pass"]["pass"] is True  # the seed's default verdict: always
    assert code == 1  # an error-level check failed: verify's exit code as before pass policies


@pytest.mark.parametrize(
    ("expression", "problem"),
    [
        ('open("/etc/passwd") == ""', "unknown function open()"),
        ('measures["Nul Count"] == 0', "did you mean 'Null Count'?"),
    ],
)
def test_a_bad_expression_stops_verify_before_spark_naming_file_and_check(
    capsys, tmp_path, expression, problem
):
    checks = tmp_path / "checks.yaml"
    text = (EXAMPLE / "checks.yaml").read_text().replace('measures["Null Count"] == 0', expression)
    checks.write_text(text, encoding="utf-8")
    code = main(["verify", "--data", str(EXAMPLE / "orders.csv"), "--checks", str(checks)])
    err = capsys.readouterr().err
    assert code == 2
    assert f"{checks}: checks[0].constraints[0].expression.expression: expression 'no null value'" in err
    assert problem in err


def test_the_expression_snippet_of_the_doc_loads():
    from streamdq.checks import loads_suite

    suite = loads_suite(block("expressions", "yaml"), file="snippet.yaml")
    assert [c.params["name"] for c in suite.checks[0].constraints] == ["all order is unique", "steady volume"]
