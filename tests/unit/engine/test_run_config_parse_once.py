"""A run config is parsed once (issue 21 item 2): ``streamdq run`` checks the file
(``check_run_config``) and the engine (``StreamRunner``) runs from that same parse, so every
section's validator runs exactly once per load, and the engine validates nothing again."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import streamdq.connectors.sinks.config as sinks_module
import streamdq.connectors.sources.spec as source_module

import streamdq.alerts.policy as policy_module
import streamdq.autovalidate.avh.monitor as avh_module
import streamdq.autovalidate.quality.monitor as quality_module
import streamdq.checks.judgement_spec as judgement_module
import streamdq.checks.measure_spec as measure_module
import streamdq.checks.spec as checks_module
import streamdq.config_schema as schema_module
from streamdq.engine.config import ChecksSpec, RunConfig, load_run_config
from streamdq.engine.config_check import check_run_config
from streamdq.errors import ConfigError

SCHEMA = "order_id STRING, ts TIMESTAMP, amount DOUBLE"
CHECKS = """checks:
  - description: sane
    constraints:
      - is_complete: order_id
measures:
  - name: big
    sql: "SELECT count(*) AS value FROM data WHERE amount > 100"
pass: [sane]
"""


def _run_yaml(tmp_path: Path) -> Path:
    (tmp_path / "in").mkdir()
    (tmp_path / "checks.yaml").write_text(CHECKS)
    run = tmp_path / "run.yaml"
    run.write_text(
        "dataset: orders\n"
        f'source: {{type: files, path: "{tmp_path / "in"}", schema: "{SCHEMA}"}}\n'
        "event_time: ts\ncheckpoint: ./chk\nchecks_file: checks.yaml\n"
        f'sinks: [{{type: console}}, {{type: jsonl, path: "{tmp_path / "out.jsonl"}"}}]\n'
        "alerts: {cooldown_seconds: 60}\n"
        "supervision: {max_restarts: 2}\n"
        "event_time_bounds: {past: 30d}\n"
        "quality_score: {alert_at: 7}\n"
        "auto_validate: {columns: [amount], history: 8}\n"
    )
    return run


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Counts every run of each section's validator."""
    seen: Counter[str] = Counter()

    def spy(module: Any, name: str) -> None:
        original: Callable[..., Any] = getattr(module, name)

        def counted(*args: Any, **kwargs: Any) -> Any:
            seen[name] += 1
            return original(*args, **kwargs)

        monkeypatch.setattr(module, name, counted)

    spy(source_module, "parse_source_spec")
    spy(source_module, "validate_source_spec")
    spy(source_module, "declared_schema")
    spy(sinks_module, "parse_sink_specs")
    spy(checks_module, "checks_from_list")
    spy(measure_module, "checked_measures")
    spy(judgement_module, "validate_judgement")
    spy(quality_module, "quality_settings")
    spy(quality_module, "quality_monitor")
    spy(avh_module, "auto_validate_settings")
    spy(avh_module, "auto_validate_monitor")
    from_spec = policy_module.AlertPolicy.from_spec

    def counted_policy(cls: Any, *args: Any, **kwargs: Any) -> Any:
        seen["AlertPolicy.from_spec"] += 1
        return from_spec(*args, **kwargs)

    monkeypatch.setattr(policy_module.AlertPolicy, "from_spec", classmethod(counted_policy))
    table_parse = schema_module.Table.parse

    def counted_table(self: schema_module.Table, *args: Any, **kwargs: Any) -> Any:
        seen[f"table {self.name}"] += 1
        return table_parse(self, *args, **kwargs)

    monkeypatch.setattr(schema_module.Table, "parse", counted_table)
    return seen


ONCE = {
    "parse_source_spec",
    "table source files",
    "declared_schema",
    "parse_sink_specs",
    "checks_from_list",
    "checked_measures",
    "validate_judgement",
    "AlertPolicy.from_spec",
    "table run config",
    "table supervision",
    "table event_time_bounds",
    "table console",
    "table jsonl",
    "table auto_validate",
    "quality_settings",
    "auto_validate_settings",
}


