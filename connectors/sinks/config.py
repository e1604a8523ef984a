"""Sink specs from the run config: one table per sink type, parsed once into ``SinkSpec``.

Each sink type's keys are a ``streamdq.config_schema.Table`` in ``SINK_TABLES`` (key, accepted
values, default, fix, doc); the one table-driven validator of the run config parses them.
``parse_sink_specs(specs, where="sinks")`` turns the run config's ``sinks:`` list into a tuple of
frozen ``SinkSpec`` values (``type``, ``name``, ``options`` with every default filled in), without
side effects, and raises ``streamdq.errors.ConfigError`` whose ``key`` is the key path, e.g.
``sinks[2].port: expected an integer 0-65535, got 'abc'`` (numbers must be finite); several
mistakes (in one sink or in several) are raised together as one ``ConfigErrors``.
``build_sinks(specs, *, dataset, state_dir)`` constructs the sinks from parsed ``SinkSpec`` values
as they are (raw mappings are parsed first): the run config parses its sinks once, at load, and
the engine builds from that parse (the Prometheus exporter starts listening here: a port in use is
reported as a ConfigError too). Runs once on the driver at start-up. ``validate_sink_specs`` and
``validate_sink_spec`` are the same parse, returning plain mappings.

A ``SinkSpec`` is also a read-only mapping (``spec["type"]``, ``spec.get("port")``) of its
non-null values, so reports and checks read it as they read the YAML.

Spec keys per type (``type`` is required; ``name`` is optional everywhere; the alert
sinks kafka, webhook and email also take ``min_severity: Warning|Error`` and ``kinds:
[violation, anomaly, resolved]``; webhook and email take a per-sink ``cooldown_seconds`` and
``rate_limit_per_minute``); the tables give the defaults:

- ``console``: ``stream`` (stdout|stderr), ``verbose`` (bool), ``only_changes`` (bool)
- ``jsonl``: ``path`` (required)
- ``prometheus``: ``host`` (default 127.0.0.1), ``port`` (default 9108; 0 = any free port)
- ``kafka``: ``bootstrap_servers`` (required), ``topic`` (required), ``max_buffer``,
  ``producer`` (extra kafka-python producer settings, e.g. security)
- ``webhook``: ``url`` (required, http/https), ``headers`` (mapping), ``timeout_seconds``,
  ``send`` (alerts|reports), ``max_attempts``
- ``email``: ``host``, ``port``, ``from``, ``to`` (required), ``starttls``, ``ssl``,
  ``username``, ``password`` or ``password_env``, ``subject_prefix``, ``timeout_seconds``,
  ``ca_file`` (a private CA for TLS)

>>> (spec,) = parse_sink_specs([{"type": "prometheus", "port": 9200}])
>>> spec.type, spec.name, spec.options["host"], spec["port"]
('prometheus', 'prometheus', '127.0.0.1', 9200)
"""

from __future__ import annotations

import sys
import urllib.parse
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from streamdq.connectors.sinks.base import Sink
from streamdq.connectors.sinks.local_dir import local_path

from streamdq.config_schema import (
    REQUIRED,
    Check,
    Key,
    Table,
    boolean,
    custom,
    integer,
    list_of,
    mapping,
    number,
    one_of,
    str_map,
    text,
)
from streamdq.errors import ConfigError, ErrorCollector


def _servers(path: str, value: Any) -> str | list[str]:
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, list) or not items:
        raise ConfigError(path, f"expected 'host:port' or a list of them, got {value!r}")
    for i, item in enumerate(items):
        host, sep, port = str(item).strip().rpartition(":")
        if not sep or not host or not port.isdigit() or not 0 < int(port) <= 65535:
            where = path if isinstance(value, str) else f"{path}[{i}]"
            raise ConfigError(where, f"expected 'host:port', got {item!r}")
    return value


def _url(path: str, value: Any) -> str:
    parsed = urllib.parse.urlparse(value) if isinstance(value, str) else None
    if parsed is None or parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise ConfigError(path, f"expected an http:// or https:// URL, got {value!r}")
    return str(value)


