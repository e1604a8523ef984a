"""The whole run config checked before Spark starts (streamdq/engine/config_check.py).

Hostile configs, each a mistake an operator makes: every one is reported as a
``file: key: problem; fix: ...`` line, all of them in one run, without a traceback and
without Spark (these tests need no SparkSession).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from streamdq.engine.config import load_run_config, read_run_config
from streamdq.engine.config_check import (
    check_run_config,
    format_errors,
    writable_dir_problem,
    writable_file_problem,
)
from streamdq.errors import ConfigError, ConfigErrors

SCHEMA = "order_id STRING, ts TIMESTAMP, amount DOUBLE, country STRING"
CHECKS = """checks:
  - description: orders are sane
    constraints:
      - is_complete: order_id
      - has_mean: {column: amount, assertion: "> 0"}
"""


def _write(tmp_path: Path, *, source: str | None = None, extra: str = "", checks: str = CHECKS) -> Path:
    (tmp_path / "in").mkdir(exist_ok=True)
    (tmp_path / "checks.yaml").write_text(checks)
    src = source or (
        f'source: {{type: files, path: "{tmp_path / "in"}", format: json, schema: "{SCHEMA}", '
        "required: [order_id, ts]}\n"
    )
    run = tmp_path / "run.yaml"
    run.write_text(
        "dataset: orders\n" + src + "event_time: ts\ncheckpoint: ./chk\nstate: {path: ./state}\n"
        "checks_file: checks.yaml\n" + extra
    )
    return run


def _lines(run: Path) -> list[str]:
    with pytest.raises(ConfigError) as info:
        check_run_config(run)
    return [e.line() for e in info.value.errors_list()]


def _one(run: Path) -> str:
    lines = _lines(run)
    assert len(lines) == 1, lines
    return lines[0]


def test_a_good_config_passes_with_a_summary(tmp_path):
    run = _write(tmp_path, extra="sinks: [{type: console}, {type: jsonl, path: out.jsonl}]\n")
    checked = check_run_config(run)
    summary = checked.summary()
    assert summary.startswith("config OK: source files (json files in ")
    assert "4 columns" in summary and "event_time ts" in summary
    assert "1 check (2 constraints)" in summary and "sinks console, jsonl" in summary
    assert (
        checked.schema is not None and checked.schema.fieldNames()[:4] == SCHEMA.replace(",", "").split()[::2]
    )
    assert not (tmp_path / "chk").exists() and not (tmp_path / "state").exists(), "a dry run creates nothing"


def test_bad_ddl_names_the_field_and_the_fix(tmp_path):
    bad = SCHEMA.replace("DOUBLE", "DUBLE")
    run = _write(tmp_path, source=f'source: {{type: files, path: "{tmp_path / "in"}", schema: "{bad}"}}\n')
    line = _one(run)
    assert line.startswith(f"{run}: source.schema: not a valid Spark DDL schema: field 'amount'")
    assert "unknown type 'DUBLE'" in line and "did you mean DOUBLE?" in line
    assert "; fix: use a Spark SQL type" in line


def test_unbalanced_ddl_is_an_error(tmp_path):
    bad = "order_id STRING, ts TIMESTAMP, tags ARRAY<STRING"
    run = _write(tmp_path, source=f'source: {{type: files, path: "{tmp_path / "in"}", schema: "{bad}"}}\n')
    line = _one(run)
    assert "source.schema: not a valid Spark DDL schema: field 'tags': expected '>' at the end" in line


def test_event_time_not_in_schema(tmp_path):
    run = _write(tmp_path, extra="")
    run.write_text(run.read_text().replace("event_time: ts", "event_time: tss"))
    line = _one(run)
    assert line.startswith(f"{run}: event_time: column 'tss' is not in the source schema; did you mean 'ts'?")
    assert "(columns: order_id, ts, amount, country)" in line and "; fix: " in line


def test_event_time_must_be_a_timestamp(tmp_path):
    run = _write(tmp_path)
    run.write_text(run.read_text().replace("event_time: ts", "event_time: amount"))
    line = _one(run)
    assert "event_time: column 'amount' is DOUBLE, not a timestamp" in line
    assert "fix: use one of the timestamp columns: ts" in line


def test_event_time_may_be_the_kafka_timestamp(tmp_path):
    source = f"source: {{type: kafka, bootstrap_servers: '127.0.0.1:9092', topic: t, schema: \"{SCHEMA}\"}}\n"
    run = _write(tmp_path, source=source)
    run.write_text(run.read_text().replace("event_time: ts", "event_time: _streamdq_kafka_timestamp"))
    assert check_run_config(run).config.event_time == "_streamdq_kafka_timestamp"


def test_required_not_in_schema_names_every_missing_field(tmp_path):
    source = (
        f'source: {{type: files, path: "{tmp_path / "in"}", schema: "{SCHEMA}", '
        "required: [order_id, orderid, tstamp]}\n"
    )
    lines = _lines(_write(tmp_path, source=source))
    assert [ln.split(": ")[1] for ln in lines] == ["source.required", "source.required"]
    assert "field 'orderid' is not in the schema" in lines[0]
    assert "field 'tstamp' is not in the schema" in lines[1]


def test_check_on_a_missing_column_fails_at_start_naming_the_checks_file_and_line(tmp_path):
    checks = CHECKS.replace("has_mean: {column: amount", "has_mean: {column: amout")
    line = _one(_write(tmp_path, checks=checks))
    assert line.startswith(f"{tmp_path / 'checks.yaml'}: checks[0].constraints[1].has_mean.column: ")
    assert "column 'amout' is not in the source schema; did you mean 'amount'?" in line
    assert "(line 5)" in line


def test_detector_metric_and_monitor_columns_are_checked(tmp_path):
    checks = CHECKS + (
        "      - has_no_anomalies: {metric: {analyzer: Mean, column: price}, "
        "detector: {type: simple_threshold, upper_bound: 10}}\n"
    )
    run = _write(tmp_path, checks=checks, extra="auto_validate: {columns: [amount, countri]}\n")
    lines = _lines(run)
    assert len(lines) == 2, lines
    assert (
        "checks[0].constraints[2].has_no_anomalies.metric: column 'price' is not in the source schema"
        in lines[0]
    )
    assert lines[1].startswith(
        f"{run}: auto_validate.columns[1]: column 'countri' is not in the source schema"
    )


def test_a_week_for_a_number_is_an_error_not_a_traceback(tmp_path):
    run = _write(tmp_path)
    run.write_text(
        run.read_text().replace("state: {path: ./state}", 'state: {path: ./state, retention_hours: "a week"}')
    )
    line = _one(run)
    assert line == (
        f"{run}: state.retention_hours: expected a number of hours > 0, got 'a week' (line 5); "
        "fix: write e.g. retention_hours: 168 (a week)"
    )
    with pytest.raises(ConfigError, match="state.retention_hours"):
        load_run_config(run)


def test_state_path_under_a_regular_file(tmp_path):
    (tmp_path / "plain").write_text("not a folder")
    run = _write(tmp_path)
    run.write_text(run.read_text().replace("state: {path: ./state}", "state: {path: ./plain/state}"))
    line = _one(run)
    assert line.startswith(
        f"{run}: state.path: {tmp_path / 'plain'} is a file, so {tmp_path / 'plain' / 'state'}"
    )
    assert "fix: point state.path at a folder this job can write" in line


def test_unwritable_checkpoint(tmp_path):
    # /proc refuses new entries for every user, root included (a chmod'ed folder would not stop root)
    run = _write(tmp_path)
    run.write_text(run.read_text().replace("checkpoint: ./chk", "checkpoint: /proc/streamdq-test-chk"))
    line = _one(run)
    assert line.startswith(
        f"{run}: checkpoint: /proc/streamdq-test-chk cannot be written: the existing folder /proc"
    )
    assert not Path("/proc/streamdq-test-chk").exists()


def test_object_store_paths_are_not_checked_locally(tmp_path):
    run = _write(tmp_path)
    text = run.read_text().replace("checkpoint: ./chk", "checkpoint: s3a://bucket/chk")
    run.write_text(
        text.replace("state: {path: ./state}", "state: {path: 'abfss://c@a.dfs.core.windows.net/s'}")
    )
    checked = check_run_config(run)
    assert checked.config.checkpoint == "s3a://bucket/chk"
    assert writable_dir_problem("gs://bucket/x") is None


def test_jsonl_sink_file_must_be_appendable(tmp_path):
    (tmp_path / "plain").write_text("x")
    assert writable_file_problem(str(tmp_path / "plain" / "out.jsonl")) is not None
    assert writable_file_problem(str(tmp_path)) == f"{tmp_path} is a folder, not a file"
    assert writable_file_problem(str(tmp_path / "new" / "out.jsonl")) is None


def test_three_mistakes_three_lines_in_one_run(tmp_path):
    (tmp_path / "plain").write_text("x")
    run = _write(tmp_path, extra="window: soon\nsinks: [{type: prometheus, port: 99999}]\n")
    text = run.read_text().replace(
        "state: {path: ./state}", 'state: {path: ./plain/s, retention_hours: "a week"}'
    )
    run.write_text(text.replace("event_time: ts", "event_time: when"))
    with pytest.raises(ConfigErrors) as info:
        check_run_config(run)
    lines = info.value.lines()
    keys = [ln.split(": ")[1] for ln in lines]
    assert keys == ["window", "state.retention_hours", "sinks[0].port", "event_time", "state.path"], lines
    assert all(ln.startswith(f"{run}: ") for ln in lines)
    report = format_errors(info.value)
    assert report.splitlines()[0] == "streamdq: 5 configuration errors (nothing was started):"
    assert report.splitlines()[1:] == lines


def test_several_check_mistakes_at_once(tmp_path):
    checks = """checks:
  - description: one
    constraints:
      - is_complet: order_id
      - has_mean: {column: amount}
  - description: ""
    constraints: [{is_complete: order_id}]
