"""Sink specs from the run config: validation (fail fast) and construction.

``validate_sink_specs(specs, where="sinks")`` checks every spec without side effects and
raises ``streamdq.errors.ConfigError`` whose ``key`` is the key path, e.g.
``sinks[2].port: expected an integer 0-65535, got 'abc'`` (numbers must be finite); several mistakes (in one sink or in
several) are raised together as one ``ConfigErrors``.
``build_sinks(specs, *, dataset, state_dir)`` validates, then constructs the sinks (the
Prometheus exporter starts listening here: a port in use is reported as a ConfigError
too). Runs once on the driver at start-up.

Spec keys per type (``type`` is required; ``name`` is optional everywhere; the alert
sinks kafka, webhook and email also take ``min_severity: Warning|Error`` and ``kinds:
[violation, anomaly, resolved]``; webhook and email take a per-sink ``cooldown_seconds`` and
``rate_limit_per_minute``):

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
"""

from __future__ import annotations

import math
import sys
import urllib.parse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from streamdq.connectors.sinks.base import Sink
from streamdq.connectors.sinks.local_dir import local_path

from streamdq.errors import ConfigError, ErrorCollector

Check = Callable[[str, Any], Any]


def _str(path: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(path, f"expected a non-empty string, got {value!r}")
    return value


def _bool(path: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(path, f"expected true or false, got {value!r}", "write true or false")
    return value


def _port(path: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 65535:
        raise ConfigError(path, f"expected an integer 0-65535, got {value!r}", "give a port number")
    return value


def _positive_int(path: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(path, f"expected an integer >= 1, got {value!r}")
    return value


def _positive_number(path: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < math.inf:
        raise ConfigError(path, f"expected a finite number > 0, got {value!r}")
    return float(value)


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


def _emails(path: str, value: Any) -> list[str]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not items:
        raise ConfigError(path, f"expected an address or a list of addresses, got {value!r}")
    for i, item in enumerate(items):
        if not isinstance(item, str) or "@" not in item:
            raise ConfigError(f"{path}[{i}]", f"expected an e-mail address, got {item!r}")
    return list(items)


def _email(path: str, value: Any) -> str:
    if not isinstance(value, str) or "@" not in value:
        raise ConfigError(path, f"expected an e-mail address, got {value!r}")
    return value


def _local_file(path: str, value: Any) -> str:
    text = _str(path, value)
    if local_path(text) is None:
        raise ConfigError(
            path,
            f"{text!r} is an object-store URI; the jsonl sink appends to a file on the driver",
            "give a local path (or a file:// URI)",
        )
    return text


def _str_map(path: str, value: Any) -> dict[str, str]:
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise ConfigError(path, f"expected a mapping of strings, got {value!r}")
    return dict(value)


def _mapping(path: str, value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ConfigError(path, f"expected a mapping, got {value!r}")
    return dict(value)


def _one_of(*choices: str) -> Check:
    def check(path: str, value: Any) -> str:
        if value not in choices:
            raise ConfigError(path, f"expected one of {', '.join(choices)}, got {value!r}")
        return str(value)

    return check


def _kinds(path: str, value: Any) -> list[str]:
    if not isinstance(value, list) or not value:
        raise ConfigError(path, f"expected a list of violation, anomaly, resolved, got {value!r}")
    return [_one_of("violation", "anomaly", "resolved")(f"{path}[{i}]", v) for i, v in enumerate(value)]


def _non_negative(path: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < math.inf:
        raise ConfigError(path, f"expected a finite number >= 0, got {value!r}")
    return float(value)


ALERT_KEYS: dict[str, Check] = {"min_severity": _one_of("Warning", "Error"), "kinds": _kinds}
THROTTLE_KEYS: dict[str, Check] = {"cooldown_seconds": _non_negative, "rate_limit_per_minute": _positive_int}

# type -> {key: (required, check)}
SCHEMAS: dict[str, dict[str, tuple[bool, Check]]] = {
    "console": {
        "stream": (False, _one_of("stdout", "stderr")),
        "verbose": (False, _bool),
        "only_changes": (False, _bool),
    },
    "jsonl": {"path": (True, _local_file)},
    "prometheus": {"host": (False, _str), "port": (False, _port)},
    "kafka": {
        "bootstrap_servers": (True, _servers),
        "topic": (True, _str),
        "max_buffer": (False, _positive_int),
        "producer": (False, _mapping),
        **{k: (False, c) for k, c in ALERT_KEYS.items()},
    },
    "webhook": {
        "url": (True, _url),
        "headers": (False, _str_map),
        "timeout_seconds": (False, _positive_number),
        "send": (False, _one_of("alerts", "reports")),
        "max_attempts": (False, _positive_int),
        **{k: (False, c) for k, c in ALERT_KEYS.items()},
        **{k: (False, c) for k, c in THROTTLE_KEYS.items()},
    },
    "email": {
        "host": (True, _str),
        "port": (False, _port),
        "from": (True, _email),
        "to": (True, _emails),
        "starttls": (False, _bool),
        "ssl": (False, _bool),
        "username": (False, _str),
        "password": (False, _str),
        "password_env": (False, _str),
        "subject_prefix": (False, _str),
        "ca_file": (False, _str),
        "timeout_seconds": (False, _positive_number),
        **{k: (False, c) for k, c in ALERT_KEYS.items()},
        **{k: (False, c) for k, c in THROTTLE_KEYS.items()},
    },
}


def validate_sink_spec(spec: Any, where: str) -> dict[str, Any]:
    """One spec checked and normalised; raises ConfigError naming ``where.key``."""
    if not isinstance(spec, dict):
        raise ConfigError(where, f"expected a mapping such as {{type: console}}, got {spec!r}")
    kind = spec.get("type")
    if not isinstance(kind, str) or kind not in SCHEMAS:
        raise ConfigError(f"{where}.type", f"expected one of {', '.join(SCHEMAS)}, got {kind!r}")
    schema = SCHEMAS[kind]
    out: dict[str, Any] = {"type": kind}
    errs = ErrorCollector()
    for key, value in spec.items():
        if key == "type":
            continue
        if key == "name":
            out["name"] = errs.get(_str, f"{where}.name", value, default=kind)
            continue
        if key not in schema:
            known = ", ".join(["name", *schema])
            errs.add(ConfigError(f"{where}.{key}", f"unknown key for a {kind} sink", f"use one of {known}"))
            continue
        with errs.catch():
            out[key] = schema[key][1](f"{where}.{key}", value)
    for key, (required, _check) in schema.items():
        if required and key not in spec:
            errs.add(ConfigError(f"{where}.{key}", f"required for a {kind} sink"))
    errs.raise_if_any()
    if kind == "email":
        if out.get("starttls") and out.get("ssl"):
            raise ConfigError(
                f"{where}.starttls", "starttls and ssl are both set", "choose starttls or ssl, not both"
            )
        if "password" in out and "password_env" in out:
            raise ConfigError(
                f"{where}.password",
                "password and password_env are both set",
                "give password or password_env, not both",
            )
    return out


def validate_sink_specs(specs: Any, where: str = "sinks") -> list[dict[str, Any]]:
    """All specs checked (ConfigError on the first mistake); returns normalised copies."""
    if not isinstance(specs, list):
        raise ConfigError(
            where, f"expected a list of sink mappings such as [{{type: console}}], got {specs!r}"
        )
    errs = ErrorCollector()
    checked = [
        errs.get(validate_sink_spec, spec, f"{where}[{i}]", default=None) for i, spec in enumerate(specs)
    ]
    names = [s.get("name", s["type"]) if s is not None else None for s in checked]
    for i, name in enumerate(names):
        if name is not None and name in names[:i]:
            errs.add(
                ConfigError(
                    f"{where}[{i}].name", f"duplicate sink name {name!r}", "give each sink a distinct name"
                )
            )
    errs.raise_if_any()
    return [s for s in checked if s is not None]


def _build_one(spec: dict[str, Any], *, dataset: str, state_dir: str, where: str) -> Sink:
    kind = spec["type"]
    name = spec.get("name", kind)
    alert_opts = {"min_severity": spec.get("min_severity"), "kinds": spec.get("kinds")}
    if kind == "console":
        from streamdq.connectors.sinks.console import ConsoleSink

        stream = sys.stderr if spec.get("stream") == "stderr" else None
        return ConsoleSink(
            name,
            stream=stream,
            verbose=spec.get("verbose", False),
            only_changes=spec.get("only_changes", False),
        )
    if kind == "jsonl":
        from streamdq.connectors.sinks.jsonl import JsonLinesSink

        try:
            return JsonLinesSink(local_path(spec["path"]) or spec["path"], name)
        except OSError as exc:
            raise ConfigError(f"{where}.path", f"cannot open {spec['path']!r} for appending: {exc}") from exc
    if kind == "prometheus":
        from streamdq.connectors.sinks.prometheus import PrometheusSink

        host, port = spec.get("host", "127.0.0.1"), spec.get("port", 9108)
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
            spec["bootstrap_servers"],
            spec["topic"],
            state_dir=Path(outbox_dir) / dataset if dataset else outbox_dir,
            name=name,
            max_buffer=spec.get("max_buffer", 100_000),
            producer_config=spec.get("producer"),
            **alert_opts,
        )
    if kind == "webhook":
        from streamdq.connectors.sinks.webhook import WebhookSink

        return WebhookSink(
            spec["url"],
            name,
            headers=spec.get("headers"),
            timeout_seconds=spec.get("timeout_seconds", 10.0),
            send=spec.get("send", "alerts"),
            max_attempts=spec.get("max_attempts"),
            cooldown_seconds=spec.get("cooldown_seconds", 0.0),
            rate_limit_per_minute=spec.get("rate_limit_per_minute"),
            **alert_opts,
        )
    if kind == "email":
        from streamdq.connectors.sinks.email import EmailSink

        return EmailSink(
            spec["host"],
            spec.get("port", 465 if spec.get("ssl") else 25),
            spec["from"],
            spec["to"],
            name,
            starttls=spec.get("starttls", False),
            use_ssl=spec.get("ssl", False),
            username=spec.get("username"),
            password=spec.get("password"),
            password_env=spec.get("password_env"),
            subject_prefix=spec.get("subject_prefix", "[streamdq]"),
            timeout_seconds=spec.get("timeout_seconds", 15.0),
            ca_file=spec.get("ca_file"),
            cooldown_seconds=spec.get("cooldown_seconds", 0.0),
            rate_limit_per_minute=spec.get("rate_limit_per_minute"),
            **alert_opts,
        )
    raise ConfigError(f"{where}.type", f"unknown sink type {kind!r}")  # unreachable after validation


def build_sinks(specs: list[dict[str, Any]], *, dataset: str, state_dir: str) -> list[Sink]:
    """Validate then construct every sink; on a failure the ones already built are closed."""
    normalised = validate_sink_specs(specs)
    built: list[Sink] = []
    try:
        for i, spec in enumerate(normalised):
            built.append(_build_one(spec, dataset=dataset, state_dir=state_dir, where=f"sinks[{i}]"))
    except BaseException:
        for sink in built:
            sink.close()
        raise
    return built
