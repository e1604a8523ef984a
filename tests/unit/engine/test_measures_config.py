"""Measures in a run config (``checks_file`` or inline): every SQL mistake and every column the
source's DDL lacks is reported by the pre-Spark config check, naming the file, key, line and
measure; the streaming runner builds each measure's form from the declared schema."""

from __future__ import annotations

from pathlib import Path

import pytest

from streamdq.engine.config_check import check_run_config
from streamdq.engine.streaming import build_measures
from streamdq.errors import ConfigError

SCHEMA = "order_id STRING, ts TIMESTAMP, amount DOUBLE, qty INT"
CHECKS = """checks:
  - description: orders are sane
    constraints:
      - is_complete: order_id
measures:
  - {name: nulls, sql: "select sum(cast((amount is null) as int)) from data", result_type: single_value}
  - {name: typo, sql: "select count(* from data", result_type: single_value}
  - {name: colour, sql: "select count(*) from data where colour = 'red'", result_type: single_value}
  - {name: other, sql: "select count(*) from orders", result_type: single_value}
  - {name: meta, sql: "select count(_streamdq_error) from data", result_type: single_value}
"""


def _write(tmp_path: Path, checks: str) -> Path:
    (tmp_path / "in").mkdir(exist_ok=True)
    (tmp_path / "checks.yaml").write_text(checks)
    run = tmp_path / "run.yaml"
    run.write_text(
        "dataset: orders\n"
        f'source: {{type: files, path: "{tmp_path / "in"}", format: json, schema: "{SCHEMA}"}}\n'
        "event_time: ts\ncheckpoint: ./chk\nstate: {path: ./state}\ncheckpoint: ./chk\n"
        "checks_file: checks.yaml\n"
    )
    return run


def test_every_measure_mistake_in_a_checks_file_is_reported_at_once_before_spark(tmp_path):
    run = _write(tmp_path, CHECKS)
    with pytest.raises(ConfigError) as info:
        check_run_config(run)
    lines = [e.line() for e in info.value.errors_list()]
    checks = str(tmp_path / "checks.yaml")
    assert len(lines) == 4, lines
    assert (
        lines[0].startswith(f"{checks}: measures[1].sql: measure 'typo': SQL syntax error")
        and "(line 7)" in lines[0]
    )
    assert lines[1].startswith(
        f"{checks}: measures[2].sql: measure 'colour': column 'colour' does not exist "
        "(columns: order_id, ts, amount, qty)"
    )
    assert lines[2].startswith(f"{checks}: measures[3].sql: measure 'other': reads table 'orders'")
    assert "measure 'meta': column '_streamdq_error' does not exist" in lines[3]


def test_good_measures_pass_and_take_their_form_from_the_declared_schema(tmp_path):
    good = CHECKS.split("  - {name: typo")[0] + (
        "  - {name: q, sql: 'select sum(qty), avg(qty) from data', result_type: list}\n"
        "  - {name: d, sql: 'select count(distinct order_id) from data', result_type: single_value}\n"
    )
    checked = check_run_config(_write(tmp_path, good))
    runner = build_measures(checked.config, checked.schema)
    forms = {f.measure.name: f for f in runner.forms}
    assert forms["nulls"].compiled and forms["q"].compiled and not forms["d"].compiled
    assert [p.integral for p in forms["q"].parts] == [True, False]  # sum(INT) is an integer
    assert {a.NAME for a in runner.analyzers()} == {"Compliance", "Sum", "Mean"}
