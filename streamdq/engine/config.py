"""The run config of a streaming job (YAML), validated at start-up.

Every mistake is reported before any Spark job starts, all of them at once: ``load_run_config``
raises one ``ConfigErrors`` (a ``ConfigError``) with a ``file: key: problem; fix`` line per
mistake; ``read_run_config`` returns the config as far as it is valid plus the errors (the
whole-config check in ``config_check.py`` goes on from there: schema, columns, paths).
Relative paths are resolved against the config file's folder.

A window monitor's key (``auto_validate``, ``quality_score``) is known through the monitor
registry (``streamdq.register.monitor_registry``); its raw section lands in ``RunConfig.monitors``.
Adding another key: name it in ``KNOWN_KEYS``, give ``RunConfig`` a field, and parse it in
``_validate`` with ``errs.get(parser, raw.get("key"), "key", default=...)`` so that a mistake
in it is collected with the others instead of hiding them.
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
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

from streamdq.engine.event_time import EventTimeBounds
from streamdq.errors import ConfigError, ErrorCollector
from streamdq.register import monitor_registry

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
    "measures",
    "pass",
    "sinks",
    "alerts",
    "max_groups",
    "small_batch_rows",
    "row_level_quarantine_max_rows",
    "query_name",
    "supervision",
    "event_time_bounds",
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
    raise ConfigError(path, f"expected a positive duration such as '30 seconds' or '1 minute', got {value!r}")


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
class SupervisionConfig:
    """``supervision:`` of a run config: how the supervisor restarts a failed query.

    At most ``max_restarts`` restarts within any ``window`` seconds, each after an exponential
    backoff from ``backoff_initial`` to ``backoff_max`` seconds with jitter; a batch that fails
    ``poison_after`` times (not counting transient failures) is a poison batch, handled by
    ``poison``: ``quarantine`` (its rows go to quarantine, the stream moves on) or ``stop``."""

    enabled: bool = True
    max_restarts: int = 10
    backoff_initial: float = 1.0
    backoff_max: float = 60.0
    window: float = 600.0
    poison: str = "quarantine"
    poison_after: int = 3


SUPERVISION_KEYS = (
    "enabled",
    "max_restarts",
    "backoff_initial",
    "backoff_max",
    "window",
    "poison",
    "poison_after",
)
POISON_POLICIES = ("quarantine", "stop")


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
    measures: list[dict[str, Any]] = field(default_factory=list)  # raw ``measures:`` (checks file or inline)
    pass_spec: Any = None  # raw ``pass:`` (checks file or inline; streamdq.checks.pass_policy)
    sinks: list[dict[str, Any]] = field(default_factory=list)
    alerts: dict[str, Any] = field(default_factory=dict)
    max_groups: int = 100_000
    small_batch_rows: int = 250_000
    row_level_quarantine_max_rows: int = 1000  # per batch; beyond it rows are counted only
    auto_validate: dict[str, Any] | None = None
    quality_score: dict[str, Any] | None = None
    monitors: dict[str, Any] = field(default_factory=dict)  # raw section per registered monitor key
    query_name: str | None = None
    supervision: SupervisionConfig = field(default_factory=SupervisionConfig)
    event_time_bounds: EventTimeBounds = field(default_factory=EventTimeBounds)
    file: str | None = None

    @property
    def query_label(self) -> str:
        return self.query_name or f"streamdq_{re.sub(r'[^A-Za-z0-9_]', '_', self.dataset)}"


def _require(raw: dict[str, Any], key: str, kind: type | tuple[type, ...], fix: str) -> Any:
    if key not in raw:
        raise ConfigError(key, "missing required key", f"add {fix}")
    value = raw[key]
    if not isinstance(value, kind):
        raise ConfigError(key, f"expected {fix}, got {value!r}")
    return value


def _resolve(path: str, base: Path) -> str:
    if "://" in path or os.path.isabs(path) or "\x00" in path:  # a NUL is reported by the checks
        return path
    return str((base / path).resolve())


def load_run_config(
    source: str | os.PathLike[str] | dict[str, Any], *, base_dir: str | None = None
) -> RunConfig:
    """Load and validate a run config from a YAML file path or an already-parsed dict.

    Raises ``ConfigErrors`` (a ``ConfigError``) listing every mistake found in the file.
    """
    config, errors = read_run_config(source, base_dir=base_dir)
    errors.raise_if_any()
    assert config is not None
    return config


def read_run_config(
    source: str | os.PathLike[str] | dict[str, Any], *, base_dir: str | None = None
) -> tuple[RunConfig | None, ErrorCollector]:
    """The run config as far as it is valid (defaults stand in for wrong keys) and the errors.

    The config is None when the file cannot be read, is not YAML or is not a mapping. Never
    raises ``ConfigError``: every mistake is in the returned collector, naming the file.
    """
    file: str | None = None
    if isinstance(source, dict):
        raw: Any = source
        base = Path(base_dir or os.getcwd())
    else:
        file = str(source)
    errs = ErrorCollector(file)
    if file is not None:
        try:
            text = Path(file).read_text()
        except OSError as exc:
            errs.add(ConfigError("", f"cannot read the run config: {exc.strerror}", file=file))
            return None, errs
        try:
            raw = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            errs.add(ConfigError("", yaml_problem(exc), fix="fix the YAML syntax at that line", file=file))
            return None, errs
        base = Path(base_dir or Path(file).resolve().parent)
    try:
        return _validate(raw, base, file, errs), errs
    except ConfigError as exc:  # a key parsed without the collector: still report everything
        errs.add(exc)
        return None, errs


def yaml_problem(exc: yaml.YAMLError) -> str:
    """``line L, column C: not valid YAML: <problem>`` (the line when YAML marks one)."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc)
    if mark is not None:
        return f"line {mark.line + 1}, column {mark.column + 1}: not valid YAML: {problem}"
    return f"not valid YAML: {problem}"