def test_check_config_and_the_engine_share_one_parse(tmp_path: Path, calls: Counter[str]) -> None:
    from streamdq.engine.streaming import StreamRunner

    checked = check_run_config(_run_yaml(tmp_path))
    assert {name: calls[name] for name in ONCE} == dict.fromkeys(ONCE, 1)
    assert calls["validate_source_spec"] == 0  # the load parses; nothing validates on the side
    assert calls["quality_monitor"] == calls["auto_validate_monitor"] == 0  # no monitor built to validate
    before = Counter(calls)
    runner = StreamRunner(None, checked.config)  # type: ignore[arg-type]  # no Spark: wiring only
    try:
        built = Counter({"quality_monitor": 1, "auto_validate_monitor": 1})
        assert calls == before + built, "the engine validated a section again, or built a monitor twice"
        assert [m.key for m in runner.monitors] == ["auto_validate", "quality_score"]
        assert runner.checks == list(checked.config.checks_spec.checks)
        assert runner.alert_policy is checked.config.policy
        assert runner.alert_policy.cooldown_seconds == 60
        assert [type(s).__name__ for s in runner.sinks] == ["ConsoleSink", "JsonLinesSink"]
        assert [f.measure.name for f in runner.measures.forms] == ["big"]
        assert runner._build_judge().pass_policy is checked.config.checks_spec.pass_policy
    finally:
        for sink in runner.sinks:
            sink.close()


def test_the_parse_is_typed_and_frozen(tmp_path: Path) -> None:
    config = load_run_config(_run_yaml(tmp_path))
    assert isinstance(config, RunConfig) and isinstance(config.checks_spec, ChecksSpec)
    assert config.checks_spec.origin == str(tmp_path / "checks.yaml")
    assert [c.description for c in config.checks_spec.checks] == ["sane"]
    assert config.source_schema is not None and config.source_schema.fieldNames()[:3] == [
        "order_id",
        "ts",
        "amount",
    ]
    assert [s.name for s in config.sinks] == ["console", "jsonl"] and config.sinks[1]["path"].endswith(
        "out.jsonl"
    )
    assert config.supervision.max_restarts == 2 and config.event_time_bounds.past is not None
    assert config.checks == list(config.checks_spec.raw_checks) and config.pass_spec == ["sane"]
    with pytest.raises(AttributeError):
        config.dataset = "other"  # type: ignore[misc]


def test_a_bad_key_of_a_section_stands_in_alone(tmp_path: Path) -> None:
    """With several mistakes, the rest of a section still parses (the checks go on from it)."""
    from streamdq.engine.config import read_run_config

    config, errs = read_run_config(
        {
            "dataset": "d",
            "source": {"type": "generator"},
            "checkpoint": str(tmp_path / "chk"),
            "state": {"path": str(tmp_path / "s"), "retention_hours": "a week"},
            "supervision": {"max_restarts": -1, "poison": "stop"},
        }
    )
    assert [e.key for e in errs.errors] == ["state.retention_hours", "supervision.max_restarts"]
    assert config is not None and config.state.path == str(tmp_path / "s")
    assert config.state.retention_hours == 168.0 and config.supervision.poison == "stop"


@pytest.mark.parametrize(
    ("alerts", "key", "problem"),
    [
        ({"cooldown_seconds": float("inf")}, "alerts.cooldown_seconds", "expected a finite number >= 0"),
        ({"min_rows_floor": 2.5}, "alerts.min_rows_floor", "expected an integer >= 0"),
        ({"renotify_seconds": -1}, "alerts.renotify_seconds", "expected a finite number >= 0"),
        ({"alert_on_anomalies": "yes"}, "alerts.alert_on_anomalies", "expected true or false"),
    ],
)
def test_the_alert_policy_is_parsed_by_its_table(alerts: dict[str, Any], key: str, problem: str) -> None:
    base = {"dataset": "d", "source": {"type": "generator"}, "checkpoint": "/tmp/chk"}
    assert load_run_config({**base, "alerts": {"min_rows_floor": 100.0}}).policy.min_rows_floor == 100
    with pytest.raises(ConfigError) as err:
        load_run_config({**base, "alerts": alerts})
    assert err.value.key == key and err.value.problem.startswith(problem), err.value


