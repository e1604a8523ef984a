"""The run config's ``source:`` mapping, parsed once into a frozen ``SourceSpec``.

``parse_source_spec(spec, where="source")`` checks the mapping with its type's table
(``SOURCE_TABLES``: ``streamdq.config_schema`` rows, the Kafka ones being ``KAFKA_KEYS`` of
``kafka_options.py``), then across keys (a kafka source's ``KafkaSpec``, the path, the schema
against ``format`` and ``required``, ``order: name``), and raises every mistake at once as
:class:`streamdq.errors.ConfigError` naming the key path (``source.format``), the problem and the
fix. It does not touch the network. The schema DDL is parsed by the pure-Python parser in
``ddl.py``, with or without a SparkSession, so a mistake reads the same either way (the run config
is checked before Spark starts). ``read_source`` takes the ``SourceSpec`` and validates nothing
again. ``validate_source_spec`` is the same check, result dropped. ``declared_schema(spec)`` is
the StructType of the decoded frame's columns (data fields plus typed metadata columns), for
checking ``event_time``, checks and monitors against it before Spark starts.

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
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
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
from streamdq.connectors.sources.kafka_options import KAFKA_KEYS, KafkaSpec

from streamdq.config_schema import Check, Key, Table, custom
from streamdq.errors import ConfigError, ConfigErrors, ErrorCollector

SOURCE_TYPES = ("kafka", "files", "clf", "generator")
PAYLOAD_FORMATS = {"kafka": ("json", "csv", "clf", "raw"), "files": ("json", "csv", "parquet", "text")}
FIXED_FORMATS = {"clf": "clf", "generator": "json"}
ROLLING_KEYS = {"every", "duration", "kinds", "count", "first_at"}


def _positive_int_check(path: str, value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        name = path.rsplit(".", 1)[-1]
        raise ConfigError(path, f"must be a positive integer, got {value!r}", f"set e.g. {name}: 1000")
    return value


def _positive_number_check(path: str, value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        name = path.rsplit(".", 1)[-1]
        raise ConfigError(path, f"must be a positive number, got {value!r}", f"set e.g. {name}: 200")
    return value


def _seed_check(path: str, value: Any) -> int | None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
        raise ConfigError(path, f"must be an integer, got {value!r}", "set e.g. seed: 1")
    return value


def _start_check(path: str, value: Any) -> Any:
    if value is not None:
        parse_start_ms(value, path)
    return value


def _incidents_check(path: str, value: Any) -> tuple[Incident, ...]:
    _check_incidents(value, path)
    return incidents_from_config(value, path)


def _required_check(path: str, value: Any) -> tuple[str, ...] | None:
    if value is None:
        return None
    if not isinstance(value, list | tuple) or not all(isinstance(r, str) for r in value):
        raise ConfigError(path, f"must be a list of field names, got {value!r}", "write [order_id, ts]")
    return tuple(value)


def _string_check(path: str, value: Any) -> str | None:
    name = path.rsplit(".", 1)[-1]
    if value is not None and not isinstance(value, str):
        raise ConfigError(path, f"must be a string, got {value!r}", f'quote it: {name}: "NA"')
    if name == "sep" and value == "":
        raise ConfigError(path, "is empty", "give the separator, e.g. sep: ';'")
    return value


def _header_check(path: str, value: Any) -> bool | None:
    if value is not None and not isinstance(value, bool):
        raise ConfigError(path, f"must be true or false, got {value!r}", "write header: true")
    return value


def _order_check(path: str, value: Any) -> str | None:
    if value is not None and value not in ("mtime", "name"):
        raise ConfigError(
            path,
            f"unknown value {value!r}",
            "use name (files in name order: backfills named by date) or mtime (Spark's default)",
        )
    return value


def _utf8_check(path: str, value: Any) -> str | None:
    if value is not None and value not in ("quarantine", "flag"):
        raise ConfigError(
            path,
            f"unknown policy {value!r}",
            "use quarantine (the record is bad: 'invalid UTF-8') or flag (kept and counted)",
        )
    return value


def _decoder_check(path: str, value: Any) -> str | None:
    if value is not None and value not in JSON_DECODERS:
        raise ConfigError(
            path,
            f"unknown decoder {value!r}",
            "use auto (streamdq's single-pass JVM decoder when its jar is there, else Spark's "
            "built-ins), jvm (that decoder or an error) or spark (built-ins only)",
        )
    return value


def _mapping_check(path: str, value: Any) -> dict[str, Any] | None:
    if value is not None and not isinstance(value, Mapping):
        raise ConfigError(path, f"must be a mapping, got {type(value).__name__}", None)
    return None if value is None else dict(value)


def _path_check(path: str, value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise ConfigError(path, "is required", "set the directory to watch, e.g. path: /data/in")
    if "\x00" in value:
        raise ConfigError(path, f"{value!r} contains a NUL character", "correct the path")
    local = _local_path(value)
    if local is not None and not any(ch in str(local) for ch in "*?[") and not local.is_dir():
        raise ConfigError(
            path,
            f"directory {value} does not exist",
            "create it (Spark watches a directory for new files) or correct the path",
        )
    return value


def _format_check(kind: str) -> Check:
    if kind in PAYLOAD_FORMATS:
        choices = PAYLOAD_FORMATS[kind]

        def payload(path: str, value: Any) -> str:
            if value is not None and value not in choices:
                raise ConfigError(path, f"unknown value {value!r}", f"use one of {', '.join(choices)}")
            return str(value or "json")

        return custom(payload, " | ".join(choices))
    fixed = FIXED_FORMATS[kind]

    def fixed_format(path: str, value: Any) -> str:
        if value is not None and value != fixed:
            raise ConfigError(path, f"a {kind} source has a fixed format", f"remove {path}")
        return fixed

    return custom(fixed_format, fixed)


def _as_given(path: str, value: Any) -> Any:
    """Checked across keys after the table (the schema against ``required``, ``format``)."""
    return value


def _format_key(kind: str) -> Key:
    fixed = FIXED_FORMATS.get(kind)
    return Key(
        "format",
        _format_check(kind),
        default=fixed or "json",
        doc="the payload's format" if fixed is None else "fixed: only this value is accepted",
    )


_SCHEMA = Key(
    "schema", custom(_as_given, "Spark DDL string"), doc="the data's schema (required for json, csv, parquet)"
)
_SCHEMA_FILE = Key(
    "schema_file", custom(_as_given, "path"), doc="a file holding the schema (DDL or Spark JSON)"
)
_REQUIRED = Key(
    "required", custom(_required_check, "list of field names"), doc="fields a good record must have"
)
_UTF8 = Key(
    "invalid_utf8",
    custom(_utf8_check, "quarantine | flag"),
    default="quarantine",
    doc="a payload that is not UTF-8: bad, or kept and counted",
)
_DECODER = Key(
    "decoder",
    custom(_decoder_check, " | ".join(JSON_DECODERS)),
    default="auto",
    doc="the JSON decoder (auto: the JVM one when its jar is there)",
)
_SEP = Key("sep", custom(_string_check, "string"), default=",", doc="the csv separator")
_HEADER = Key(
    "header",
    custom(_header_check, "true | false"),
    default=False,
    doc="csv: bind columns by the header's names",
)
_PATH = Key("path", custom(_path_check, "directory"), shown="required", doc="the directory to watch")
_MAX_FILES = Key(
    "max_files_per_trigger",
    custom(_positive_int_check, "integer >= 1"),
    doc="at most this many new files per microbatch",
)
_OPTIONS = Key("options", custom(_mapping_check, "mapping"), doc="passed to Spark's reader")


def _source_table(kind: str, keys: tuple[Key, ...]) -> Table:
    return Table(
        f"source {kind}",
        keys,
        what=f"a {kind} source",
        known_label="allowed keys",
        extra=("type",),
    )


SOURCE_TABLES: dict[str, Table] = {
    "kafka": _source_table(
        "kafka",
        (*KAFKA_KEYS, _format_key("kafka"), _SCHEMA, _SCHEMA_FILE, _REQUIRED, _SEP, _HEADER, _UTF8, _DECODER),
    ),
    "files": _source_table(
        "files",
        (
            _PATH,
            _format_key("files"),
            _SCHEMA,
            _SCHEMA_FILE,
            _REQUIRED,
            _MAX_FILES,
            _HEADER,
            _SEP,
            Key("null_value", custom(_string_check, "string"), doc="csv: the null marker, e.g. NA"),
            Key(
                "order",
                custom(_order_check, "mtime | name"),
                default="mtime",
                doc="mtime: Spark's file source; name: a local directory's files in name order",
            ),
            _OPTIONS,
            _UTF8,
            _DECODER,
        ),
    ),
    "clf": _source_table(
        "clf",
        (
            _PATH,
            _format_key("clf"),
            Key(
                "required",
                custom(_required_check, "list of CLF columns"),
                doc="CLF columns a good line must have",
            ),
            _MAX_FILES,
            _OPTIONS,
            _UTF8,
        ),
    ),
    "generator": _source_table(
        "generator",
        (
            Key(
                "rows_per_second",
                custom(_positive_number_check, "number > 0"),
                doc="the stream's rate (the generator's own default when unset)",
            ),
            Key("seed", custom(_seed_check, "integer"), doc="the random seed"),
            Key("start", custom(_start_check, "ISO-8601 time"), doc="the first event time"),
            Key(
                "incidents",
                custom(_incidents_check, "list of incidents | {every, duration, kinds, count, first_at}"),
                default=(),
                shown="none",
                doc="incidents to inject: a list, or a rolling schedule",
            ),
            *(
                Key(name, custom(_positive_int_check, "integer >= 1"), doc=doc)
                for name, doc in (
                    ("rows_per_batch", "rows per microbatch"),
                    ("max_rows", "stop after this many rows"),
                    ("max_records_per_trigger", "at most this many rows per microbatch"),
                    ("num_partitions", "read tasks per microbatch"),
                )
            ),
            _format_key("generator"),
            Key(
                "schema",
                custom(_as_given, "Spark DDL string"),
                shown="the generator's",
                doc="the payload's schema",
            ),
            Key(
                "required",
                custom(_required_check, "list of field names"),
                shown="the generator's",
                doc="fields a good record must have",
            ),
            _DECODER,
        ),
    ),
}
"""Each source type's keys as a ``config_schema`` table (``type`` picks the table)."""
ALLOWED_KEYS: dict[str, set[str]] = {kind: {"type", *t.names()} for kind, t in SOURCE_TABLES.items()}


