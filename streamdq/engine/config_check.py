"""The whole run config checked before Spark starts, every mistake reported at once.

``check_run_config("run.yaml")`` returns a ``CheckedConfig`` or raises ``ConfigErrors`` (a
``ConfigError``) with one ``file: key: problem; fix: ...`` line per mistake. It starts no
SparkSession and no JVM, touches no network and creates nothing (a probe file in an existing
folder is created and removed to learn that the folder can be written). ``streamdq run`` runs it
before ``get_spark()``; ``streamdq run --check-config run.yaml`` runs only it.

The run config is parsed once (``config.read_run_config``: every section by its table, the
checks compiled, measures and the ``pass:`` policy checked, the source's schema DDL parsed
without Spark); the engine runs from that same parse. What is checked here, beyond it:

* ``event_time`` is a field of the decoded frame (data or metadata) with a timestamp-like type
  (TIMESTAMP, TIMESTAMP_NTZ, DATE);
* every column a check, a detector (``has_no_anomalies``'s metric) or a monitor
  (``auto_validate.columns``, ``quality_score.columns``/``numeric_columns``) reads is in the
  schema (names starting ``_streamdq_`` are the decoder's metadata and always exist);
* every local path the job writes can be written: ``checkpoint``, ``state.path`` (the Delta
  tables, quarantine included), the sinks' outbox folder and ``jsonl`` files. A path under a
  regular file, or under a folder this user cannot write, is an error now. Object-store and HDFS
  URIs (``s3a://``, ``abfss://``, ``gs://``, ``hdfs://``...) are not checked;
* the e-mail sink's ``password_env`` variable is set and its ``ca_file`` can be read; the
  Prometheus sink's port is free (bound and released at once).
"""

from __future__ import annotations

import difflib
import os
import socket
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pyspark.sql.types import DateType, StructType, TimestampNTZType, TimestampType

from streamdq import metadata_columns
from streamdq.connectors.sinks.local_dir import ENV, local_path, local_state_dir
from streamdq.engine.config import RunConfig, read_run_config
from streamdq.errors import ConfigError, ConfigErrors, ErrorCollector

TIME_TYPES = (TimestampType, TimestampNTZType, DateType)
MONITOR_COLUMN_KEYS = {"auto_validate": ("columns",), "quality_score": ("columns", "numeric_columns")}


@dataclass(frozen=True)
class CheckedConfig:
    """A run config that passed every start-up check, with what the checks found."""

    config: RunConfig
    schema: StructType | None
    checks: tuple[Any, ...]
    monitors: tuple[str, ...]

    def summary(self) -> str:
        """``config OK: source kafka (topic orders, 4 fields), event_time ts, 2 checks (5 constraints), ...``"""
        cfg = self.config
        src = cfg.source
        what = {
            "kafka": f"topic {src.get('topic')}",
            "files": f"{src.get('format', 'json')} files in {src.get('path')}",
            "clf": f"access logs in {src.get('path')}",
        }.get(str(src.get("type")), "")
        data = (
            [f for f in self.schema.fields if not metadata_columns.is_metadata(f.name)] if self.schema else []
        )
        fields = _n(len(data), "column") if self.schema is not None else "schema from the data"
        detail = ", ".join(p for p in (what, fields) if p)
        constraints = sum(len(c.constraints) for c in self.checks)
        sinks = ", ".join(str(s.get("name", s.get("type"))) for s in cfg.sinks) or "none"
        parts = [
            f"config OK: source {src.get('type')} ({detail})",
            f"event_time {cfg.event_time}"
            if cfg.event_time
            else "no event_time (batch and total scopes only)",
            f"{_n(len(self.checks), 'check')} ({_n(constraints, 'constraint')})",
        ]
        if self.monitors:
            parts.append(f"monitors {', '.join(self.monitors)}")
        parts.append(f"sinks {sinks}")
        parts.append(f"state {cfg.state.path or 'none (metrics are not stored)'}")
        parts.append(f"checkpoint {cfg.checkpoint}")
        return ", ".join(parts)


