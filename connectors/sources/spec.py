"""Start-up validation of a source spec (the run config's ``source:`` mapping).

``validate_source_spec(spec, where="source")`` raises :class:`streamdq.errors.ConfigError` naming
the key path (``source.format``), the problem and the fix; it returns None for a valid spec. It
does not touch the network. The schema DDL is parsed by the pure-Python parser in ``ddl.py``,
with or without a SparkSession, so a mistake reads the same either way (the run config is checked
before Spark starts); ``read_source`` parses it again with Spark in any case. ``declared_schema(spec)`` is the
StructType of the decoded frame's columns (data fields plus typed metadata columns), for checking
``event_time``, checks and monitors against it before Spark starts.

Keys per ``type`` (all types also take ``type``):

* kafka: ``bootstrap_servers``, ``topic`` (required), ``starting_offsets``,
  ``max_records_per_trigger``, ``kafka_options``, ``implementation``, ``client``, ``min_partitions``,
  ``offset_timeout_s``, ``read_timeout_s``, ``initial_offset_wait_s``; ``format`` json | csv | clf | raw (default json);
  ``schema`` (required for json/csv), ``schema_file``, ``required``, ``sep``.
* files: ``path`` (required), ``format`` json | csv | parquet | text (default json),
  ``schema`` (required except text), ``schema_file``, ``required``, ``max_files_per_trigger``,
  ``header`` (csv: bind columns by the header's names), ``sep``, ``null_value`` (csv: the null
  marker, e.g. ``NA``), ``order`` (``mtime``, default: Spark's file source; ``name``: a local
  directory's files in name order, not for parquet), ``options`` (passed to Spark's reader).
* clf: ``path`` (required), ``max_files_per_trigger``, ``options``, ``required`` (of the CLF
  columns); the schema is fixed.
* generator: ``rows_per_second``, ``seed``, ``start``, ``incidents`` (a list of incident mappings,
  or a mapping ``{every, duration, kinds, count, first_at}`` for a rolling schedule),
  ``rows_per_batch``, ``max_rows``, ``max_records_per_trigger``, ``num_partitions``, ``schema``
  and ``required`` (default: the generator's own).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pyspark.sql.types import StructType
from streamdq.connectors.sources.clf import CLF_COLUMNS, CLF_SCHEMA_DDL
from streamdq.connectors.sources.ddl import parse_ddl
from streamdq.connectors.sources.decode import JSON_DECODERS
from streamdq.connectors.sources.generator import (
    GENERATOR_SCHEMA_DDL,
    INCIDENT_KINDS,
    Incident,
    parse_seconds,
    parse_start_ms,
    rolling_incidents,
)

from streamdq.errors import ConfigError, ConfigErrors, ErrorCollector

SOURCE_TYPES = ("kafka", "files", "clf", "generator")
_COMMON = {"type"}
_DECODE = {"format", "schema", "schema_file", "required", "sep", "header", "invalid_utf8", "decoder"}
ALLOWED_KEYS: dict[str, set[str]] = {
    "kafka": _COMMON
    | _DECODE
    | {
        "bootstrap_servers",
        "topic",
        "starting_offsets",
        "max_records_per_trigger",
        "kafka_options",
        "implementation",
        "client",
        "min_partitions",
        "offset_timeout_s",
        "read_timeout_s",
        "initial_offset_wait_s",
    },
    "files": _COMMON | _DECODE | {"path", "max_files_per_trigger", "options", "order", "null_value"},
    "clf": _COMMON | {"path", "max_files_per_trigger", "options", "required", "format", "invalid_utf8"},
    "generator": _COMMON
    | {
        "format",
        "schema",
        "required",
        "decoder",
        "rows_per_second",
        "seed",
        "start",
        "incidents",
        "rows_per_batch",
        "max_rows",
        "max_records_per_trigger",
        "num_partitions",
    },
}
PAYLOAD_FORMATS = {"kafka": ("json", "csv", "clf", "raw"), "files": ("json", "csv", "parquet", "text")}
ROLLING_KEYS = {"every", "duration", "kinds", "count", "first_at"}


def _positive_int(spec: Mapping[str, Any], key: str, where: str) -> None:
    value = spec.get(key)
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ConfigError(
            f"{where}.{key}", f"must be a positive integer, got {value!r}", f"set e.g. {key}: 1000"
        )


def _positive_number(spec: Mapping[str, Any], key: str, where: str) -> None:
    value = spec.get(key)
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ConfigError(
            f"{where}.{key}", f"must be a positive number, got {value!r}", f"set e.g. {key}: 200"
        )


def _local_path(path: str) -> Path | None:
    """The local filesystem path, or None for a URI with another scheme (s3a://, hdfs://, ...)."""
    if path.startswith("file://"):
        return Path(path[len("file://") :])
    if "://" in path:
        return None
    return Path(path)


def _check_path(spec: Mapping[str, Any], where: str) -> None:
    path = spec.get("path")
    if not isinstance(path, str) or not path:
        raise ConfigError(f"{where}.path", "is required", "set the directory to watch, e.g. path: /data/in")
    if "\x00" in path:
        raise ConfigError(f"{where}.path", f"{path!r} contains a NUL character", "correct the path")
    local = _local_path(path)
    if local is not None and not any(ch in str(local) for ch in "*?[") and not local.is_dir():
        raise ConfigError(
            f"{where}.path",
            f"directory {path} does not exist",
            "create it (Spark watches a directory for new files) or correct the path",
        )


def schema_text(spec: Mapping[str, Any], where: str = "source") -> str | None:
    """The schema DDL of a spec: ``schema`` inline, or the text of ``schema_file`` (DDL or Spark JSON)."""
    if spec.get("schema") is not None:
        if spec.get("schema_file") is not None:
            raise ConfigError(
                f"{where}.schema_file", "both schema and schema_file are set", "keep one of them"
            )
        if not isinstance(spec["schema"], str):
            raise ConfigError(
                f"{where}.schema", "must be a Spark DDL string", "write 'id STRING, ts TIMESTAMP'"
            )
        return str(spec["schema"])
    file = spec.get("schema_file")
    if file is None:
        return None
    try:
        text = Path(os.fspath(file)).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(
            f"{where}.schema_file", f"cannot read {file}: {exc.strerror}", "fix the path"
        ) from None
    stripped = text.strip()
    if stripped.startswith("{"):
        from pyspark.sql.types import StructType

        try:
            return ", ".join(
                f"`{f.name}` {f.dataType.simpleString()}"
                for f in StructType.fromJson(json.loads(stripped)).fields
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise ConfigError(
                f"{where}.schema_file", f"{file} is not a Spark JSON schema: {exc}", None
            ) from None
    return stripped


def _check_schema(spec: Mapping[str, Any], where: str, needed: bool) -> list[str] | None:
    """The schema's field names when it can be parsed now, else None."""
    text = schema_text(spec, where)
    if text is None:
        if needed:
            raise ConfigError(
                f"{where}.schema",
                "is required for this source",
                "give a Spark DDL like 'id STRING, ts TIMESTAMP'",
            )
        return None
    # always the pure-Python parser: the same messages with or without a running session
    # (Spark parses the schema again when the source starts)
    return parse_ddl(text, _schema_key(spec, where)).fieldNames()


def _schema_key(spec: Mapping[str, Any], where: str) -> str:
    """The key an error in the schema names: ``schema``, or ``schema_file`` when it came from one."""
    return (
        f"{where}.schema_file"
        if spec.get("schema") is None and spec.get("schema_file")
        else f"{where}.schema"
    )


def _check_required(spec: Mapping[str, Any], where: str, names: list[str] | None) -> None:
    req = spec.get("required")
    if req is None:
        return
    if not isinstance(req, list | tuple) or not all(isinstance(r, str) for r in req):
        raise ConfigError(
            f"{where}.required", f"must be a list of field names, got {req!r}", "write [order_id, ts]"
        )
    if names is not None:
        missing = [
            ConfigError(
                f"{where}.required",
                f"field {name!r} is not in the schema (fields: {', '.join(names)})",
                f"add it to {where}.schema or remove it from {where}.required",
            )
            for name in req
            if name not in names
        ]
        if missing:
            raise ConfigErrors(missing)


def _check_file_options(spec: Mapping[str, Any], where: str, fmt: str) -> None:
    """``order``, ``null_value``, ``sep`` and ``header`` of a files source."""
    order = spec.get("order")
    if order is not None:
        if order not in ("mtime", "name"):
            raise ConfigError(
                f"{where}.order",
                f"unknown value {order!r}",
                "use name (files in name order: backfills named by date) or mtime (Spark's default)",
            )
        if order == "name":
            if fmt == "parquet":
                raise ConfigError(
                    f"{where}.order", "name order is for json, csv and text files", "remove it for parquet"
                )
            if spec.get("options"):
                raise ConfigError(
                    f"{where}.options",
                    "Spark reader options do not apply with order: name (streamdq lists the files)",
                    "remove them, or use order: mtime",
                )
            if _local_path(str(spec.get("path"))) is None:
                raise ConfigError(
                    f"{where}.order",
                    f"name order lists a local directory; {spec.get('path')} is not one",
                    "use order: mtime for object stores and HDFS",
                )
    for key in ("null_value", "sep"):
        value = spec.get(key)
        if value is not None and not isinstance(value, str):
            raise ConfigError(f"{where}.{key}", f"must be a string, got {value!r}", f'quote it: {key}: "NA"')
    if spec.get("sep") == "":
        raise ConfigError(f"{where}.sep", "is empty", "give the separator, e.g. sep: ';'")
    header = spec.get("header")
    if header is not None and not isinstance(header, bool):
        raise ConfigError(f"{where}.header", f"must be true or false, got {header!r}", "write header: true")


KAFKA_METADATA_DDL = (
    "_streamdq_kafka_topic STRING, _streamdq_kafka_partition INT, _streamdq_kafka_offset BIGINT, "
    "_streamdq_kafka_timestamp TIMESTAMP"
)
METADATA_DDL = {"kafka": KAFKA_METADATA_DDL, "files": "_streamdq_file STRING", "clf": "_streamdq_file STRING"}
METADATA_DDL["generator"] = "_streamdq_offset BIGINT"


def declared_schema(spec: Mapping[str, Any], where: str = "source") -> StructType | None:
    """The columns a valid ``spec``'s decoded frame has (data, then metadata), without Spark.

    None when they are not known before the data is read (a spec without a schema). Raises
    ConfigError for a schema that does not parse. Call it on a spec that validates.
    """
    kind = spec.get("type")
    fmt = spec.get("format") or {"clf": "clf", "generator": "json"}.get(str(kind), "json")
    if kind == "clf" or fmt == "clf":
        text: str | None = CLF_SCHEMA_DDL
    elif fmt in ("raw", "text"):
        text = "value STRING"
    elif kind == "generator":
        text = str(spec.get("schema") or GENERATOR_SCHEMA_DDL)
    else:
        text = schema_text(spec, where)
    if text is None or kind not in METADATA_DDL:
        return None
    data = parse_ddl(text, _schema_key(spec, where))
    meta = parse_ddl(METADATA_DDL[str(kind)], f"{where}.schema")
    return StructType([*data.fields, *meta.fields])


def _check_starting_offsets(value: Any, where: str) -> bool:
    """``earliest`` | ``latest`` | a JSON string | ``{topic: {partition: offset}}``."""
    if value is None or isinstance(value, str) and value.strip():
        return True
    ok = isinstance(value, Mapping) and all(
        isinstance(parts, Mapping)
        and all(
            str(p).lstrip("-").isdigit() and isinstance(o, int) and not isinstance(o, bool)
            for p, o in parts.items()
        )
        for parts in value.values()
    )
    if not ok:
        raise ConfigError(
            where,
            f"expected earliest, latest or a mapping {{topic: {{partition: offset}}}}, got {value!r}",
            "write starting_offsets: earliest",
        )
    return True


def _check_incidents(value: Any, where: str) -> None:
    if value is None:
        return
    if isinstance(value, Mapping):
        unknown = sorted(set(value) - ROLLING_KEYS)
        if unknown:
            raise ConfigError(
                f"{where}.{unknown[0]}",
                "unknown key",
                f"a rolling schedule takes {', '.join(sorted(ROLLING_KEYS))}",
            )
        kinds = value.get("kinds", [])
        if not isinstance(kinds, list | tuple):
            raise ConfigError(
                f"{where}.kinds",
                f"expected a list of incident kinds, got {kinds!r}",
                f"use {', '.join(INCIDENT_KINDS)}",
            )
        for kind in kinds:
            if kind not in INCIDENT_KINDS:
                raise ConfigError(
                    f"{where}.kinds", f"unknown kind {kind!r}", f"use {', '.join(INCIDENT_KINDS)}"
                )
        incidents_from_config(value, where)
        return
    if not isinstance(value, list):
        raise ConfigError(where, "must be a list of incidents or a rolling schedule", "see docs/sources.md")
    for n, item in enumerate(value):
        Incident.from_dict(item, f"{where}[{n}]")


def incidents_from_config(value: Any, where: str = "source.incidents") -> tuple[Incident, ...]:
    """Incidents from config: a list of incident mappings, or a rolling-schedule mapping."""
    if value is None:
        return ()
    if isinstance(value, Mapping):
        kinds = tuple(value.get("kinds") or INCIDENT_KINDS)
        first = value.get("first_at")
        return rolling_incidents(
            every=parse_seconds(value.get("every", 180), f"{where}.every"),
            duration=parse_seconds(value.get("duration", 60), f"{where}.duration"),
            kinds=kinds,
            count=int(value.get("count", 20)),
            first_at=None if first is None else parse_seconds(first, f"{where}.first_at"),
        )
    return tuple(Incident.from_dict(item, f"{where}[{n}]") for n, item in enumerate(value))


def validate_source_spec(spec: Any, where: str = "source") -> None:
    """Raise ConfigError (key path, problem, fix) if ``spec`` is not a valid source spec.

    Several mistakes are raised together as one ``ConfigErrors`` (a ConfigError)."""
    if not isinstance(spec, Mapping):
        raise ConfigError(
            where, f"must be a mapping, got {type(spec).__name__}", "write source: {type: kafka, ...}"
        )
    kind = spec.get("type")
    if kind not in SOURCE_TYPES:
        raise ConfigError(
            f"{where}.type", f"unknown source type {kind!r}", f"use one of {', '.join(SOURCE_TYPES)}"
        )
    errs = ErrorCollector()  # every mistake of the spec at once (ConfigErrors)
    for key in sorted(set(spec) - ALLOWED_KEYS[kind], key=str):
        errs.add(
            ConfigError(
                f"{where}.{key}",
                f"unknown key for a {kind} source",
                f"allowed keys: {', '.join(sorted(ALLOWED_KEYS[kind]))}",
            )
        )
    fmt = spec.get("format")
    if kind in PAYLOAD_FORMATS:
        fmt = fmt if fmt is not None else "json"
        if fmt not in PAYLOAD_FORMATS[kind]:
            errs.add(
                ConfigError(
                    f"{where}.format",
                    f"unknown value {fmt!r}",
                    f"use one of {', '.join(PAYLOAD_FORMATS[kind])}",
                )
            )
            errs.raise_if_any()
    elif fmt is not None and fmt != {"clf": "clf", "generator": "json"}[kind]:
        errs.add(
            ConfigError(f"{where}.format", f"a {kind} source has a fixed format", f"remove {where}.format")
        )
    if kind == "kafka":
        missing = [key for key in ("bootstrap_servers", "topic") if not spec.get(key)]
        for key in missing:
            errs.add(ConfigError(f"{where}.{key}", "is required for a kafka source", f"set {where}.{key}"))
        from streamdq.connectors.sources.kafka import _validate as validate_kafka

        offsets_ok = errs.get(
            _check_starting_offsets, spec.get("starting_offsets"), f"{where}.starting_offsets", default=False
        )
        try:
            if not missing and offsets_ok:
                validate_kafka(spec)
        except ConfigError as exc:
            if where != "source" and exc.key.startswith("source."):
                errs.add(ConfigError(where + exc.key[len("source") :], exc.problem, exc.fix))
            else:
                errs.add(exc)
        except (TypeError, ValueError, AttributeError) as exc:  # a shape the kafka checks did not expect
            errs.add(ConfigError(where, f"invalid kafka source settings: {exc}", "see docs/sources.md"))
        names = errs.get(_check_schema, spec, where, needed=fmt in ("json", "csv"), default=None)
        if fmt == "clf":
            names = list(CLF_COLUMNS)
        with errs.catch():
            _check_required(spec, where, names)
    elif kind == "files":
        with errs.catch():
            _check_path(spec, where)
        with errs.catch():
            _positive_int(spec, "max_files_per_trigger", where)
        with errs.catch():
            _check_file_options(spec, where, str(fmt))
        names = errs.get(_check_schema, spec, where, needed=fmt != "text", default=None)
        with errs.catch():
            _check_required(spec, where, names)
    elif kind == "clf":
        with errs.catch():
            _check_path(spec, where)
        with errs.catch():
            _positive_int(spec, "max_files_per_trigger", where)
        with errs.catch():
            _check_required(spec, where, list(CLF_COLUMNS))
    else:
        with errs.catch():
            _positive_number(spec, "rows_per_second", where)
        for key in ("rows_per_batch", "max_rows", "max_records_per_trigger", "num_partitions"):
            with errs.catch():
                _positive_int(spec, key, where)
        seed = spec.get("seed")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            errs.add(ConfigError(f"{where}.seed", f"must be an integer, got {seed!r}", "set e.g. seed: 1"))
        if spec.get("start") is not None:
            with errs.catch():
                parse_start_ms(spec["start"], f"{where}.start")
        with errs.catch():
            _check_incidents(spec.get("incidents"), f"{where}.incidents")
        names = errs.get(
            _check_schema,
            {"schema": spec.get("schema", GENERATOR_SCHEMA_DDL)},
            where,
            needed=True,
            default=None,
        )
        with errs.catch():
            _check_required(spec, where, names)
    if spec.get("invalid_utf8") is not None and spec["invalid_utf8"] not in ("quarantine", "flag"):
        errs.add(
            ConfigError(
                f"{where}.invalid_utf8",
                f"unknown policy {spec['invalid_utf8']!r}",
                "use quarantine (the record is bad: 'invalid UTF-8') or flag (kept and counted)",
            )
        )
    if spec.get("decoder") is not None and spec["decoder"] not in JSON_DECODERS:
        errs.add(
            ConfigError(
                f"{where}.decoder",
                f"unknown decoder {spec['decoder']!r}",
                "use auto (streamdq's single-pass JVM decoder when its jar is there, else Spark's "
                "built-ins), jvm (that decoder or an error) or spark (built-ins only)",
            )
        )
    for key in ("options", "kafka_options"):
        if spec.get(key) is not None and not isinstance(spec[key], Mapping):
            errs.add(
                ConfigError(f"{where}.{key}", f"must be a mapping, got {type(spec[key]).__name__}", None)
            )
    errs.raise_if_any()
