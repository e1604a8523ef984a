"""The run config of a streaming job (YAML), parsed once into typed, frozen specs.

``read_run_config`` parses every section of the run config exactly once, with the one
table-driven validator (``streamdq.config_schema``): each section's keys are a ``Table`` of
``Key`` rows (key, accepted values, default, fix, doc). The result is a frozen ``RunConfig``
holding typed values, and the engine (``StreamRunner``) and ``streamdq run --check-config``
(``config_check.py``) both consume that one parse; nothing is validated twice:

* ``source_spec``: a frozen ``SourceSpec`` (``connectors/sources/spec.py``: one table per source
  type; a kafka source's ``KafkaSpec`` inside), which ``read_source`` reads without validating
  again; ``source`` the mapping as given (paths resolved) and ``source_schema`` the declared
  schema of the decoded frame (parsed once, without Spark);
* ``sinks``: a tuple of ``SinkSpec`` (``connectors/sinks/config.py``: one table per type);
* ``policy``: the ``AlertPolicy`` of ``alerts:``;
* ``checks_spec``: a ``ChecksSpec`` with the compiled checks, the measures and the ``pass:``
  policy (inline or from ``checks_file``);
* ``state``, ``supervision``, ``event_time_bounds``: ``StateConfig``, ``SupervisionConfig``,
  ``EventTimeBounds`` from their tables (``STATE_TABLE``, ``SUPERVISION_TABLE``, ``BOUNDS_TABLE``);
* the top-level scalars (``window``, ``trigger``, ``max_groups``, ...) from ``RUN_TABLE``;
* a window monitor's key (``auto_validate``, ``quality_score``) is known through the monitor
  registry (``streamdq.register.monitor_registry``): ``monitor_specs`` holds a ``MonitorSpec``
  per section, parsed by the key's parser (``MonitorRegistry.parse_all``), from which the engine
  builds each monitor once; the raw section is in ``RunConfig.monitors``.

Every mistake is reported before any Spark job starts, all of them at once: ``load_run_config``
raises one ``ConfigErrors`` (a ``ConfigError``) with a ``file: key: problem; fix`` line per
mistake, each naming the full dotted key; ``read_run_config`` returns the config as far as it is
valid (stand-ins for wrong keys) plus the errors, for the whole-config check in
``config_check.py`` (schema columns, paths, ports) to go on from. Relative paths are resolved
against the config file's folder. Adding a top-level key: give it a ``Key`` row in ``RUN_TABLE``
(or a table of its own) and a ``RunConfig`` field. See docs/configuration.md; a minimal config::

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
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from streamdq.alerts.policy import AlertPolicy
from streamdq.config_schema import (
    REQUIRED,
    Key,
    Table,
    boolean,
    custom,
    duration,
    integer,
    number,
    one_of,
    optional,
    seconds_of,
    section,
    str_map,
    text,
)
from streamdq.engine.event_time import EventTimeBounds
from streamdq.errors import ConfigError, ErrorCollector
from streamdq.monitors import MonitorSpec
from streamdq.register import monitor_registry

if TYPE_CHECKING:
    from pyspark.sql.types import StructType

    from streamdq.checks.pass_policy import PassPolicy
    from streamdq.connectors.sinks.config import SinkSpec
    from streamdq.connectors.sources.spec import SourceSpec


def parse_duration(value: Any, path: str) -> float:
    """Seconds in ``"30 seconds"``, ``"1 minute"``, ``"5s"``, ``"2h"`` or a plain number of seconds."""
    return seconds_of(value, path)


def spark_interval(seconds: float) -> str:
    """A Spark interval string for a number of seconds (``"90 seconds"``), to the nearest
    millisecond (Spark's unit for a trigger) and at least one: a positive duration never
    becomes a zero interval, which Spark reads as "no wait".

    >>> spark_interval(90.0), spark_interval(1.001), spark_interval(0.0001)
    ('90 seconds', '1001 milliseconds', '1 milliseconds')
    """
    millis = max(1, round(seconds * 1000))
    if millis % 1000 == 0:
        return f"{millis // 1000} seconds"
    return f"{millis} milliseconds"


# -- state ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class StateConfig:
    """``state:`` of a run config: where the Delta tables live and how they are kept."""

    path: str | None = None
    retention_hours: float = 168.0
    maintenance_every: int = 100
    log_retention_hours: float = 1.0
    storage_options: dict[str, str] = field(default_factory=dict)
    pipelined_commit: bool = False
    metrics_write_delay_seconds: float = 2.0


STATE_TABLE = Table(
    "state",
    (
        Key(
            "path",
            optional(text()),
            default=None,
            fix="write path: ./state",
            doc="folder (or object-store URI) of the Delta tables; none: metrics are not stored",
        ),
        Key(
            "retention_hours",
            number(0, above=True, unit="hours"),
            default=168.0,
            example="168 (a week)",
            doc="hours of metrics and states kept",
        ),
        Key(
            "maintenance_every",
            integer(low=1, meaning="batches between Delta maintenance runs"),
            default=100,
            example=100,
            doc="batches between Delta maintenance runs (compaction, vacuum)",
        ),
        Key(
            "log_retention_hours",
            number(0, unit="hours"),
            default=1.0,
            example=1,
            doc="hours of Delta log kept",
        ),
        Key(
            "pipelined_commit",
            boolean(),
            default=False,
            example="true",
            doc="judge, commit and emit a batch while Spark plans the next (local checkpoints only); false: before foreachBatch returns",
        ),
        Key(
            "metrics_write_delay_seconds",
            number(0, unit="seconds"),
            default=2.0,
            example=2,
            doc="seconds a batch's metrics and results rows may wait to be written together with later batches' "
            "(one table write for many batches; the report is written at once); 0: after every batch",
        ),
        Key(
            "storage_options",
            str_map(values="any"),
            default=None,
            shown="{}",
            fix="write storage_options: {AWS_REGION: eu-west-1}",
            doc="object-store settings passed to the Delta tables",
        ),
    ),
    known_label="known",
)
STATE_KEYS = set(STATE_TABLE.names())


def _state_shape(path: str, raw: Any) -> Any:
    if raw is None:
        return {}
    if isinstance(raw, str):
        return {"path": raw}
    if not isinstance(raw, Mapping):
        raise ConfigError(path, "expected a mapping such as {path: ./state, retention_hours: 168}")
    return raw


def _state(values: dict[str, Any]) -> StateConfig:
    return StateConfig(**{**values, "storage_options": values["storage_options"] or {}})


STATE = section(STATE_TABLE, _state, shape=_state_shape)


# -- supervision ----------------------------------------------------------------------------


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


POISON_POLICIES = ("quarantine", "stop")


def _backoff_order(values: dict[str, Any], where: str) -> None:
    if values["backoff_max"] < values["backoff_initial"]:
        raise ConfigError(
            f"{where}.backoff_max",
            f"{values['backoff_max']:g} s is below backoff_initial ({values['backoff_initial']:g} s)",
            "make backoff_max at least backoff_initial",
        )


SUPERVISION_TABLE = Table(
    "supervision",
    (
        Key("enabled", boolean(), default=True, fix="write enabled: true", doc="restart a failed query"),
        Key("max_restarts", integer(low=0), default=10, example=10, doc="restarts allowed within window"),
        Key("backoff_initial", duration(), default=1.0, shown="1 second", doc="the first restart's delay"),
        Key(
            "backoff_max",
            duration(),
            default=60.0,
            shown="1 minute",
            doc="the longest delay (the backoff doubles up to it)",
        ),
        Key("window", duration(), default=600.0, shown="10 minutes", doc="the span max_restarts counts over"),
        Key(
            "poison",
            one_of(*POISON_POLICIES),
            default="quarantine",
            doc="a poison batch's rows go to quarantine, or the query stops",
        ),
        Key("poison_after", integer(low=1), default=3, example=3, doc="failures that make a batch poison"),
    ),
    known_label="known",
    rules=(_backoff_order,),
)
SUPERVISION_KEYS = SUPERVISION_TABLE.names()


def _supervision_shape(path: str, raw: Any) -> Any:
    if raw is None or raw is True:
        return {}
    if raw is False:
        return {"enabled": False}
    if not isinstance(raw, Mapping):
        raise ConfigError(
            path,
            f"expected a mapping or false, got {raw!r}",
            "write e.g. supervision: {max_restarts: 10, backoff_max: 1 minute, poison: quarantine}",
        )
    return raw


SUPERVISION = section(SUPERVISION_TABLE, lambda values: SupervisionConfig(**values), shape=_supervision_shape)


def supervision_config(raw: Any) -> SupervisionConfig:
    """``supervision:`` (optional; ``false`` turns restarts off) as a SupervisionConfig."""
    return SUPERVISION("supervision", raw)  # type: ignore[no-any-return]


# -- event_time_bounds ----------------------------------------------------------------------


def _off(value: Any) -> bool:
    """``none`` / ``off`` / ``false`` / null: no such bound."""
    return (
        value is None
        or value is False
        or (isinstance(value, str) and value.strip().lower() in ("none", "off"))
    )


def _span(path: str, value: Any) -> timedelta | None:
    return None if _off(value) else timedelta(seconds=seconds_of(value, path))


def _moment(path: str, value: Any) -> datetime | None:
    return None if _off(value) else _instant(value, path)


_DEFAULT_BOUNDS = EventTimeBounds()
BOUNDS_TABLE = Table(
    "event_time_bounds",
    (
        Key(
            "past",
            custom(_span, "duration | none"),
            default=_DEFAULT_BOUNDS.past,
            doc="oldest event time accepted, before now",
        ),
        Key(
            "future",
            custom(_span, "duration | none"),
            default=_DEFAULT_BOUNDS.future,
            shown="1 hour",
            doc="newest event time accepted, after now",
        ),
        Key(
            "min",
            custom(_moment, "ISO-8601 instant | none"),
            default=_DEFAULT_BOUNDS.min,
            shown="1900-01-01T00:00:00Z",
            doc="earliest event time accepted",
        ),
        Key(
            "max",
            custom(_moment, "ISO-8601 instant | none"),
            default=_DEFAULT_BOUNDS.max,
            doc="latest event time accepted",
        ),
    ),
    known_label="known",
)
BOUNDS_KEYS = BOUNDS_TABLE.names()


def _bounds_shape(path: str, raw: Any) -> Any:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise ConfigError(
            path,
            f"expected a mapping, got {raw!r}",
            "write e.g. event_time_bounds: {past: 30d, future: 1h} or {min: '2020-01-01T00:00:00Z'}",
        )
    return raw


# EventTimeBounds names the key of a range error (event_time_bounds.max)
BOUNDS = section(BOUNDS_TABLE, lambda values: EventTimeBounds(**values), shape=_bounds_shape)


def event_time_bounds(raw: Any) -> EventTimeBounds:
    """``event_time_bounds:`` (optional) as EventTimeBounds (engine/event_time.py).

    ``past``/``future``: durations around processing time (``none`` = no such bound);
    ``min``/``max``: ISO-8601 instants (UTC when no offset is given; ``none`` = no bound).
    A key left out keeps its default (future 1 hour, min 1900-01-01T00:00:00Z).
    """
    return BOUNDS("event_time_bounds", raw)  # type: ignore[no-any-return]


# -- the checks section (checks | checks_file, measures, pass) --------------------------------


@dataclass(frozen=True)
class ChecksSpec:
    """The checks section, parsed: the compiled ``checks``, the ``measures`` and the ``pass:``
    policy (None when not written), from the run config inline or from ``checks_file``
    (``origin``: the file's path, or ``<inline>``). ``raw_*`` keep the YAML as written."""

    checks: tuple[Any, ...] = ()
    measures: tuple[Any, ...] = ()
    pass_policy: PassPolicy | None = None
    origin: str = "<inline>"
    raw_checks: tuple[Any, ...] = ()
    raw_measures: tuple[Any, ...] = ()
    raw_pass: Any = None


# -- the run config -------------------------------------------------------------------------


def _mapping_of(what: str) -> Any:
    def check(path: str, value: Any) -> dict[str, Any]:
        if not isinstance(value, Mapping):
            raise ConfigError(path, f"expected {what}, got {value!r}")
        return dict(value)

    return custom(check, "mapping")


def _watermark(path: str, value: Any) -> float:
    return 0.0 if value in (None, 0, "0") else seconds_of(value, path)


def _trigger(path: str, value: Any) -> str:
    """``once``, ``available_now``, or the processing-time interval as Spark writes it
    (``5`` and ``5s`` are ``5 seconds``)."""
    if value in ("once", "available_now"):
        return str(value)
    return spark_interval(seconds_of(value, path))


def _sinks(path: str, value: Any) -> tuple[SinkSpec, ...]:
    from streamdq.connectors.sinks.config import parse_sink_specs

    if value is None or value == []:
        value = [{"type": "console"}]
    if not isinstance(value, list) or not all(isinstance(s, Mapping) for s in value):
        raise ConfigError(path, "expected a list of mappings such as [{type: console}]")
    return parse_sink_specs(value, path)


def _policy(path: str, value: Any) -> AlertPolicy:
    if value is not None and not isinstance(value, Mapping):
        raise ConfigError(
            path, "expected a mapping (cooldown_seconds, rate_limit_per_minute, min_rows_floor, ...)"
        )
    return AlertPolicy.from_spec(dict(value) if value else None, where=path)


def _anything(path: str, value: Any) -> Any:
    return value


RUN_TABLE = Table(
    "run config",
    (
        Key(
            "dataset",
            text(),
            default=REQUIRED,
            fix="add a dataset name (string), e.g. 'dataset: orders'",
            fallback="",
            doc="the dataset's name (state rows, metrics, alerts carry it)",
        ),
        Key(
            "source",
            _mapping_of("a mapping with a 'type' (kafka | files | clf | generator)"),
            default=REQUIRED,
            fix="add a mapping with a 'type' (kafka | files | clf | generator)",
            fallback={},
            doc="where the records come from (docs/sources.md)",
        ),
        Key(
            "checkpoint",
            text(),
            default=REQUIRED,
            fix="add a checkpoint directory, e.g. 'checkpoint: ./chk'",
            fallback="",
            doc="Spark's checkpoint folder (offsets; the query id)",
        ),
        Key(
            "event_time",
            optional(text()),
            default=None,
            fix="write event_time: ts",
            doc="the timestamp column windows are cut by",
        ),
        Key(
            "window",
            duration(),
            default=60.0,
            shown="1 minute",
            fix="write window: 1 minute",
            doc="length of an event-time window",
        ),
        Key(
            "watermark",
            custom(_watermark, "duration | 0"),
            default=0.0,
            fix="write watermark: 30 seconds",
            doc="how late an event may come",
        ),
        Key(
            "trigger",
            custom(_trigger, "duration | once | available_now"),
            default="5 seconds",
            fallback="5 seconds",
            fix="write trigger: 5 seconds",
            doc="how often a microbatch starts",
        ),
        Key(
            "state",
            STATE,
            default=StateConfig(),
            shown="no state (see state:)",
            doc="the state store: a path, or the mapping of state keys",
        ),
        Key("quarantine", boolean(), default=True, doc="write bad records to the quarantine table"),
        Key(
            "checks",
            custom(_anything, "list of checks"),
            default=None,
            doc="the checks inline (docs/checks.md)",
        ),
        Key("checks_file", text(), default=None, doc="a YAML file of checks (and measures, pass)"),
        Key(
            "measures",
            custom(_anything, "list of measures"),
            default=None,
            doc="SQL measures (docs/measure-check-pass.md)",
        ),
        Key(
            "pass",
            custom(_anything, "pass policy"),
            default=None,
            doc="when a batch passes (docs/measure-check-pass.md)",
        ),
        Key(
            "sinks",
            custom(_sinks, "list of sinks"),
            default=None,
            fallback=(),
            shown="[{type: console}]",
            doc="where reports and alerts go (default: console)",
        ),
        Key(
            "alerts",
            custom(_policy, "mapping (alert policy)"),
            default=None,
            shown="the policy's defaults",
            doc="the alert policy (docs/alerts.md)",
        ),
        Key(
            "max_groups", integer(low=1), default=100_000, example=100, doc="groups kept per grouped analyzer"
        ),
        Key(
            "small_batch_rows",
            integer(
                low=0,
                meaning="rows up to which a microbatch takes the one-job Arrow path; 0 = always the fused Spark passes",
            ),
            default=250_000,
            example=100,
            doc="rows up to which a microbatch takes the one-job Arrow path",
        ),
        Key(
            "row_level_quarantine_max_rows",
            integer(
                low=0,
                meaning="rows failing row-level constraints quarantined per batch (docs/checks.md); the rest are counted",
            ),
            default=1000,
            example=100,
            doc="rows failing row-level constraints quarantined per batch",
        ),
        Key(
            "query_name",
            optional(text()),
            default=None,
            doc="the Spark query's name (default streamdq_<dataset>)",
        ),
        Key(
            "supervision",
            SUPERVISION,
            default=SupervisionConfig(),
            shown="on (see supervision:)",
            doc="restarts of a failed query; false: none",
        ),
        Key(
            "event_time_bounds",
            BOUNDS,
            default=EventTimeBounds(),
            shown="future 1h, min 1900-01-01",
            doc="the plausible event times; rows outside are bad records",
        ),
    ),
)
KNOWN_KEYS = set(RUN_TABLE.names())


def _monitor_key(key: str) -> Key:
    return Key(key, custom(_anything, "mapping"), default=None, doc=f"the {key} window monitor")


@dataclass(frozen=True)
class RunConfig:
    """A parsed run config: every section a typed, frozen value (see the module docstring).

    ``checks``, ``checks_origin``, ``measures`` and ``pass_spec`` are the raw checks section as
    written (from ``checks_spec``); ``alerts`` is the raw ``alerts:`` mapping, ``policy`` its
    parsed ``AlertPolicy``; ``monitors`` the raw section per registered monitor key."""

    dataset: str
    source: dict[str, Any]
    checkpoint: str
    event_time: str | None = None
    window_seconds: float = 60.0
    watermark_seconds: float = 0.0
    trigger: str = "5 seconds"
    state: StateConfig = field(default_factory=StateConfig)
    quarantine: bool = True
    checks_spec: ChecksSpec = field(default_factory=ChecksSpec)
    sinks: tuple[SinkSpec, ...] = ()
    alerts: dict[str, Any] = field(default_factory=dict)
    policy: AlertPolicy = field(default_factory=AlertPolicy)
    max_groups: int = 100_000
    small_batch_rows: int = 250_000
    row_level_quarantine_max_rows: int = 1000  # per batch; beyond it rows are counted only
    auto_validate: dict[str, Any] | None = None
    quality_score: dict[str, Any] | None = None
    monitors: dict[str, Any] = field(default_factory=dict)  # raw section per registered monitor key
    monitor_specs: tuple[MonitorSpec, ...] = ()  # each monitor section, parsed (streamdq.monitors)
    query_name: str | None = None
    supervision: SupervisionConfig = field(default_factory=SupervisionConfig)
    event_time_bounds: EventTimeBounds = field(default_factory=EventTimeBounds)
    source_schema: StructType | None = None  # the decoded frame's declared columns (None: from the data)
    source_spec: SourceSpec | None = None  # ``source`` parsed once (None only for a config built by hand)
    file: str | None = None

    @property
    def query_label(self) -> str:
        return self.query_name or f"streamdq_{re.sub(r'[^A-Za-z0-9_]', '_', self.dataset)}"

    @property
    def checks(self) -> list[Any]:
        return list(self.checks_spec.raw_checks)

    @property
    def checks_origin(self) -> str:
        return self.checks_spec.origin

    @property
    def measures(self) -> list[Any]:
        return list(self.checks_spec.raw_measures)

    @property
    def pass_spec(self) -> Any:
        return self.checks_spec.raw_pass


def _resolve(path: str, base: Path) -> str:
    if "://" in path or os.path.isabs(path) or "\x00" in path:  # a NUL is reported by the checks
        return path
    return str((base / path).resolve())


def load_run_config(
    source: str | os.PathLike[str] | dict[str, Any], *, base_dir: str | None = None
) -> RunConfig:
    """Load and parse a run config from a YAML file path or an already-parsed dict.

    Raises ``ConfigErrors`` (a ``ConfigError``) listing every mistake found in the file.
    """
    config, errors = read_run_config(source, base_dir=base_dir)
    errors.raise_if_any()
    assert config is not None
    return config


def read_run_config(
    source: str | os.PathLike[str] | dict[str, Any], *, base_dir: str | None = None
) -> tuple[RunConfig | None, ErrorCollector]:
    """The run config as far as it is valid (stand-ins for wrong keys) and the errors.

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
        return _parse(raw, base, file, errs), errs
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


def _parse(raw: Any, base: Path, file: str | None, errs: ErrorCollector) -> RunConfig | None:
    """Every section parsed once, each mistake recorded in ``errs`` (stand-ins go on)."""
    if not isinstance(raw, dict):
        errs.add(
            ConfigError("", "the run config must be a mapping with keys such as dataset, source, checkpoint")
        )
        return None
    monitor_keys = monitor_registry().keys()  # auto_validate, quality_score (streamdq.monitors)
    table = Table(RUN_TABLE.name, (*RUN_TABLE.keys, *(_monitor_key(k) for k in monitor_keys)))
    values = table.parse(raw, "", errs)
    source, schema, source_spec = _source(raw, values["source"], base, errs)
    checkpoint = _resolve(values["checkpoint"], base) if values["checkpoint"] else ""
    state: StateConfig = values["state"]
    if state.path:
        state = StateConfig(**{**state.__dict__, "path": _resolve(state.path, base)})
    checks = _checks_spec(raw, base, file, schema, errs)
    no_monitors: tuple[MonitorSpec, ...] = ()
    monitor_specs = errs.get(monitor_registry().parse_all, raw, values["dataset"], default=no_monitors)
    alerts = raw.get("alerts")
    sinks = values["sinks"] if values["sinks"] is not None else _sinks("sinks", None)
    policy = values["alerts"] if values["alerts"] is not None else _policy("alerts", None)
    return RunConfig(
        dataset=values["dataset"],
        source=source,
        checkpoint=checkpoint,
        event_time=values["event_time"],
        window_seconds=values["window"],
        watermark_seconds=values["watermark"],
        trigger=values["trigger"],
        state=state,
        quarantine=values["quarantine"],
        checks_spec=checks,
        sinks=sinks,
        alerts=dict(alerts) if isinstance(alerts, Mapping) else {},
        policy=policy,
        max_groups=values["max_groups"],
        small_batch_rows=values["small_batch_rows"],
        row_level_quarantine_max_rows=values["row_level_quarantine_max_rows"],
        auto_validate=raw.get("auto_validate"),
        quality_score=raw.get("quality_score"),
        monitors={key: raw[key] for key in monitor_keys if raw.get(key) is not None},
        monitor_specs=monitor_specs,
        query_name=values["query_name"],
        supervision=values["supervision"],
        event_time_bounds=values["event_time_bounds"],
        source_schema=schema,
        source_spec=source_spec,
        file=file,
    )


def _source(
    raw: dict[str, Any], given: dict[str, Any], base: Path, errs: ErrorCollector
) -> tuple[dict[str, Any], StructType | None, SourceSpec | None]:
    """``source:`` (paths resolved) parsed once into a ``SourceSpec``, and its declared schema
    (None when the schema comes from the data or the source is broken; with only a ``required``
    field wrong the schema is still known, so the checks are checked against it)."""
    from streamdq.connectors.sources.spec import declared_schema, parse_source_spec

    source = dict(given)
    for key in ("path", "schema_file"):
        if isinstance(source.get(key), str):
            source[key] = _resolve(source[key], base)
    if not isinstance(raw.get("source"), Mapping):
        return source, None, None
    found = ErrorCollector()
    parsed = found.get(parse_source_spec, source, "source", default=None)
    errs.extend(found.errors)
    if parsed is not None:
        return source, parsed.schema, parsed
    if any(e.key != "source.required" for e in found.errors):
        return source, None, None
    return source, errs.get(declared_schema, source, "source", default=None), None


def _checks_spec(
    raw: dict[str, Any], base: Path, file: str | None, schema: StructType | None, errs: ErrorCollector
) -> ChecksSpec:
    """The checks section: checks compiled, measures parsed (against the declared schema's data
    columns when known), the ``pass:`` policy checked against both. A mistake in a checks file
    names that file and the line of its key."""
    from streamdq import metadata_columns
    from streamdq.checks.judgement_spec import validate_judgement
    from streamdq.checks.measure_spec import checked_measures
    from streamdq.checks.spec import checks_from_list, with_line

    given = errs.get(_checks_source, raw, base, default=_ChecksSource([], None, None))
    raw_checks, origin, text = given.checks, given.origin, given.text
    raw_measures: list[Any] = []
    if isinstance(given.measures, list):
        raw_measures = given.measures
    elif given.measures is not None:
        errs.add(ConfigError("measures", "expected a list of measures (see docs/measure-check-pass.md)"))
    raw_pass = given.pass_value
    where = origin if origin != "<inline>" else file

    def add(found: Any) -> None:
        errs.extend(with_line(text, e, where) if text is not None else e for e in found)

    checks: list[Any] = []
    compiled = True
    try:
        checks = list(checks_from_list(raw_checks, file=where, path="checks"))
    except ConfigError as exc:
        compiled = False
        add(exc.errors_list())
    data = metadata_columns.data_columns(schema.fieldNames()) if schema is not None else None
    measures, found = checked_measures(raw_measures, data, file=where, path="measures")
    add(found)
    policy = None
    if compiled:
        names = [str(m.get("name")) for m in raw_measures if isinstance(m, dict) and m.get("name")]
        try:
            policy = validate_judgement(checks, names, raw_pass, file=where)
        except ConfigError as exc:
            add(exc.errors_list())
    return ChecksSpec(
        checks=tuple(checks),
        measures=tuple(measures),
        pass_policy=policy,
        origin=origin,
        raw_checks=tuple(raw_checks),
        raw_measures=tuple(raw_measures),
        raw_pass=raw_pass,
    )


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


@dataclass(frozen=True)
class _ChecksSource:
    """The checks section as written: inline in the run config, or the checks file read once."""

    checks: list[Any]
    measures: Any
    pass_value: Any
    origin: str = "<inline>"
    text: str | None = None  # the checks file's text (for the line of a key), None inline


def _checks_source(raw: dict[str, Any], base: Path) -> _ChecksSource:
    """``checks`` (or the file of ``checks_file``, read and parsed once), ``measures`` and
    ``pass`` (each inline in the run config, else beside the checks in the file)."""
    if "checks" in raw and "checks_file" in raw:
        raise ConfigError("checks_file", "give either 'checks' (inline) or 'checks_file', not both")
    if "checks_file" not in raw:
        checks = raw.get("checks") or []
        if not isinstance(checks, list):
            raise ConfigError("checks", "expected a list of checks (see docs/checks.md)")
        return _ChecksSource(checks, raw.get("measures"), raw.get("pass"))
    path = _resolve(str(raw["checks_file"]), base)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError("checks_file", f"cannot read checks file {path}: {exc.strerror}") from None
    try:
        doc = yaml.safe_load(text)
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
    beside = doc if isinstance(doc, dict) else {}
    measures = raw["measures"] if raw.get("measures") is not None else beside.get("measures")
    pass_value = raw["pass"] if "pass" in raw else beside.get("pass")
    return _ChecksSource(checks, measures, pass_value, path, text)