def _email(path: str, value: Any) -> str:
    if not isinstance(value, str) or "@" not in value:
        raise ConfigError(path, f"expected an e-mail address, got {value!r}")
    return value


def _emails(path: str, value: Any) -> list[str]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not items:
        raise ConfigError(path, f"expected an address or a list of addresses, got {value!r}")
    return list_of(EMAIL)(path, items)


def _local_file(path: str, value: Any) -> str:
    given = text()(path, value)
    if local_path(given) is None:
        raise ConfigError(
            path,
            f"{given!r} is an object-store URI; the jsonl sink appends to a file on the driver",
            "give a local path (or a file:// URI)",
        )
    return str(given)


EMAIL = custom(_email, "e-mail address")
PORT = integer(0, 65535)
PORT_FIX = "give a port number"


def _name() -> Key:
    return Key("name", text(), default=None, doc="the sink's name in logs and reports (default: its type)")


ALERT_KEYS = (
    Key("min_severity", one_of("Warning", "Error"), default=None, doc="alerts below it are not sent"),
    Key(
        "kinds",
        list_of(one_of("violation", "anomaly", "resolved")),
        default=None,
        doc="the alert kinds sent (default: all)",
    ),
)
THROTTLE_KEYS = (
    Key("cooldown_seconds", number(0), default=0.0, doc="seconds before the same alert is sent again"),
    Key("rate_limit_per_minute", integer(low=1), default=None, doc="alerts sent per minute at most"),
)


def _email_rules(values: dict[str, Any], where: str) -> None:
    if values.get("starttls") and values.get("ssl"):
        raise ConfigError(
            f"{where}.starttls", "starttls and ssl are both set", "choose starttls or ssl, not both"
        )
    if values.get("password") is not None and values.get("password_env") is not None:
        raise ConfigError(
            f"{where}.password",
            "password and password_env are both set",
            "give password or password_env, not both",
        )


def _sink(kind: str, *keys: Key, rules: tuple[Any, ...] = ()) -> Table:
    return Table(
        kind, (_name(), *keys), what=f"a {kind} sink", known_label="use one of", extra=("type",), rules=rules
    )


SINK_TABLES: dict[str, Table] = {
    "console": _sink(
        "console",
        Key("stream", one_of("stdout", "stderr"), default="stdout", doc="where reports are printed"),
        Key("verbose", boolean(), default=False, doc="print every metric, not only the summary"),
        Key("only_changes", boolean(), default=False, doc="print a batch only when its verdict changes"),
    ),
    "jsonl": _sink(
        "jsonl",
        Key("path", custom(_local_file, "local file path"), default=REQUIRED, doc="the file appended to"),
    ),
    "prometheus": _sink(
        "prometheus",
        Key("host", text(), default="127.0.0.1", doc="the address the exporter listens on"),
        Key("port", PORT, default=9108, fix=PORT_FIX, doc="its port (0 = any free port)"),
    ),
    "kafka": _sink(
        "kafka",
        Key("bootstrap_servers", custom(_servers, "host:port | list"), default=REQUIRED, doc="the brokers"),
        Key("topic", text(), default=REQUIRED, doc="the alert topic"),
        Key(
            "max_buffer", integer(low=1), default=100_000, doc="alerts kept in the outbox while Kafka is down"
        ),
        Key("producer", mapping(), default=None, doc="extra kafka-python producer settings (security, ...)"),
        *ALERT_KEYS,
    ),
    "webhook": _sink(
        "webhook",
        Key("url", custom(_url, "http(s) URL"), default=REQUIRED, doc="where alerts are POSTed"),
        Key("headers", str_map(), default=None, doc="extra HTTP headers"),
        Key("timeout_seconds", number(0, above=True), default=10.0, doc="per request"),
        Key("send", one_of("alerts", "reports"), default="alerts", doc="alerts, or every batch report"),
        Key("max_attempts", integer(low=1), default=None, doc="delivery attempts per alert"),
        *ALERT_KEYS,
        *THROTTLE_KEYS,
    ),
    "email": _sink(
        "email",
        Key("host", text(), default=REQUIRED, doc="the SMTP server"),
        Key("port", PORT, default=None, fix=PORT_FIX, doc="its port (default 465 with ssl, else 25)"),
        Key("from", EMAIL, default=REQUIRED, doc="the sender address"),
        Key("to", custom(_emails, "address | list"), default=REQUIRED, doc="the recipients"),
        Key("starttls", boolean(), default=False, doc="upgrade the connection with STARTTLS"),
        Key("ssl", boolean(), default=False, doc="connect over TLS"),
        Key("username", text(), default=None, doc="SMTP login"),
        Key("password", text(), default=None, doc="SMTP password (or password_env)"),
        Key("password_env", text(), default=None, doc="the environment variable holding the password"),
        Key("subject_prefix", text(), default="[streamdq]", doc="put before each subject"),
        Key("ca_file", text(), default=None, doc="a private CA for TLS"),
        Key("timeout_seconds", number(0, above=True), default=15.0, doc="per connection"),
        *ALERT_KEYS,
        *THROTTLE_KEYS,
        rules=(_email_rules,),
    ),
}