def _n(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def check_run_config(
    source: str | os.PathLike[str] | dict[str, Any], *, base_dir: str | None = None
) -> CheckedConfig:
    """Check the whole run config without Spark; raises ConfigErrors listing every mistake."""
    config, errs = read_run_config(source, base_dir=base_dir)
    if config is None:
        errs.raise_if_any()
        raise AssertionError("read_run_config returned no config and no error")  # pragma: no cover
    checked = check_loaded_config(config, errs)
    if errs and config.file is not None:
        _add_lines(errs, config.file)
    errs.raise_if_any()
    return checked


def _add_lines(errs: ErrorCollector, file: str) -> None:
    """Append ``(line N)`` to the problem of each error in ``file`` whose key is found there."""
    from streamdq.checks.spec import with_line

    text = _read(file)
    if text is None:
        return
    out = []
    for e in errs.errors:
        if e.file == file and e.key and "(line " not in e.problem:
            e = with_line(text, e)
        out.append(e)
    errs.errors = out


def check_loaded_config(config: RunConfig, errs: ErrorCollector | None = None) -> CheckedConfig:
    """The checks beyond each section's own parse, on an already parsed config.

    The parse (``read_run_config``) has compiled the checks, measures and ``pass:`` policy,
    the alert policy, the sinks and the source's declared schema; this checks them against each
    other and the machine: columns, timestamp types, writable paths, ports, secrets. Mistakes go
    to ``errs`` (raised at the end when no collector is given). Parts that earlier errors made
    unknowable (the schema of an invalid source) are skipped, not guessed.
    """
    own = errs is None
    errs = errs if errs is not None else ErrorCollector(config.file)
    broken = {_top_key(e) for e in errs.errors} | {e.key for e in errs.errors}
    schema = config.source_schema
    if config.event_time:
        _check_event_time(config.event_time, schema, errs)
    checks = list(config.checks_spec.checks)
    if schema is not None:
        _check_check_columns(checks, config, schema, errs)
        _check_aggregation_types(checks, config, schema, errs)
        _check_monitor_columns(config, schema, errs)
    monitors = tuple(k for k in MONITOR_COLUMN_KEYS if getattr(config, k) is not None)
    _check_paths(config, broken, errs)
    if own:
        errs.raise_if_any()
    return CheckedConfig(config, schema, tuple(checks), monitors)


def _top_key(error: ConfigError) -> str:
    """The top-level key an error is about (``sinks`` for ``sinks[0].port``)."""
    return error.key.split(".")[0].split("[")[0].strip()


def format_errors(error: ConfigError) -> str:
    """The report ``streamdq run`` prints: a head line, then one line per mistake."""
    lines = error.errors_list()
    if len(lines) == 1:
        return f"streamdq: configuration error: {lines[0].line()}"
    body = "\n".join(e.line() for e in lines)
    return f"streamdq: {len(lines)} configuration errors (nothing was started):\n{body}"


# -- schema and columns ---------------------------------------------------------------------


def _missing(name: str, schema: StructType) -> str:
    """The problem text for a column that is not in ``schema``, with the closest name."""
    names = schema.fieldNames()
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    data = metadata_columns.data_columns(names)
    return f"column {name!r} is not in the source schema{hint} (columns: {', '.join(data)})"


def _check_event_time(name: str, schema: StructType | None, errs: ErrorCollector) -> None:
    if schema is None:
        return
    if name not in schema.fieldNames():
        errs.add(
            ConfigError(
                "event_time",
                _missing(name, schema),
                "name a TIMESTAMP column of source.schema, or add it there",
            )
        )
        return
    dtype = schema[name].dataType
    if not isinstance(dtype, TIME_TYPES):
        stamps = [f.name for f in schema.fields if isinstance(f.dataType, TIME_TYPES)]
        fix = (
            f"use one of the timestamp columns: {', '.join(stamps)}"
            if stamps
            else f"declare {name} as TIMESTAMP in source.schema (ISO-8601 strings are parsed to timestamps)"
        )
        errs.add(
            ConfigError(
                "event_time",
                f"column {name!r} is {dtype.simpleString().upper()}, not a timestamp (TIMESTAMP, TIMESTAMP_NTZ, DATE)",
                fix,
            )
        )


def _checks_file(config: RunConfig) -> str | None:
    return config.checks_origin if config.checks_origin != "<inline>" else config.file


def _read(file: str | None) -> str | None:
    if file is None:
        return None
    try:
        return Path(file).read_text(encoding="utf-8")
    except OSError:
        return None


def _check_check_columns(
    checks: Sequence[Any], config: RunConfig, schema: StructType, errs: ErrorCollector
) -> None:
    from streamdq.checks.spec import check_columns, with_line

    file = _checks_file(config)
    text = _read(file)
    names = set(schema.fieldNames())
    for use in check_columns(checks):
        if use.column in names or metadata_columns.is_metadata(use.column):
            continue
        error = ConfigError(
            use.path, _missing(use.column, schema), "fix the column name, or add the column to source.schema"
        )
        if file is not None:
            error = error.with_file(file)
        errs.add(with_line(text, error) if text is not None else error)


def _check_aggregation_types(
    checks: Sequence[Any], config: RunConfig, schema: StructType, errs: ErrorCollector
) -> None:
    """An ``aggregation`` constraint on a column whose type its class does not take (``input_type``)."""
    from streamdq.analyzers.user_aggregation import AggregationAnalyzer, type_problem
    from streamdq.checks.spec import with_line

    file = _checks_file(config)
    text = _read(file)
    for i, check in enumerate(checks):
        for j, c in enumerate(check.constraints):
            a = c.analyzer
            if not isinstance(a, AggregationAnalyzer) or a.column not in schema.fieldNames():
                continue
            problem = type_problem(a.aggregation(), a.column, schema[a.column].dataType)
            if problem is not None:
                path = f"checks[{i}].constraints[{j}].aggregation.column"
                error = ConfigError(
                    path, problem, "aggregate a column of that type, or another function", file
                )
                errs.add(with_line(text, error, file) if text is not None else error)


def _check_monitor_columns(config: RunConfig, schema: StructType, errs: ErrorCollector) -> None:
    names = set(schema.fieldNames())
    for key, subkeys in MONITOR_COLUMN_KEYS.items():
        raw = getattr(config, key)
        if not isinstance(raw, dict):
            continue
        for sub in subkeys:
            value = raw.get(sub)
            columns = list(value) if isinstance(value, list | dict) else []
            for i, column in enumerate(columns):
                if not isinstance(column, str) or column in names or metadata_columns.is_metadata(column):
                    continue
                path = f"{key}.{sub}[{i}]" if isinstance(value, list) else f"{key}.{sub}.{column}"
                errs.add(
                    ConfigError(
                        path,
                        _missing(column, schema),
                        f"fix the column name, or remove it from {key}.{sub}",
                    )
                )


# -- paths ----------------------------------------------------------------------------------


def writable_dir_problem(path: str, *, target: str | None = None) -> str | None:
    """Why ``path`` cannot be (created and) written as a folder, or None when it can.

    Nothing is created: the nearest existing ancestor is probed with a temporary file, which
    is removed at once. Object-store URIs are not checked (None). ``target`` names the file
    that is to be created in the folder, for the message.
    """
    text = local_path(path)
    if text is None:
        return None
    if "\x00" in text:
        return f"{text!r} contains a NUL character"
    local = Path(os.path.abspath(text))
    probe = local
    while not probe.exists():
        if probe.is_symlink():
            return f"{probe} is a broken symbolic link"
        probe = probe.parent
    wanted = target or str(local)
    if not probe.is_dir():
        if probe == local and target is None:
            return f"{local} is a file, not a folder"
        return f"{probe} is a file, so {wanted} cannot be created under it"
    try:
        fd, name = tempfile.mkstemp(prefix=".streamdq-probe-", dir=probe)
    except OSError as exc:
        where = "it" if probe == local and target is None else f"the existing folder {probe}"
        return f"{wanted} cannot be written: {where} is not writable ({exc.strerror})"
    os.close(fd)
    os.unlink(name)
    return None


def writable_file_problem(path: str) -> str | None:
    """Why ``path`` cannot be appended to as a file (its folder is checked too), or None."""
    text = local_path(path)
    if text is None:
        return None
    if "\x00" in text:
        return f"{text!r} contains a NUL character"
    local = Path(os.path.abspath(text))
    if local.is_dir():
        return f"{local} is a folder, not a file"
    if local.exists():
        try:
            with open(local, "ab"):
                pass
        except OSError as exc:
            return f"{local} cannot be appended to ({exc.strerror})"
        return None
    return writable_dir_problem(str(local.parent), target=str(local))


def _check_paths(config: RunConfig, broken: set[str], errs: ErrorCollector) -> None:
    wanted: list[tuple[str, str, str]] = []
    if config.checkpoint:
        wanted.append(("checkpoint", config.checkpoint, "point checkpoint at a folder this job can write"))
    if config.state.path and "state.path" not in broken:
        wanted.append(("state.path", config.state.path, "point state.path at a folder this job can write"))
    if config.checkpoint:
        # the sinks' own files (the Kafka alert outbox) live in a driver-local folder (local_dir.py)
        try:
            outbox = local_state_dir(config.state.path, config.checkpoint, config.dataset)
        except ValueError as exc:
            errs.add(ConfigError(f"${ENV}", str(exc), f"set {ENV} to a local folder"))
        else:
            wanted.append(
                (
                    f"${ENV}" if os.environ.get(ENV) else "checkpoint",
                    outbox,
                    f"the sinks' outbox lives in {outbox}: set {ENV} to a writable local folder",
                )
            )
    failed: list[Path] = []
    for key, path, fix in wanted:
        here = Path(os.path.abspath(local_path(path) or "/"))
        if any(here == f or f in here.parents for f in failed):
            continue  # the folder above it is already reported
        problem = writable_dir_problem(path)
        if problem is not None:
            failed.append(here)
            errs.add(ConfigError(key, problem, fix))
    if "sinks" in broken:
        return
    for i, sink in enumerate(config.sinks):
        if sink.get("type") == "jsonl" and isinstance(sink.get("path"), str):
            problem = writable_file_problem(sink["path"])
            if problem is not None:
                errs.add(
                    ConfigError(f"sinks[{i}].path", problem, "point it at a file this job can append to")
                )
        if sink.get("type") == "email":
            _check_email_secrets(sink, f"sinks[{i}]", errs)
        if sink.get("type") == "prometheus":
            _check_port_free(sink, f"sinks[{i}]", errs)


def _check_port_free(sink: dict[str, Any], where: str, errs: ErrorCollector) -> None:
    """The Prometheus sink's port can be listened on now (bound and released at once; 0 = any)."""
    host, port = sink.get("host", "127.0.0.1"), sink.get("port", 9108)
    if not isinstance(port, int) or isinstance(port, bool) or port == 0 or not isinstance(host, str):
        return
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except OSError as exc:
        errs.add(
            ConfigError(f"{where}.host", f"cannot resolve {host!r}: {exc}", "use an address such as 0.0.0.0")
        )
        return
    family, kind, proto, _name, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            errs.add(
                ConfigError(
                    f"{where}.port",
                    f"cannot listen on {host}:{port}: {exc.strerror}",
                    "choose a free port (0 = any free port), or stop the process that holds it",
                )
            )


def _check_email_secrets(sink: dict[str, Any], where: str, errs: ErrorCollector) -> None:
    """The e-mail sink's password variable is set and its CA file can be read (else no alert is sent)."""
    env = sink.get("password_env")
    if isinstance(env, str) and env and os.environ.get(env) is None:
        errs.add(
            ConfigError(
                f"{where}.password_env",
                f"the environment variable {env} is not set, so no e-mail could log in",
                f"export {env}=... before streamdq run",
            )
        )
    ca_file = sink.get("ca_file")
    if isinstance(ca_file, str) and ca_file:
        try:
            with open(ca_file, "rb"):
                pass
        except OSError as exc:
            errs.add(
                ConfigError(f"{where}.ca_file", f"cannot read {ca_file}: {exc.strerror}", "fix the path")
            )


__all__ = [
    "CheckedConfig",
    "ConfigErrors",
    "check_loaded_config",
    "check_run_config",
    "format_errors",
    "writable_dir_problem",
    "writable_file_problem",
]