def test_the_checks_file_is_read_and_parsed_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = _run_yaml(tmp_path)
    reads: list[str] = []
    read_text = Path.read_text

    def counted(self: Path, *args: Any, **kwargs: Any) -> str:
        reads.append(self.name)
        return read_text(self, *args, **kwargs)

    monkeypatch.setattr(Path, "read_text", counted)
    config = load_run_config(run)
    assert reads.count("checks.yaml") == 1, reads
    assert config.checks_spec.raw_pass == ["sane"] and [m.name for m in config.checks_spec.measures] == [
        "big"
    ]


@pytest.mark.parametrize(
    ("given", "trigger"),
    [
        (5, "5 seconds"),
        ("2s", "2 seconds"),
        ("1 minute", "60 seconds"),
        ("once", "once"),
        # to the nearest millisecond (1.001 * 1000 is 1000.999...), never a zero interval
        ("1.001 seconds", "1001 milliseconds"),
        (0.0001, "1 milliseconds"),
    ],
)
def test_the_trigger_is_parsed_to_what_spark_takes(given: Any, trigger: str) -> None:
    base = {"dataset": "d", "source": {"type": "generator"}, "checkpoint": "/tmp/chk"}
    assert load_run_config({**base, "trigger": given}).trigger == trigger


KAFKA_SOURCE = {
    "type": "kafka",
    "bootstrap_servers": "127.0.0.1:1",
    "topic": "orders",
    "implementation": "python",
    "client": "kafka-python",
    "schema": SCHEMA,
    "required": ["order_id"],
}


@pytest.mark.parametrize(
    ("source", "table"),
    [
        (KAFKA_SOURCE, "source kafka"),
        ({"type": "generator", "rows_per_second": 5, "seed": 1}, "source generator"),
    ],
)
def test_the_source_is_parsed_once_at_load_and_read_as_it_is(
    spark: Any, tmp_path: Path, calls: Counter[str], monkeypatch: pytest.MonkeyPatch, source: Any, table: str
) -> None:
    """The source section runs its table once at load (a kafka source's ``KafkaSpec`` with it);
    ``read_source`` at start reads the parsed ``SourceSpec`` and validates nothing again."""
    import streamdq.connectors.sources.kafka_options as kafka_options_module
    from streamdq.connectors.sources import SourceSpec

    from streamdq.engine.streaming import StreamRunner

    built: list[str] = []
    from_parsed = kafka_options_module.KafkaSpec.from_parsed.__func__  # type: ignore[attr-defined]

    def counted_from_parsed(cls: Any, *args: Any, **kwargs: Any) -> Any:
        built.append("from_parsed")
        return from_parsed(cls, *args, **kwargs)

    monkeypatch.setattr(kafka_options_module.KafkaSpec, "from_parsed", classmethod(counted_from_parsed))
    config = load_run_config({"dataset": "d", "source": source, "checkpoint": str(tmp_path / "chk")})
    assert isinstance(config.source_spec, SourceSpec) and config.source_spec.type == source["type"]
    assert config.source_schema is config.source_spec.schema
    assert calls["parse_source_spec"] == calls[f"table {table}"] == calls["declared_schema"] == 1
    kafka_builds = 1 if source["type"] == "kafka" else 0
    assert len(built) == kafka_builds and (config.source_spec.kafka is not None) == bool(kafka_builds)
    before, parsed_before = Counter(calls), list(built)
    frame = StreamRunner(spark, config).source_frame()
    assert frame.isStreaming and "_streamdq_error" in frame.columns
    assert calls == before and built == parsed_before, "the source was validated again at start"
    assert calls["table kafka"] == 0  # KafkaSpec.from_source (the bare-mapping door) never ran


def test_source_mistakes_are_reported_at_once_with_their_keys(tmp_path: Path) -> None:
    from streamdq.engine.config import read_run_config

    _, errs = read_run_config(
        {
            "dataset": "d",
            "source": {**KAFKA_SOURCE, "topic": None, "min_partitions": 0, "starting_offsets": "yesterday"},
            "checkpoint": str(tmp_path / "chk"),
        }
    )
    problems = {e.key: e.problem for e in errs.errors}
    assert problems == {
        "source.min_partitions": "must be a positive integer, got 0",
        "source.starting_offsets": "unknown value 'yesterday'",
        "source.topic": "is required for a kafka source",
    }
    assert all(e.fix for e in errs.errors)