"""
    lines = _lines(_write(tmp_path, checks=checks))
    assert len(lines) == 3, lines
    assert "checks[0].constraints[0]: unknown constraint 'is_complet'" in lines[0]
    assert "checks[0].constraints[1].has_mean.assertion: missing required key" in lines[1]
    assert "checks[1].description" in lines[2]
    assert all(ln.startswith(str(tmp_path / "checks.yaml")) for ln in lines)


def test_yaml_syntax_error_names_file_and_line(tmp_path):
    run = tmp_path / "run.yaml"
    run.write_text("dataset: orders\nsource: {type: generator\ncheckpoint: ./chk\n")
    line = _one(run)
    assert line.startswith(f"{run}: line 3, column 11: not valid YAML: expected ',' or '}}'")
    assert line.endswith("; fix: fix the YAML syntax at that line")


def test_checks_file_yaml_syntax_error_names_its_line(tmp_path):
    line = _one(_write(tmp_path, checks="checks:\n  - description: x\n   constraints: []\n"))
    assert line.startswith(
        f"{tmp_path / 'run.yaml'}: checks_file: checks file {tmp_path / 'checks.yaml'}: line 3"
    )


def test_unknown_keys_each_reported(tmp_path):
    run = _write(tmp_path, extra="windwo: 1 minute\nsink: []\n")
    lines = _lines(run)
    assert [ln.split(": ")[1] for ln in lines] == ["sink", "windwo"]
    assert lines[0].split(": ", 2)[2].startswith("unknown key (line 8); fix: known keys: alerts, ")
    assert lines[1].split(": ", 2)[2].startswith("unknown key (line 7); fix: known keys: alerts, ")


def test_alert_policy_is_checked(tmp_path):
    line = _one(_write(tmp_path, extra="alerts: {cooldown: 5}\n"))
    assert "alerts.cooldown: unknown key" in line


def test_read_run_config_collects_and_never_raises(tmp_path):
    run = _write(tmp_path, extra="window: soon\nmax_groups: -1\n")
    config, errs = read_run_config(run)
    assert config is not None and config.window_seconds == 60.0  # the default stands in
    assert [e.key for e in errs.errors] == ["window", "max_groups"]
    missing, errs = read_run_config(tmp_path / "nope.yaml")
    assert missing is None and "cannot read the run config" in errs.errors[0].line()


def test_outbox_folder_from_the_environment_is_checked(tmp_path, monkeypatch):
    (tmp_path / "plain").write_text("x")
    monkeypatch.setenv("STREAMDQ_LOCAL_DIR", str(tmp_path / "plain" / "outbox"))
    line = _one(_write(tmp_path))
    assert line.startswith(f"{tmp_path / 'run.yaml'}: $STREAMDQ_LOCAL_DIR: {tmp_path / 'plain'} is a file")


def test_several_source_mistakes_at_once(tmp_path):
    source = (
        f'source: {{type: files, path: "{tmp_path / "nowhere"}", schema: "{SCHEMA}", '
        "max_files_per_trigger: 0, requried: [ts]}\n"
    )
    lines = _lines(_write(tmp_path, source=source))
    assert [ln.split(": ")[1] for ln in lines] == [
        "source.requried",
        "source.path",
        "source.max_files_per_trigger",
    ], lines


def test_email_sink_secrets_are_checked(tmp_path, monkeypatch):
    monkeypatch.delenv("STREAMDQ_TEST_SMTP_PASSWORD", raising=False)
    sink = (
        "sinks: [{type: email, host: localhost, from: a@b.c, to: [d@e.f], username: u, "
        f"password_env: STREAMDQ_TEST_SMTP_PASSWORD, ca_file: {tmp_path / 'ca.pem'}}}]\n"
    )
    lines = _lines(_write(tmp_path, extra=sink))
    assert [ln.split(": ")[1] for ln in lines] == ["sinks[0].password_env", "sinks[0].ca_file"], lines
    assert "environment variable STREAMDQ_TEST_SMTP_PASSWORD is not set" in lines[0]
    monkeypatch.setenv("STREAMDQ_TEST_SMTP_PASSWORD", "secret")
    (tmp_path / "ca.pem").write_text("-----BEGIN CERTIFICATE-----\n")
    assert check_run_config(tmp_path / "run.yaml").config.sinks[0]["type"] == "email"


def test_schema_file_errors_name_schema_file(tmp_path):
    (tmp_path / "schema.ddl").write_text("order_id STRING, ts TIMESTAMP, amount NUMBER\n")
    source = f'source: {{type: files, path: "{tmp_path / "in"}", schema_file: schema.ddl}}\n'
    run = _write(tmp_path, source=source)
    run.write_text(
        run.read_text().replace("schema_file: schema.ddl", f"schema_file: {tmp_path / 'schema.ddl'}")
    )
    line = _one(run)
    assert line.startswith(f"{run}: source.schema_file: not a valid Spark DDL schema: field 'amount'"), line


def test_missing_required_keys_say_what_to_add(tmp_path):
    run = tmp_path / "run.yaml"
    run.write_text("dataset: orders\n")
    lines = _lines(run)
    assert lines == [
        f"{run}: source: missing required key; fix: add a mapping with a 'type' (kafka | files | clf | generator)",
        f"{run}: checkpoint: missing required key; fix: add a checkpoint directory, e.g. 'checkpoint: ./chk'",
    ]


JUNK = [None, 0, -1, 1.5, True, "", "a week", [], ["x"], {}, {"x": 1}, "`", "../nowhere/\x00"]


def _paths(value, prefix=()):
    """Every key path of a nested config (mappings and lists)."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield (*prefix, k)
            yield from _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield (*prefix, i)
            yield from _paths(v, (*prefix, i))


