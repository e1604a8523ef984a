"""Expressions and ``pass:`` in a run config: checked with everything else before Spark starts,
all mistakes at once, each naming the file, the key and the check (no SparkSession needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from streamdq.checks.pass_policy import PassPolicy
from streamdq.engine.config_check import check_run_config
from streamdq.errors import ConfigError

CHECKS = """measures:
  - {name: rows, sql: "select count(*) from data", result_type: single_value}
checks:
  - description: orders
    constraints:
      - is_complete: order_id
      - expression: {name: not empty, expression: 'measures["rows"] > 0 && metrics["Completeness(order_id)"] > 0.5'}
      - expression: {name: steady, expression: 'previous("rows") == null || measures["rows"] >= previous("rows") / 2'}
PASS
"""


def write(tmp_path: Path, checks: str, extra: str = "") -> Path:
    (tmp_path / "in").mkdir(exist_ok=True)
    (tmp_path / "checks.yaml").write_text(checks)
    run = tmp_path / "run.yaml"
    run.write_text(
        "dataset: orders\n"
        f'source: {{type: files, path: "{tmp_path / "in"}", format: json, '
        'schema: "order_id STRING, ts TIMESTAMP, amount DOUBLE"}\n'
        "event_time: ts\ncheckpoint: ./chk\nstate: {path: ./state}\nchecks_file: checks.yaml\n" + extra
    )
    return run


def lines(run: Path) -> list[str]:
    with pytest.raises(ConfigError) as info:
        check_run_config(run)
    return [e.line() for e in info.value.errors_list()]


def test_a_good_run_config_with_expressions_and_a_pass_policy(tmp_path):
    run = write(tmp_path, CHECKS.replace("PASS", "pass: [steady, orders]"))
    checked = check_run_config(run)
    assert checked.config.pass_spec == ["steady", "orders"]
    inline = write(tmp_path, CHECKS.replace("PASS", ""), extra="pass: {at_least: 2}\n")
    assert check_run_config(inline).config.pass_spec == {"at_least": 2}


def test_expression_and_pass_mistakes_are_reported_with_the_others_at_once(tmp_path):
    bad = (
        CHECKS.replace("PASS", "pass: [steady, stedy]")
        .replace('measures["rows"] > 0', 'measures["row"] > 0')
        .replace('previous("rows") == null ||', 'env["HOME"] == "" ||')
    )
    run = write(tmp_path, bad)
    run.write_text(run.read_text().replace("event_time: ts", "event_time: tss"))  # an unrelated mistake
    found = lines(run)
    checks = str(tmp_path / "checks.yaml")
    assert any(ln.startswith(f"{run}: event_time:") for ln in found)
    assert any(
        ln.startswith(
            f"{checks}: checks[0].constraints[2].expression.expression: expression 'steady': unknown name 'env'"
        )
        for ln in found
    ), found
    assert len(found) == 2, found  # the syntax/sandbox error stops that file's reference checks


def test_unknown_keys_and_policies_after_the_checks_compile(tmp_path):
    bad = CHECKS.replace("PASS", "pass: {at_least: 4}").replace('measures["rows"] > 0', 'measures["row"] > 0')
    found = lines(write(tmp_path, bad))
    checks = str(tmp_path / "checks.yaml")
    assert any(
        ln.startswith(
            f"{checks}: checks[0].constraints[1].expression.expression: expression 'not empty': measures['row']"
        )
        and "did you mean 'rows'?" in ln
        for ln in found
    ), found
    assert any(
        ln.startswith(f"{checks}: pass.at_least: got 4; expected an integer from 1 to 3") for ln in found
    ), found


def test_the_stream_runner_uses_the_run_configs_policy(tmp_path):
    from streamdq.engine.config import load_run_config
    from streamdq.engine.streaming import build_checks

    run = write(tmp_path, CHECKS.replace("PASS", "pass: any"))
    config = load_run_config(run)
    from streamdq.checks.judgement_spec import validate_judgement

    assert validate_judgement(build_checks(config), ["rows"], config.pass_spec) == PassPolicy("any")