def _local_path(path: str) -> Path | None:
    """The local filesystem path, or None for a URI with another scheme (s3a://, hdfs://, ...)."""
    if path.startswith("file://"):
        return Path(path[len("file://") :])
    if "://" in path:
        return None
    return Path(path)


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


def _check_schema(
    spec: Mapping[str, Any], where: str, needed: bool, text: str | None = None
) -> list[str] | None:
    """The schema's field names when it can be parsed now, else None (``text``: the schema's
    text read already, else read here)."""
    text = text if text is not None else schema_text(spec, where)
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
    """Every ``required`` field is in the schema (its shape is the table's check)."""
    req = spec.get("required")
    if not isinstance(req, list | tuple) or names is None:
        return
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


def _check_name_order(spec: Mapping[str, Any], where: str, fmt: str) -> None:
    """``order: name`` against the other keys of a files source (each key's own shape is its
    table row's check)."""
    if spec.get("order") != "name":
        return
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


@dataclass(frozen=True)
class SourceSpec:
    """The run config's ``source:`` section, parsed once (``parse_source_spec``).

    ``type`` picks the reader; ``options`` is the mapping as given (paths resolved by the run
    config, read-only) that the file readers take; ``values`` every key of the type's table,
    checked, defaults filled in; ``format`` the payload format; ``schema_ddl`` the data schema's
    text (``schema``, or ``schema_file``'s contents; None for text, raw and clf payloads);
    ``schema`` the decoded frame's declared columns (data then metadata; None when only the data
    knows them); ``kafka`` the parsed ``KafkaSpec`` of a kafka source; ``incidents`` a
    generator's incidents. ``read_source`` takes it and validates nothing again.

    >>> spec = parse_source_spec({"type": "generator", "rows_per_second": 5, "seed": 1})
    >>> spec.type, spec.format, spec.values["rows_per_second"], spec.schema is not None
    ('generator', 'json', 5, True)
    """

    type: str
    options: Mapping[str, Any]
    values: Mapping[str, Any]
    format: str
    schema_ddl: str | None = None
    schema: StructType | None = None
    kafka: KafkaSpec | None = None
    incidents: tuple[Incident, ...] = ()

    def get(self, key: str, default: Any = None) -> Any:
        """A key as given (``options``), for readers written against the mapping."""
        return self.options.get(key, default)