def _replaced(value, path, junk):
    import copy

    out = copy.deepcopy(value)
    here = out
    for step in path[:-1]:
        here = here[step]
    here[path[-1]] = junk
    return out


def test_no_junk_value_anywhere_ends_in_a_traceback(tmp_path):
    """Every key of a full config replaced by each junk value: a ConfigError or a pass, nothing else."""
    (tmp_path / "in").mkdir()
    good = {
        "dataset": "orders",
        "source": {
            "type": "files",
            "path": str(tmp_path / "in"),
            "format": "csv",
            "schema": SCHEMA,
            "required": ["order_id"],
            "max_files_per_trigger": 2,
        },
        "event_time": "ts",
        "window": "1 minute",
        "watermark": "10 seconds",
        "trigger": "5 seconds",
        "checkpoint": "chk",
        "state": {"path": "state", "retention_hours": 168, "maintenance_every": 10, "log_retention_hours": 1},
        "quarantine": True,
        "checks": [
            {
                "description": "d",
                "level": "warning",
                "constraints": [
                    {"is_complete": {"column": "order_id"}},
                    {"has_mean": {"column": "amount", "assertion": "> 0", "scope": "window"}},
                ],
            }
        ],
        "sinks": [{"type": "console"}, {"type": "jsonl", "path": str(tmp_path / "r.jsonl")}],
        "alerts": {"cooldown_seconds": 5},
        "max_groups": 10,
        "small_batch_rows": 100,
        "auto_validate": {"columns": ["amount"], "history": 30},
        "quality_score": {"alert_at": 6},
        "query_name": "q",
    }
    kafka = dict(
        good,
        source={
            "type": "kafka",
            "bootstrap_servers": "127.0.0.1:9092",
            "topic": "orders",
            "starting_offsets": "earliest",
            "max_records_per_trigger": 100,
            "format": "json",
            "schema": SCHEMA,
            "kafka_options": {"fetch.min.bytes": "1"},
        },
        sinks=[
            {"type": "prometheus", "port": 0},
            {
                "type": "kafka",
                "bootstrap_servers": "127.0.0.1:9092",
                "topic": "alerts",
                "kinds": ["violation"],
            },
            {"type": "webhook", "url": "http://127.0.0.1:1/x", "headers": {"a": "b"}, "cooldown_seconds": 1},
            {"type": "email", "host": "localhost", "from": "a@b.c", "to": ["d@e.f"], "port": 25},
        ],
    )
    generator = dict(
        good,
        source={
            "type": "generator",
            "rows_per_second": 10,
            "seed": 1,
            "incidents": {"every": 60, "duration": 10, "kinds": ["null_burst"]},
        },
        checks=[
            {
                "description": "d",
                "constraints": [
                    {
                        "has_no_anomalies": {
                            "metric": {"analyzer": "Mean", "column": "amount"},
                            "detector": {"type": "online_normal"},
                        }
                    },
                    {"is_contained_in": {"column": "country", "values": ["DE"]}},
                    {"satisfies": {"predicate": "amount > 0", "name": "pos"}},
                ],
            }
        ],
    )
    bases = {"files": good, "kafka": kafka, "generator": generator}
    for config in bases.values():
        check_run_config(config, base_dir=str(tmp_path))
    cases = [("files", p) for p in _paths(good)]
    cases += [
        (name, p)
        for name in ("kafka", "generator")
        for p in _paths(bases[name])
        if p[0] in ("source", "sinks", "checks")
    ]
    tried = 0
    for name, path in cases:
        base = bases[name]
        for junk in JUNK:
            tried += 1
            try:
                check_run_config(_replaced(base, path, junk), base_dir=str(tmp_path))
            except ConfigError as exc:
                assert exc.errors_list() and all(e.line() for e in exc.errors_list())
            except Exception as exc:
                raise AssertionError(f"{path} = {junk!r}: {type(exc).__name__}: {exc}") from exc
    assert tried > 1500
    print(f"{tried} junk configs checked")


def test_prometheus_port_in_use_is_reported(tmp_path):
    import socket

    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen(1)
        port = holder.getsockname()[1]
        line = _one(_write(tmp_path, extra=f"sinks: [{{type: prometheus, host: 127.0.0.1, port: {port}}}]\n"))
        assert f"sinks[0].port: cannot listen on 127.0.0.1:{port}: Address already in use" in line
    check_run_config(tmp_path / "run.yaml")  # free again


def test_the_python_api_checks_a_config_file_as_streamdq_run_does(tmp_path):
    # streamdq.stream(spark, "run.yaml") fails before it touches Spark (no session is passed)
    from streamdq.engine.streaming import StreamRunner

    checks = CHECKS.replace("has_mean: {column: amount", "has_mean: {column: amout")
    run = _write(tmp_path, checks=checks)
    with pytest.raises(ConfigError) as info:
        StreamRunner(None, str(run))  # type: ignore[arg-type]
    assert "column 'amout' is not in the source schema" in str(info.value)