def _validate(raw: Any, base: Path, file: str | None, errs: ErrorCollector) -> RunConfig | None:
    if not isinstance(raw, dict):
        errs.add(
            ConfigError("", "the run config must be a mapping with keys such as dataset, source, checkpoint")
        )
        return None
    monitor_keys = monitor_registry().keys()  # auto_validate, quality_score (streamdq.monitors)
    known = KNOWN_KEYS | set(monitor_keys)
    for key in sorted(set(raw) - known, key=str):
        errs.add(ConfigError(str(key), "unknown key", f"known keys: {', '.join(sorted(known))}"))
    dataset = errs.get(
        _require, raw, "dataset", str, "a dataset name (string), e.g. 'dataset: orders'", default=""
    )
    source: dict[str, Any] = dict(
        errs.get(
            _require,
            raw,
            "source",
            dict,
            "a mapping with a 'type' (kafka | files | clf | generator)",
            default={},
        )
    )
    for key in ("path", "schema_file"):
        if isinstance(source.get(key), str):
            source[key] = _resolve(source[key], base)
    try:
        from streamdq.connectors.sources import validate_source_spec
    except ImportError:  # pragma: no cover - the connectors ship with streamdq
        validate_source_spec = None
    if validate_source_spec is not None and "source" in raw:
        with errs.catch():
            validate_source_spec(source, "source")
    checkpoint = errs.get(
        _require, raw, "checkpoint", str, "a checkpoint directory, e.g. 'checkpoint: ./chk'", default=""
    )
    checkpoint = _resolve(checkpoint, base) if checkpoint else ""
    event_time = raw.get("event_time")
    if event_time is not None and not isinstance(event_time, str):
        errs.add(
            ConfigError(
                "event_time",
                f"expected the name of a timestamp column, got {event_time!r}",
                "write event_time: ts",
            )
        )
        event_time = None
    window = errs.get(parse_duration, raw.get("window", "1 minute"), "window", default=60.0)
    watermark = (
        errs.get(parse_duration, raw["watermark"], "watermark", default=0.0)
        if raw.get("watermark") not in (None, 0, "0")
        else 0.0
    )
    trigger = raw.get("trigger", "5 seconds")
    if (
        trigger not in ("once", "available_now")
        and errs.get(parse_duration, trigger, "trigger", default=0.0) == 0.0
    ):
        trigger = "5 seconds"
    state = _state_config(raw.get("state"), base, errs)
    no_checks: tuple[list[dict[str, Any]], str] = ([], "<inline>")
    checks, origin = errs.get(_load_checks, raw, base, default=no_checks)
    no_measures: list[dict[str, Any]] = []
    measures = errs.get(_load_measures, raw, base, default=no_measures)
    pass_spec = errs.get(_load_pass, raw, base, default=None)
    sinks = raw.get("sinks") or [{"type": "console"}]
    if not isinstance(sinks, list) or not all(isinstance(s, dict) for s in sinks):
        errs.add(ConfigError("sinks", "expected a list of mappings such as [{type: console}]"))
        sinks = []
    try:
        from streamdq.connectors.sinks import validate_sink_specs
    except ImportError:  # pragma: no cover
        validate_sink_specs = None
    if validate_sink_specs is not None and sinks:
        with errs.catch():
            validate_sink_specs(sinks, "sinks")
    max_groups = errs.get(_int_at_least, raw.get("max_groups", 100_000), "max_groups", 1, default=100_000)
    small_batch_rows = errs.get(
        _int_at_least,
        raw.get("small_batch_rows", 250_000),
        "small_batch_rows",
        0,
        "rows up to which a microbatch takes the one-job Arrow path; 0 = always the fused Spark passes",
        default=250_000,
    )
    row_level_cap = errs.get(
        _int_at_least,
        raw.get("row_level_quarantine_max_rows", 1000),
        "row_level_quarantine_max_rows",
        0,
        "rows failing row-level constraints quarantined per batch (docs/checks.md); the rest are counted",
        default=1000,
    )
    alerts = raw.get("alerts") or {}
    if not isinstance(alerts, dict):
        errs.add(
            ConfigError(
                "alerts", "expected a mapping (cooldown_seconds, rate_limit_per_minute, min_rows_floor, ...)"
            )
        )
        alerts = {}
    with errs.catch():
        monitor_registry().build_all(raw, dataset)  # validates each monitor section (built, then dropped)
    supervision = errs.get(supervision_config, raw.get("supervision"), default=SupervisionConfig())
    bounds = errs.get(event_time_bounds, raw.get("event_time_bounds"), default=EventTimeBounds())
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
        measures=measures,
        pass_spec=pass_spec,
        sinks=[dict(s) for s in sinks],
        alerts=dict(alerts),
        max_groups=max_groups,
        small_batch_rows=small_batch_rows,
        row_level_quarantine_max_rows=row_level_cap,
        auto_validate=raw.get("auto_validate"),
        quality_score=raw.get("quality_score"),
        monitors={key: raw[key] for key in monitor_keys if raw.get(key) is not None},
        query_name=raw.get("query_name"),
        supervision=supervision,
        event_time_bounds=bounds,
        file=file,
    )