def _check_type(spec: Any, where: str) -> str:
    if not isinstance(spec, Mapping):
        raise ConfigError(
            where, f"must be a mapping, got {type(spec).__name__}", "write source: {type: kafka, ...}"
        )
    kind = spec.get("type")
    if kind not in SOURCE_TYPES:
        raise ConfigError(
            f"{where}.type", f"unknown source type {kind!r}", f"use one of {', '.join(SOURCE_TYPES)}"
        )
    return str(kind)


def _across_keys(
    spec: Mapping[str, Any], kind: str, values: dict[str, Any], where: str, errs: ErrorCollector
) -> tuple[KafkaSpec | None, str | None]:
    """The checks across keys, after each key passed its own: a kafka source's ``KafkaSpec``,
    the path of a file source, the schema (its text returned) against ``format`` and
    ``required``, ``order: name``."""
    fmt = values["format"]
    kafka: KafkaSpec | None = None
    if kind == "kafka":
        for error in KafkaSpec.missing(values, where):
            if error.key.rsplit(".", 1)[-1] not in spec:  # a key given but wrong is its check's
                errs.add(error)
        kafka_paths = {f"{where}.{key.name}" for key in KAFKA_KEYS}
        if not any(e.key in kafka_paths for e in errs.errors):
            kafka = errs.get(KafkaSpec.from_parsed, values, where, default=None)
    if kind in ("files", "clf") and "path" not in spec:
        errs.add(
            ConfigError(f"{where}.path", "is required", "set the directory to watch, e.g. path: /data/in")
        )
    if kind == "files":
        with errs.catch():
            _check_name_order(spec, where, fmt)
    if kind == "clf" or fmt == "clf":
        text: str | None = None
        names: list[str] | None = list(CLF_COLUMNS)
    elif kind == "generator":
        text = str(spec.get("schema") or GENERATOR_SCHEMA_DDL)
        names = errs.get(
            _check_schema, {"schema": spec.get("schema", GENERATOR_SCHEMA_DDL)}, where, True, default=None
        )
    else:
        needed = fmt in ("json", "csv") if kind == "kafka" else fmt != "text"
        before = len(errs)
        text = errs.get(schema_text, spec, where, default=None)
        names = None
        if len(errs) == before:  # a schema that cannot be read is one mistake, said once
            names = errs.get(_check_schema, spec, where, needed, text, default=None)
        if fmt in ("raw", "text"):
            text = None
    with errs.catch():
        _check_required(spec, where, names)
    return kafka, text


