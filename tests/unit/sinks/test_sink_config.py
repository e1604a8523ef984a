"""validate_sink_specs / build_sinks: clear ConfigErrors naming the key path; sinks built and closed."""

from __future__ import annotations

import socket

import pytest
from streamdq.connectors.sinks import Sink, build_sinks, validate_sink_specs
from streamdq.connectors.sinks.console import ConsoleSink
from streamdq.connectors.sinks.jsonl import JsonLinesSink
from streamdq.connectors.sinks.prometheus import PrometheusSink

from streamdq.errors import ConfigError

GOOD = [
    {"type": "console"},
    {"type": "jsonl", "path": "/tmp/x.jsonl"},
    {"type": "prometheus", "host": "127.0.0.1", "port": 9108},
    {"type": "kafka", "bootstrap_servers": "127.0.0.1:9092", "topic": "streamdq-alerts"},
    {"type": "webhook", "url": "http://127.0.0.1:8080/hook"},
    {
        "type": "email",
        "host": "127.0.0.1",
        "port": 1025,
        "from": "dq@example.com",
        "to": ["oncall@example.com"],
        "starttls": False,
    },
]


def test_the_documented_run_config_sinks_validate():
    assert [s["type"] for s in validate_sink_specs(GOOD)] == [
        "console",
        "jsonl",
        "prometheus",
        "kafka",
        "webhook",
        "email",
    ]


@pytest.mark.parametrize(
    ("specs", "message"),
    [
        (
            [{"type": "console"}, {"type": "jsonl", "path": "a"}, {"type": "prometheus", "port": "abc"}],
            "sinks[2].port: expected an integer 0-65535, got 'abc'",
        ),
        ([{"type": "prometheus", "port": 70000}], "sinks[0].port: expected an integer 0-65535, got 70000"),
        (
            [{"type": "slack"}],
            "sinks[0].type: expected one of console, jsonl, prometheus, kafka, webhook, email, got 'slack'",
        ),
        ([{"type": "jsonl"}], "sinks[0].path: required for a jsonl sink"),
        ([{"type": "kafka", "topic": "t"}], "sinks[0].bootstrap_servers: required for a kafka sink"),
        (
            [{"type": "kafka", "topic": "t", "bootstrap_servers": "localhost"}],
            "sinks[0].bootstrap_servers: expected 'host:port', got 'localhost'",
        ),
        (
            [{"type": "webhook", "url": "ftp://x"}],
            "sinks[0].url: expected an http:// or https:// URL, got 'ftp://x'",
        ),
        (
            [{"type": "email", "host": "h", "from": "a@b", "to": ["nobody"]}],
            "sinks[0].to[0]: expected an e-mail address, got 'nobody'",
        ),
        (
            [{"type": "email", "host": "h", "from": "a@b", "to": "c@d", "starttls": "yes"}],
            "sinks[0].starttls: expected true or false, got 'yes'",
        ),
        ([{"type": "console", "colour": True}], "sinks[0].colour: unknown key for a console sink"),
        (
            [{"type": "webhook", "url": "http://h/x", "min_severity": "Info"}],
            "sinks[0].min_severity: expected one of Warning, Error, got 'Info'",
        ),
        (
            [{"type": "webhook", "url": "http://h/x", "rate_limit_per_minute": 0}],
            "sinks[0].rate_limit_per_minute: expected an integer >= 1, got 0",
        ),
        (
            [{"type": "kafka", "topic": "t", "bootstrap_servers": "h:1", "cooldown_seconds": 5}],
            "sinks[0].cooldown_seconds: unknown key for a kafka sink",
        ),
        ([{"type": "console"}, {"type": "console"}], "sinks[1].name: duplicate sink name 'console'"),
        ({"type": "console"}, "sinks: expected a list"),
        (["console"], "sinks[0]: expected a mapping"),
    ],
)
def test_mistakes_name_the_key_path(specs, message):
    with pytest.raises(ConfigError) as err:
        validate_sink_specs(specs)
    assert message in str(err.value)


def test_build_sinks_constructs_and_closes(tmp_path):
    sinks = build_sinks(
        [
            {"type": "console"},
            {"type": "jsonl", "path": str(tmp_path / "r.jsonl")},
            {"type": "prometheus", "port": 0},
        ],
        dataset="orders",
        state_dir=str(tmp_path / "state"),
    )
    try:
        assert [type(s) for s in sinks] == [ConsoleSink, JsonLinesSink, PrometheusSink]
        assert all(isinstance(s, Sink) for s in sinks)
        assert sinks[2].port > 0
    finally:
        for s in sinks:
            s.close()


def test_port_in_use_is_a_start_up_config_error(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(ConfigError, match=rf"sinks\[1\]\.port: cannot listen on 127.0.0.1:{port}"):
            build_sinks(
                [{"type": "console"}, {"type": "prometheus", "port": port}],
                dataset="d",
                state_dir=str(tmp_path),
            )


def test_alert_sinks_build_from_specs_and_close_without_traffic(tmp_path):
    from streamdq.connectors.sinks.email import EmailSink
    from streamdq.connectors.sinks.kafka_alerts import KafkaAlertSink
    from streamdq.connectors.sinks.webhook import WebhookSink

    sinks = build_sinks(GOOD[3:], dataset="orders", state_dir=str(tmp_path))
    try:
        assert [type(s) for s in sinks] == [KafkaAlertSink, WebhookSink, EmailSink]
        assert all(isinstance(s, Sink) for s in sinks)
        kafka = sinks[0]
        assert isinstance(kafka, KafkaAlertSink)
        assert kafka.journal.path == tmp_path / "orders" / "sinks" / "kafka-alerts-streamdq-alerts.sqlite"
        assert kafka.pending == 0
    finally:
        for s in sinks:
            s.close()


def test_a_spec_is_parsed_once_into_a_frozen_value_with_its_defaults():
    from streamdq.connectors.sinks.config import SinkSpec, parse_sink_specs

    email_raw = {"type": "email", "host": "h", "from": "dq@example.com", "to": ["oncall@example.com"]}
    console, email = parse_sink_specs([{"type": "console", "name": "out"}, email_raw])
    assert isinstance(console, SinkSpec) and console.name == "out"
    assert dict(console.options) == {"stream": "stdout", "verbose": False, "only_changes": False}
    assert email.options["subject_prefix"] == "[streamdq]" and email.options["port"] is None
    assert email["to"] == ["oncall@example.com"] and "port" not in email  # the mapping view drops nulls
    with pytest.raises(TypeError):
        console.options["verbose"] = True  # type: ignore[index]


def test_parsed_specs_are_built_as_they_are(tmp_path, monkeypatch):
    """build_sinks takes the run config's parse: no second validation of a SinkSpec."""
    from streamdq.connectors.sinks import config as sink_config

    specs = sink_config.parse_sink_specs(
        [{"type": "console"}, {"type": "jsonl", "path": str(tmp_path / "a")}]
    )
    calls = []
    monkeypatch.setattr(sink_config, "parse_sink_specs", lambda *a, **k: calls.append(a))
    sinks = build_sinks(specs, dataset="d", state_dir=str(tmp_path))
    try:
        assert [type(s) for s in sinks] == [ConsoleSink, JsonLinesSink] and calls == []
    finally:
        for s in sinks:
            s.close()


def test_the_sink_tables_document_every_key():
    from streamdq.connectors.sinks.config import SINK_TABLES

    for kind, table in SINK_TABLES.items():
        assert table.names()[0] == "name", kind
        assert all(doc for _key, _kind, _default, doc in table.rows()), kind