STATE_KEYS = {"path", "retention_hours", "maintenance_every", "log_retention_hours", "storage_options"}


def _state_config(state_raw: Any, base: Path, errs: ErrorCollector) -> StateConfig:
    """``state:`` (a path, or a mapping of STATE_KEYS), each key checked; defaults stand in."""
    state_raw = state_raw or {}
    if isinstance(state_raw, str):
        state_raw = {"path": state_raw}
    if not isinstance(state_raw, dict):
        errs.add(ConfigError("state", "expected a mapping such as {path: ./state, retention_hours: 168}"))
        return StateConfig()
    for key in sorted(set(state_raw) - STATE_KEYS, key=str):
        errs.add(ConfigError(f"state.{key}", "unknown key", f"known: {', '.join(sorted(STATE_KEYS))}"))
    path = state_raw.get("path")
    if path is not None and (not isinstance(path, str) or not path.strip()):
        errs.add(ConfigError("state.path", f"expected a directory path, got {path!r}", "write path: ./state"))
        path = None
    options = state_raw.get("storage_options") or {}
    if not isinstance(options, dict) or not all(isinstance(k, str) for k in options):
        errs.add(
            ConfigError(
                "state.storage_options",
                f"expected a mapping of option names to values, got {options!r}",
                "write storage_options: {AWS_REGION: eu-west-1}",
            )
        )
        options = {}
    return StateConfig(
        path=_resolve(path, base) if path else None,
        retention_hours=errs.get(
            _positive_hours, state_raw.get("retention_hours", 168), "state.retention_hours", default=168.0
        ),
        maintenance_every=errs.get(
            _int_at_least,
            state_raw.get("maintenance_every", 100),
            "state.maintenance_every",
            1,
            "batches between Delta maintenance runs",
            default=100,
        ),
        log_retention_hours=errs.get(
            _non_negative, state_raw.get("log_retention_hours", 1.0), "state.log_retention_hours", default=1.0
        ),
        storage_options={str(k): str(v) for k, v in options.items()},
    )