def parse_source_spec(spec: Any, where: str = "source") -> SourceSpec:
    """``spec`` (the run config's ``source`` mapping) checked by its type's table
    (``SOURCE_TABLES``) and across keys, into a frozen ``SourceSpec``. Every mistake is raised
    at once (one ``ConfigErrors``), each ``ConfigError(key, problem, fix)`` naming
    ``<where>.<key>``. It does not touch the network; a kafka source's ``KafkaSpec`` is parsed
    here, once."""
    kind = _check_type(spec, where)
    errs = ErrorCollector()
    values = SOURCE_TABLES[kind].parse(spec, where, errs)
    if any(e.key == f"{where}.format" for e in errs.errors):
        errs.raise_if_any()  # the schema checks depend on the format
    kafka, text = _across_keys(spec, kind, values, where, errs)
    errs.raise_if_any()
    return SourceSpec(
        type=kind,
        options=MappingProxyType(dict(spec)),
        values=MappingProxyType(values),
        format=values["format"],
        schema_ddl=text,
        schema=declared_schema(spec, where),
        kafka=kafka,
        incidents=tuple(values.get("incidents") or ()),
    )


def validate_source_spec(spec: Any, where: str = "source") -> None:
    """Raise ConfigError (key path, problem, fix) if ``spec`` is not a valid source spec
    (``parse_source_spec``, result dropped). Several mistakes are raised together as one
    ``ConfigErrors`` (a ConfigError)."""
    parse_source_spec(spec, where)
