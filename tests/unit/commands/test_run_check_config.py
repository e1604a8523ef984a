"""``streamdq run --check-config run.yaml``: a dry run without Spark, and ``streamdq run``'s own
check before ``get_spark()``.

Each case runs the CLI's ``main`` in a fresh interpreter, then asserts that no SparkSession and no
py4j gateway (hence no JVM) was started in it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCHEMA = "order_id STRING, ts TIMESTAMP, amount DOUBLE"

DRIVER = """
import contextlib, io, json, sys
from streamdq.cli import main
out, err = io.StringIO(), io.StringIO()
with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
    code = main(sys.argv[1:])
from pyspark import SparkContext
from pyspark.sql import SparkSession
print(json.dumps({
    "code": code, "out": out.getvalue(), "err": err.getvalue(),
    "session": SparkSession.getActiveSession() is not None,
    "gateway": SparkContext._gateway is not None or SparkContext._jvm is not None,
}))
"""


def _cli(*args: str) -> dict:
    done = subprocess.run([sys.executable, "-c", DRIVER, *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert "Traceback" not in result["err"] + done.stderr
    assert not result["session"] and not result["gateway"], "a SparkSession / JVM was started"
    return result


def _config(tmp_path: Path, extra: str = "", event_time: str = "ts") -> Path:
    (tmp_path / "in").mkdir(exist_ok=True)
    (tmp_path / "checks.yaml").write_text(
        "checks:\n  - description: d\n    constraints:\n      - is_complete: order_id\n"
        "      - has_mean: {column: amount, assertion: '> 0'}\n"
    )
    run = tmp_path / "run.yaml"
    run.write_text(
        "dataset: orders\n"
        f'source: {{type: files, path: "{tmp_path / "in"}", format: json, schema: "{SCHEMA}"}}\n'
        f"event_time: {event_time}\ncheckpoint: ./chk\nstate: {{path: ./state}}\nchecks_file: checks.yaml\n"
        + extra
    )
    return run


def test_check_config_ok_prints_a_summary_and_starts_no_jvm(tmp_path):
    run = _config(tmp_path, "sinks: [{type: console}, {type: prometheus, port: 0}]\n")
    result = _cli("run", "--check-config", str(run))
    assert result["code"] == 0, result["err"]
    assert result["out"].strip() == (
        f"config OK: source files (json files in {tmp_path / 'in'}, 3 columns), event_time ts, "
        f"1 check (2 constraints), sinks console, prometheus, state {tmp_path / 'state'}, "
        f"checkpoint {tmp_path / 'chk'}"
    )
    assert not (tmp_path / "chk").exists() and not (tmp_path / "state").exists()


def test_check_config_reports_three_mistakes_in_one_run(tmp_path):
    (tmp_path / "plain").write_text("x")
    run = _config(tmp_path, "window: soon\n", event_time="tss")
    run.write_text(run.read_text().replace("state: {path: ./state}", "state: {path: ./plain/state}"))
    result = _cli("run", "--check-config", str(run))
    assert result["code"] == 2
    lines = result["err"].strip().splitlines()
    assert lines[0] == "streamdq: 3 configuration errors (nothing was started):"
    assert [ln.split(": ")[:2] for ln in lines[1:]] == [
        [str(run), "window"],
        [str(run), "event_time"],
        [str(run), "state.path"],
    ]
    assert "; fix: " in lines[2] and "; fix: " in lines[3]


def test_run_checks_the_config_before_spark_starts(tmp_path):
    checks = tmp_path / "checks.yaml"
    run = _config(tmp_path)
    checks.write_text(checks.read_text().replace("column: amount", "column: amont"))
    result = _cli("run", str(run), "--duration", "1")
    assert result["code"] == 2
    assert result["err"].startswith(
        f"streamdq: configuration error: {checks}: checks[0].constraints[1].has_mean.column: "
        "column 'amont' is not in the source schema; did you mean 'amount'?"
    )


def test_yaml_syntax_error_names_the_file_and_line(tmp_path):
    run = tmp_path / "run.yaml"
    run.write_text("dataset: orders\nsource:\n  type: files\n  path: [unclosed\ncheckpoint: ./chk\n")
    result = _cli("run", "--check-config", str(run))
    assert result["code"] == 2
    assert result["err"].startswith(f"streamdq: configuration error: {run}: line ")
    assert "not valid YAML" in result["err"] and "fix: fix the YAML syntax at that line" in result["err"]