def _int_at_least(value: Any, path: str, low: int, meaning: str = "") -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        what = f"an integer >= {low}" + (f" ({meaning})" if meaning else "")
        raise ConfigError(
            path, f"expected {what}, got {value!r}", f"write e.g. {path.split('.')[-1]}: {max(low, 100)}"
        )
    return value


def _positive_hours(value: Any, path: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < float("inf"):
        raise ConfigError(
            path,
            f"expected a number of hours > 0, got {value!r}",
            f"write e.g. {path.split('.')[-1]}: 168 (a week)",
        )
    return float(value)


def _non_negative(value: Any, path: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < float("inf"):
        raise ConfigError(
            path, f"expected a number of hours >= 0, got {value!r}", f"write e.g. {path.split('.')[-1]}: 1"
        )
    return float(value)


BOUNDS_KEYS = ("past", "future", "min", "max")


def _off(value: Any) -> bool:
    """``none`` / ``off`` / ``false`` / null: no such bound."""
    return (
        value is None
        or value is False
        or (isinstance(value, str) and value.strip().lower() in ("none", "off"))
    )


def event_time_bounds(raw: Any) -> EventTimeBounds:
    """``event_time_bounds:`` (optional) as EventTimeBounds (engine/event_time.py).

    ``past``/``future``: durations around processing time (``none`` = no such bound);
    ``min``/``max``: ISO-8601 instants (UTC when no offset is given; ``none`` = no bound).
    A key left out keeps its default (future 1 hour, min 1900-01-01T00:00:00Z).
    """
    example = "write e.g. event_time_bounds: {past: 30d, future: 1h} or {min: '2020-01-01T00:00:00Z'}"
    if raw is None:
        return EventTimeBounds()
    if not isinstance(raw, dict):
        raise ConfigError("event_time_bounds", f"expected a mapping, got {raw!r}", example)
    unknown = sorted(str(k) for k in raw if k not in BOUNDS_KEYS)
    if unknown:
        raise ConfigError(
            f"event_time_bounds.{unknown[0]}", "unknown key", f"known: {', '.join(BOUNDS_KEYS)}"
        )
    defaults = EventTimeBounds()
    values: dict[str, Any] = {}
    for key in ("past", "future"):
        if key not in raw:
            values[key] = getattr(defaults, key)
        elif _off(raw[key]):
            values[key] = None
        else:
            values[key] = timedelta(seconds=parse_duration(raw[key], f"event_time_bounds.{key}"))
    for key in ("min", "max"):
        if key not in raw:
            values[key] = getattr(defaults, key)
        elif _off(raw[key]):
            values[key] = None
        else:
            values[key] = _instant(raw[key], f"event_time_bounds.{key}")
    return EventTimeBounds(**values)  # a ConfigError names the key (event_time_bounds.min, ...)


def _instant(value: Any, path: str) -> datetime:
    """An aware datetime from a YAML timestamp or an ISO-8601 string (naive = UTC)."""
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, date):
        moment = datetime(value.year, value.month, value.day)
    elif isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value.strip())
        except ValueError:
            raise ConfigError(
                path, f"not an ISO-8601 instant: {value!r}", "write e.g. '2020-01-01T00:00:00Z'"
            ) from None
    else:
        raise ConfigError(
            path, f"expected an ISO-8601 instant, got {value!r}", "write e.g. '2020-01-01T00:00:00Z'"
        )
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def supervision_config(raw: Any) -> SupervisionConfig:
    """``supervision:`` (optional; ``false`` turns restarts off) as a SupervisionConfig."""
    if raw is None or raw is True:
        return SupervisionConfig()
    if raw is False:
        return SupervisionConfig(enabled=False)
    if not isinstance(raw, dict):
        raise ConfigError(
            "supervision",
            f"expected a mapping or false, got {raw!r}",
            "write e.g. supervision: {max_restarts: 10, backoff_max: 1 minute, poison: quarantine}",
        )
    unknown = sorted(set(raw) - set(SUPERVISION_KEYS), key=str)
    if unknown:
        raise ConfigError(f"supervision.{unknown[0]}", "unknown key", f"known: {', '.join(SUPERVISION_KEYS)}")
    defaults = SupervisionConfig()
    enabled = raw.get("enabled", True)
    if not isinstance(enabled, bool):
        raise ConfigError(
            "supervision.enabled", f"expected true or false, got {enabled!r}", "write enabled: true"
        )
    max_restarts = _int_at_least(
        raw.get("max_restarts", defaults.max_restarts), "supervision.max_restarts", 0
    )
    poison_after = _int_at_least(
        raw.get("poison_after", defaults.poison_after), "supervision.poison_after", 1
    )
    initial = parse_duration(
        raw.get("backoff_initial", defaults.backoff_initial), "supervision.backoff_initial"
    )
    most = parse_duration(raw.get("backoff_max", defaults.backoff_max), "supervision.backoff_max")
    if most < initial:
        raise ConfigError(
            "supervision.backoff_max",
            f"{most:g} s is below backoff_initial ({initial:g} s)",
            "make backoff_max at least backoff_initial",
        )
    window = parse_duration(raw.get("window", defaults.window), "supervision.window")
    poison = raw.get("poison", defaults.poison)
    if poison not in POISON_POLICIES:
        raise ConfigError(
            "supervision.poison", f"unknown policy {poison!r}", f"use one of {', '.join(POISON_POLICIES)}"
        )
    return SupervisionConfig(
        enabled=enabled,
        max_restarts=max_restarts,
        backoff_initial=initial,
        backoff_max=most,
        window=window,
        poison=str(poison),
        poison_after=poison_after,
    )