SCHEMAS: dict[str, dict[str, tuple[bool, Check]]] = {
    kind: {k.name: (k.required, k.check) for k in t.keys if k.name != "name"}
    for kind, t in SINK_TABLES.items()
}
"""``type -> {key: (required, check)}``: a view of ``SINK_TABLES`` for the sink conformance kit."""


@dataclass(frozen=True)
class SinkSpec(Mapping[str, Any]):
    """One parsed sink of the run config: ``type``, ``name`` and ``options`` (every key of its
    table, defaults filled in). As a mapping it is ``{type, name, **options}`` without nulls."""

    type: str
    name: str
    options: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type, "name": self.name}
        out.update((k, v) for k, v in self.options.items() if v is not None)
        return out

    def __getitem__(self, key: str) -> Any:
        return self.as_dict()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.as_dict())

    def __len__(self) -> int:
        return len(self.as_dict())


def parse_sink_spec(spec: Any, where: str) -> SinkSpec:
    """One spec parsed by its type's table; raises ConfigError naming ``where.key``."""
    if not isinstance(spec, Mapping):
        raise ConfigError(where, f"expected a mapping such as {{type: console}}, got {spec!r}")
    kind = spec.get("type")
    if not isinstance(kind, str) or kind not in SINK_TABLES:
        raise ConfigError(f"{where}.type", f"expected one of {', '.join(SINK_TABLES)}, got {kind!r}")
    values = SINK_TABLES[kind].parse(spec, where)
    name = values.pop("name") or kind
    return SinkSpec(kind, name, MappingProxyType(values))


def parse_sink_specs(specs: Any, where: str = "sinks") -> tuple[SinkSpec, ...]:
    """Every spec of the ``sinks:`` list parsed (all mistakes at once); names must be distinct."""
    if isinstance(specs, SinkSpec) or not isinstance(specs, list | tuple):
        raise ConfigError(
            where, f"expected a list of sink mappings such as [{{type: console}}], got {specs!r}"
        )
    errs = ErrorCollector()
    parsed = [errs.get(parse_sink_spec, spec, f"{where}[{i}]", default=None) for i, spec in enumerate(specs)]
    names = [s.name if s is not None else None for s in parsed]
    for i, name in enumerate(names):
        if name is not None and name in names[:i]:
            errs.add(
                ConfigError(
                    f"{where}[{i}].name", f"duplicate sink name {name!r}", "give each sink a distinct name"
                )
            )
    errs.raise_if_any()
    return tuple(s for s in parsed if s is not None)


def validate_sink_spec(spec: Any, where: str) -> dict[str, Any]:
    """``parse_sink_spec`` as a plain mapping (``SinkSpec.as_dict``)."""
    return parse_sink_spec(spec, where).as_dict()


def validate_sink_specs(specs: Any, where: str = "sinks") -> list[dict[str, Any]]:
    """``parse_sink_specs`` as plain mappings."""
    return [s.as_dict() for s in parse_sink_specs(specs, where)]


