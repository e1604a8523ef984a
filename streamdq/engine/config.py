"""The run config of a streaming job (YAML), validated at start-up.

Every mistake raises ``ConfigError`` naming the file, the key path and the fix, before
any Spark job starts. Relative paths are resolved against the config file's folder.
See docs/streaming.md for the full reference; a minimal config::

    dataset: orders
    source: {type: generator, rows_per_second: 200}
    event_time: ts
    window: 1 minute
    watermark: 30 seconds
    checkpoint: ./chk
    state: {path: ./state}
    checks_file: checks.yaml
    sinks: [{type: console}]
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from streamdq.errors import ConfigError

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]+)\s*$")
_UNITS = {
    "ms": 0.001,
    "millisecond": 0.001,
    "milliseconds": 0.001,
    "s": 1,
    "sec": 1,
    "second": 1,
    "seconds": 1,
    "m": 60,
    "min": 60,
    "minute": 60,
    "minutes": 60,
    "h": 3600,
    "hour": 3600,
    "hours": 3600,
    "d": 86400,
    "day": 86400,
    "days": 86400,
}

KNOWN_KEYS = {
    "dataset",
    "source",
    "event_time",
    "window",
    "watermark",
    "trigger",
    "checkpoint",
    "state",
    "quarantine",
    "checks",
    "checks_file",
    "sinks",
    "alerts",
    "max_groups",
    "small_batch_rows",
    "auto_validate",
    "quality_score",
    "query_name",
}


def parse_duration(value: Any, path: str) -> float:
    """Seconds in ``"30 seconds"``, ``"1 minute"``, ``"5s"``, ``"2h"`` or a plain number of seconds."""
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        return float(value)
    if isinstance(value, str):
        m = _DURATION.match(value)
        if m and m.group(2).lower() in _UNITS:
            seconds = float(m.group(1)) * _UNITS[m.group(2).lower()]
            if seconds > 0:
                return seconds
    raise ConfigError(
        f"expected a positive duration such as '30 seconds' or '1 minute', got {value!r}", path=path
    )


def spark_interval(seconds: float) -> str:
    """A Spark interval string for a number of seconds (``"90 seconds"``)."""
    if seconds == int(seconds):
        return f"{int(seconds)} seconds"
    return f"{int(seconds * 1000)} milliseconds"


@dataclass(frozen=True)
class StateConfig:
    path: str | None = None
    retention_hours: float = 168.0
    maintenance_every: int = 100
    log_retention_hours: float = 1.0
    storage_options: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class RunConfig:
    """A validated run config. ``checks`` holds the raw checks spec (list of dicts)."""

    dataset: str
    source: dict[str, Any]
    checkpoint: str
    event_time: str | None = None
    window_seconds: float = 60.0
    watermark_seconds: float = 0.0
    trigger: str = "5 seconds"
    state: StateConfig = field(default_factory=StateConfig)
    quarantine: bool = True
    checks: list[dict[str, Any]] = field(default_factory=list)
    checks_origin: str = "<inline>"
    sinks: list[dict[str, Any]] = field(default_factory=list)
    alerts: dict[str, Any] = field(default_factory=dict)
    max_groups: int = 100_000
    small_batch_rows: int = 250_000
    auto_validate: dict[str, Any] | None = None
    quality_score: dict[str, Any] | None = None
    query_name: str | None = None
    file: str | None = None

    @property
    def query_label(self) -> str:
        return self.query_name or f"streamdq_{re.sub(r'[^A-Za-z0-9_]', '_', self.dataset)}"


def _require(raw: dict[str, Any], key: str, kind: type | tuple[type, ...], fix: str) -> Any:
    if key not in raw:
        raise ConfigError(f"missing required key; {fix}", path=key)
    value = raw[key]
    if not isinstance(value, kind):
        raise ConfigError(f"expected {fix}, got {value!r}", path=key)
    return value


def _resolve(path: str, base: Path) -> str:
    if "://" in path or os.path.isabs(path):
        return path
    return str((base / path).resolve())


def load_run_config(
    source: str | os.PathLike[str] | dict[str, Any], *, base_dir: str | None = None
) -> RunConfig:
    """Load and validate a run config from a YAML file path or an already-parsed dict."""
    file: str | None = None
    if isinstance(source, dict):
        raw = source
        base = Path(base_dir or os.getcwd())
    else:
        file = str(source)
        try:
            text = Path(file).read_text()
        except OSError as exc:
            raise ConfigError(f"cannot read the run config: {exc.strerror}", file=file) from None
        try:
            raw = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise ConfigError(f"not valid YAML: {exc}", file=file) from None
        base = Path(base_dir or Path(file).resolve().parent)
    try:
        return _validate(raw, base, file)
    except ConfigError as exc:
        raise exc.in_file(file) if file else exc from None


def _validate(raw: Any, base: Path, file: str | None) -> RunConfig:
    if not isinstance(raw, dict):
        raise ConfigError("the run config must be a mapping with keys such as dataset, source, checkpoint")
    unknown = sorted(set(raw) - KNOWN_KEYS)
    if unknown:
        raise ConfigError(
            f"unknown key(s) {', '.join(unknown)}; known keys: {', '.join(sorted(KNOWN_KEYS))}",
            path=unknown[0],
        )
    dataset = _require(raw, "dataset", str, "a dataset name (string), e.g. 'dataset: orders'")
    source = dict(_require(raw, "source", dict, "a mapping with a 'type' (kafka | files | clf | generator)"))
    for key in ("path", "schema_file"):
        if isinstance(source.get(key), str):
            source[key] = _resolve(source[key], base)
    try:
        from streamdq.connectors.sources import validate_source_spec
    except ImportError:  # pragma: no cover - the connectors ship with streamdq
        validate_source_spec = None
    if validate_source_spec is not None:
        validate_source_spec(source, "source")
    checkpoint = _resolve(
        _require(raw, "checkpoint", str, "a checkpoint directory, e.g. 'checkpoint: ./chk'"), base
    )
    event_time = raw.get("event_time")
    if event_time is not None and not isinstance(event_time, str):
        raise ConfigError(f"expected the name of a timestamp column, got {event_time!r}", path="event_time")
    window = parse_duration(raw.get("window", "1 minute"), "window")
    watermark = (
        parse_duration(raw["watermark"], "watermark") if raw.get("watermark") not in (None, 0, "0") else 0.0
    )
    trigger = raw.get("trigger", "5 seconds")
    if trigger not in ("once", "available_now"):
        parse_duration(trigger, "trigger")
    state_raw = raw.get("state") or {}
    if isinstance(state_raw, str):
        state_raw = {"path": state_raw}
    if not isinstance(state_raw, dict):
        raise ConfigError("expected a mapping such as {path: ./state, retention_hours: 168}", path="state")
    state_keys = {"path", "retention_hours", "maintenance_every", "log_retention_hours", "storage_options"}
    bad_state = sorted(set(state_raw) - state_keys)
    if bad_state:
        raise ConfigError(
            f"unknown key; known: {', '.join(sorted(state_keys))}",
            path=f"state.{bad_state[0]}",
        )
    state = StateConfig(
        path=_resolve(state_raw["path"], base) if state_raw.get("path") else None,
        retention_hours=float(state_raw.get("retention_hours", 168)),
        maintenance_every=int(state_raw.get("maintenance_every", 100)),
        log_retention_hours=_non_negative(
            state_raw.get("log_retention_hours", 1.0), "state.log_retention_hours"
        ),
        storage_options=dict(state_raw.get("storage_options") or {}),
    )
    checks, origin = _load_checks(raw, base)
    sinks = raw.get("sinks") or [{"type": "console"}]
    if not isinstance(sinks, list) or not all(isinstance(s, dict) for s in sinks):
        raise ConfigError("expected a list of mappings such as [{type: console}]", path="sinks")
    try:
        from streamdq.connectors.sinks import validate_sink_specs
    except ImportError:  # pragma: no cover
        validate_sink_specs = None
    if validate_sink_specs is not None:
        validate_sink_specs(sinks, "sinks")
    max_groups = raw.get("max_groups", 100_000)
    if not isinstance(max_groups, int) or isinstance(max_groups, bool) or max_groups < 1:
        raise ConfigError(f"expected a positive integer, got {max_groups!r}", path="max_groups")
    small_batch_rows = raw.get("small_batch_rows", 250_000)
    if not isinstance(small_batch_rows, int) or isinstance(small_batch_rows, bool) or small_batch_rows < 0:
        raise ConfigError(
            f"expected an integer >= 0 (rows up to which a microbatch takes the one-job Arrow path; "
            f"0 = always the fused Spark passes), got {small_batch_rows!r}",
            path="small_batch_rows",
        )
    alerts = raw.get("alerts") or {}
    if not isinstance(alerts, dict):
        raise ConfigError(
            "expected a mapping (cooldown_seconds, rate_limit_per_minute, min_rows_floor, ...)", path="alerts"
        )
    _validate_monitors(raw.get("auto_validate"), raw.get("quality_score"), dataset)
    return RunConfig(
        dataset=dataset,
        source=source,
        checkpoint=checkpoint,
        event_time=event_time,
        window_seconds=window,
        watermark_seconds=watermark,
        trigger=str(trigger),
        state=state,
        quarantine=bool(raw.get("quarantine", True)),
        checks=checks,
        checks_origin=origin,
        sinks=[dict(s) for s in sinks],
        alerts=dict(alerts),
        max_groups=max_groups,
        small_batch_rows=small_batch_rows,
        auto_validate=raw.get("auto_validate"),
        quality_score=raw.get("quality_score"),
        query_name=raw.get("query_name"),
        file=file,
    )


def _non_negative(value: Any, path: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise ConfigError(f"expected a number of hours >= 0, got {value!r}", path=path)
    return float(value)


def _validate_monitors(auto_validate: Any, quality_score: Any, dataset: str) -> None:
    """Fail at load time (naming the file) on a bad ``auto_validate:`` or ``quality_score:``."""
    if auto_validate is not None:
        from streamdq.autovalidate.monitor import auto_validate_monitor_from_config

        auto_validate_monitor_from_config(auto_validate, dataset)
    if quality_score is not None:
        from streamdq.autovalidate.quality_monitor import quality_monitor_from_config

        quality_monitor_from_config(quality_score, dataset)


def _load_checks(raw: dict[str, Any], base: Path) -> tuple[list[dict[str, Any]], str]:
    if "checks" in raw and "checks_file" in raw:
        raise ConfigError("give either 'checks' (inline) or 'checks_file', not both", path="checks_file")
    if "checks_file" in raw:
        path = _resolve(str(raw["checks_file"]), base)
        try:
            doc = yaml.safe_load(Path(path).read_text())
        except OSError as exc:
            raise ConfigError(f"cannot read checks file {path}: {exc.strerror}", path="checks_file") from None
        except yaml.YAMLError as exc:
            raise ConfigError(f"checks file {path} is not valid YAML: {exc}", path="checks_file") from None
        checks = doc.get("checks") if isinstance(doc, dict) else doc
        if not isinstance(checks, list):
            raise ConfigError(f"{path}: expected a top-level 'checks:' list", path="checks_file")
        return checks, path
    checks = raw.get("checks") or []
    if not isinstance(checks, list):
        raise ConfigError("expected a list of checks (see docs/checks.md)", path="checks")
    return checks, "<inline>"