def _load_measures(raw: dict[str, Any], base: Path) -> list[dict[str, Any]]:
    """The raw ``measures:`` list: inline in the run config, or beside the checks of
    ``checks_file`` (validated by ``streamdq.checks.measure_spec`` with the checks)."""
    measures: Any = raw.get("measures")
    if "checks_file" in raw and measures is None:
        try:
            doc = yaml.safe_load(Path(_resolve(str(raw["checks_file"]), base)).read_text())
        except (OSError, yaml.YAMLError):  # reported by _load_checks
            return []
        measures = doc.get("measures") if isinstance(doc, dict) else None
    if measures is None:
        return []
    if not isinstance(measures, list):
        raise ConfigError("measures", "expected a list of measures (see docs/measure-check-pass.md)")
    return measures


def _load_pass(raw: dict[str, Any], base: Path) -> Any:
    """The raw ``pass:`` policy: inline in the run config, or beside the checks of
    ``checks_file`` (validated against the check names by ``config_check``)."""
    if "pass" in raw or "checks_file" not in raw:
        return raw.get("pass")
    try:
        doc = yaml.safe_load(Path(_resolve(str(raw["checks_file"]), base)).read_text())
    except (OSError, yaml.YAMLError):  # reported by _load_checks
        return None
    return doc.get("pass") if isinstance(doc, dict) else None


def _load_checks(raw: dict[str, Any], base: Path) -> tuple[list[dict[str, Any]], str]:
    if "checks" in raw and "checks_file" in raw:
        raise ConfigError("checks_file", "give either 'checks' (inline) or 'checks_file', not both")
    if "checks_file" in raw:
        path = _resolve(str(raw["checks_file"]), base)
        try:
            doc = yaml.safe_load(Path(path).read_text())
        except OSError as exc:
            raise ConfigError("checks_file", f"cannot read checks file {path}: {exc.strerror}") from None
        except yaml.YAMLError as exc:
            raise ConfigError(
                "checks_file", f"checks file {path}: {yaml_problem(exc)}", "fix the YAML syntax at that line"
            ) from None
        checks = doc.get("checks") if isinstance(doc, dict) else doc
        if not isinstance(checks, list):
            raise ConfigError(
                "checks_file",
                f"checks file {path} has no top-level 'checks:' list",
                "start the file with checks: and a list of checks (docs/checks.md)",
            )
        return checks, path
    checks = raw.get("checks") or []
    if not isinstance(checks, list):
        raise ConfigError("checks", "expected a list of checks (see docs/checks.md)")
    return checks, "<inline>"