def _build_one(spec: SinkSpec, *, dataset: str, state_dir: str, where: str) -> Sink:
    kind, name, opt = spec.type, spec.name, spec.options
    alert_opts = {"min_severity": opt.get("min_severity"), "kinds": opt.get("kinds")}
    if kind == "console":
        from streamdq.connectors.sinks.console import ConsoleSink

        stream = sys.stderr if opt["stream"] == "stderr" else None
        return ConsoleSink(name, stream=stream, verbose=opt["verbose"], only_changes=opt["only_changes"])
    if kind == "jsonl":
        from streamdq.connectors.sinks.jsonl import JsonLinesSink

        try:
            return JsonLinesSink(local_path(opt["path"]) or opt["path"], name)
        except OSError as exc:
            raise ConfigError(f"{where}.path", f"cannot open {opt['path']!r} for appending: {exc}") from exc
    if kind == "prometheus":
        from streamdq.connectors.sinks.prometheus import PrometheusSink

        host, port = opt["host"], opt["port"]
        try:
            return PrometheusSink(host, port, name)
        except OSError as exc:
            raise ConfigError(
                f"{where}.port", f"cannot listen on {host}:{port}: {exc}", "choose a free port, or 0 for any"
            ) from exc
    if kind == "kafka":
        from streamdq.connectors.sinks.kafka_alerts import KafkaAlertSink

        outbox_dir = local_path(state_dir)
        if outbox_dir is None:
            raise ConfigError(
                where,
                f"the alert outbox lives on the driver's disk, not under {state_dir!r}",
                "give state.path or checkpoint a local path, or set STREAMDQ_LOCAL_DIR",
            )

        return KafkaAlertSink(
            opt["bootstrap_servers"],
            opt["topic"],
            state_dir=Path(outbox_dir) / dataset if dataset else outbox_dir,
            name=name,
            max_buffer=opt["max_buffer"],
            producer_config=opt["producer"],
            **alert_opts,
        )
    if kind == "webhook":
        from streamdq.connectors.sinks.webhook import WebhookSink

        return WebhookSink(
            opt["url"],
            name,
            headers=opt["headers"],
            timeout_seconds=opt["timeout_seconds"],
            send=opt["send"],
            max_attempts=opt["max_attempts"],
            cooldown_seconds=opt["cooldown_seconds"],
            rate_limit_per_minute=opt["rate_limit_per_minute"],
            **alert_opts,
        )
    if kind == "email":
        from streamdq.connectors.sinks.email import EmailSink

        return EmailSink(
            opt["host"],
            opt["port"] if opt["port"] is not None else (465 if opt["ssl"] else 25),
            opt["from"],
            opt["to"],
            name,
            starttls=opt["starttls"],
            use_ssl=opt["ssl"],
            username=opt["username"],
            password=opt["password"],
            password_env=opt["password_env"],
            subject_prefix=opt["subject_prefix"],
            timeout_seconds=opt["timeout_seconds"],
            ca_file=opt["ca_file"],
            cooldown_seconds=opt["cooldown_seconds"],
            rate_limit_per_minute=opt["rate_limit_per_minute"],
            **alert_opts,
        )
    raise ConfigError(f"{where}.type", f"unknown sink type {kind!r}")  # unreachable after the parse


def build_sinks(specs: Sequence[SinkSpec | Mapping[str, Any]], *, dataset: str, state_dir: str) -> list[Sink]:
    """Construct every sink; on a failure the ones already built are closed.

    ``SinkSpec`` values (the run config's parse) are built as they are; anything else (raw
    mappings) is parsed first (``parse_sink_specs``)."""
    parsed = tuple(specs) if all(isinstance(s, SinkSpec) for s in specs) else parse_sink_specs(list(specs))
    built: list[Sink] = []
    try:
        for i, spec in enumerate(parsed):
            assert isinstance(spec, SinkSpec)
            built.append(_build_one(spec, dataset=dataset, state_dir=state_dir, where=f"sinks[{i}]"))
    except BaseException:
        for sink in built:
            sink.close()
        raise
    return built
