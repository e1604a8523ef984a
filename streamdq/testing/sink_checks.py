"""``check_sink``: the laws of a sink class (connectors/sinks/base.py, DESIGN.md section 3
"Sink"), checked from its ``_unit_test_params(targets)``.

A sink is configured by a spec of the run config (``{type: webhook, url: ...}``) and delivers
``emit(report, alerts)`` somewhere. The class's own ``_unit_test_params(targets)`` yields specs
pointing at ``targets`` (``SinkTargets``: a directory and real servers on loopback that the
caller started, each counting what it received). For every spec:

* **config, table-driven** over the type's schema (``connectors.sinks.config.SCHEMAS``): the
  spec validates and builds an instance of the class; an unknown key, a value of the wrong
  shape for each key, a non-finite number for each numeric key and each required key left out
  give a ``ConfigError`` whose ``key`` is that key's path (``sinks[0].port``);
* **an empty alert list delivers no alert**: ``emit(report, [])`` on a quiet batch never raises
  and no alert reaches any target;
* **idempotent per batch**: emitting the same ``(query_id, batch_id)`` again delivers nothing
  more (not even to stdout/stderr, which the kit captures);
* **alerts do arrive** (so the two laws above are not vacuous): after emitting a failing batch
  with its alerts, the targets count alerts, for sinks whose target the caller can observe
  (``observed`` in the report; a console prints and Prometheus is scraped: the suite names
  them).

A class without its own ``_unit_test_params`` fails (``ContractViolation``): a new sink cannot
skip the laws, and ``uncovered_types()`` names the config types no class's params build. The suite
runs the laws on every sink class found in ``streamdq.connectors.sinks`` with real servers
(tests/laws/test_sink_conformance.py).

>>> from streamdq.connectors.sinks.console import ConsoleSink
>>> uncovered_types([ConsoleSink], SinkTargets(dir=Path(".")))
['email', 'jsonl', 'kafka', 'prometheus', 'webhook']
>>> quiet_report(1).failed_constraints(), len(failing_report(2).failed_constraints())
([], 1)
"""

from __future__ import annotations

import contextlib
import copy
import io
import math
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from streamdq.alerts import Alert, AlertPolicy
from streamdq.connectors.sinks.base import Sink
from streamdq.connectors.sinks.config import SCHEMAS, build_sinks, validate_sink_spec
from streamdq.errors import ConfigError
from streamdq.report import BatchReport
from streamdq.testing.laws import ContractReport, ContractViolation, classes_in, unit_test_params
from streamdq.testing.reports import batch_report

WHERE = "sinks[0]"


@dataclass
class SinkTargets:
    """Where the sinks under test deliver: a fresh directory and servers on loopback.

    ``deliveries()``: items received so far by every target (HTTP requests, mails, Kafka
    records, lines of the files under ``dir``); ``alerts()``: alerts among them."""

    dir: Path
    http_url: str = "http://127.0.0.1:9/"
    smtp_host: str = "127.0.0.1"
    smtp_port: int = 25
    kafka_bootstrap: str = "127.0.0.1:9092"
    kafka_topic: str = "streamdq-kit"
    deliveries: Callable[[], int] = field(default=lambda: 0)
    alerts: Callable[[], int] = field(default=lambda: 0)


@dataclass
class SinkReport(ContractReport):
    """``ContractReport`` plus whether the kit saw alerts arrive at a target."""

    observed: bool = False


class _NotAValue:
    """A value that no spec check accepts (not a string, number, bool, list or mapping)."""

    def __repr__(self) -> str:
        return "<not a value>"


def sink_classes() -> dict[str, type]:
    """Every class in ``streamdq.connectors.sinks`` with ``emit`` and ``close`` (the Sink protocol)."""
    import streamdq.connectors.sinks as package

    return classes_in(
        package,
        lambda cls: (
            cls is not Sink and callable(getattr(cls, "emit", None)) and callable(getattr(cls, "close", None))
        ),
    )


def _params(cls: type, targets: SinkTargets) -> list[dict[str, Any]]:
    return unit_test_params(cls, targets, gives="sink specs pointing at the SinkTargets it is given")


def uncovered_types(classes: Iterable[type], targets: SinkTargets) -> list[str]:
    """The sink types of the run config that no class's ``_unit_test_params`` yields a spec for."""
    covered = {
        spec.get("type")
        for cls in classes
        if "_unit_test_params" in cls.__dict__
        for spec in _params(cls, targets)
    }
    return sorted(set(SCHEMAS) - covered)


def _keys_of(exc: ConfigError) -> list[str]:
    return [e.key for e in exc.errors_list()]


def _rejects(spec: Mapping[str, Any], path: str, what: str, where: str) -> None:
    try:
        validate_sink_spec(dict(spec), WHERE)
    except ConfigError as exc:
        if path not in _keys_of(exc):
            raise ContractViolation(
                f"{where}: {what}: the ConfigError's key is {_keys_of(exc)}, not {path!r} ({exc})"
            ) from None
        return
    raise ContractViolation(f"{where}: {what}: the spec was accepted")


def _accepts_number(check: Callable[[str, Any], Any]) -> bool:
    for value in (1, 1.5):
        try:
            check("probe", value)
        except ConfigError:
            continue
        return True
    return False


def _check_config(spec: dict[str, Any], where: str, report: ContractReport) -> None:
    kind = spec.get("type")
    if kind not in SCHEMAS:
        raise ContractViolation(f"{where}: type {kind!r} is not a sink type of the run config")
    schema = SCHEMAS[kind]
    try:
        validate_sink_spec(copy.deepcopy(spec), WHERE)
    except ConfigError as exc:
        raise ContractViolation(f"{where}: its own spec is rejected: {exc}") from None
    _rejects({**spec, "no_such_key": 1}, f"{WHERE}.no_such_key", "an unknown key", where)
    report.laws += 2
    for key, (required, check) in schema.items():
        _rejects({**spec, key: _NotAValue()}, f"{WHERE}.{key}", f"a bad value for {key}", where)
        report.laws += 1
        if _accepts_number(check):
            for value in (math.nan, math.inf):
                _rejects({**spec, key: value}, f"{WHERE}.{key}", f"{value} for {key}", where)
                report.laws += 1
        if required:
            rest = {k: v for k, v in spec.items() if k != key}
            _rejects(rest, f"{WHERE}.{key}", f"without the required {key}", where)
            report.laws += 1


def quiet_report(batch_id: int, query_id: str = "kit-query") -> BatchReport:
    """A batch whose every constraint passed: no alert."""
    return batch_report(batch_id, query_id)


def failing_report(batch_id: int, query_id: str = "kit-query") -> BatchReport:
    """A batch with a failed constraint (the alert policy raises one violation)."""
    return batch_report(batch_id, query_id, failing=True)


def _settle(sink: Any) -> None:
    flush = getattr(sink, "flush", None)
    if callable(flush):
        flush(20)
    time.sleep(0.05)


def _emit(sink: Any, report: BatchReport, alerts: list[Alert], where: str) -> int:
    """Emit (capturing stdout and stderr), wait for delivery; returns the characters printed."""
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            sink.emit(report, alerts)
            _settle(sink)
    except Exception as exc:
        raise ContractViolation(f"{where}: emit raised {type(exc).__name__}: {exc}") from None
    return len(out.getvalue()) + len(err.getvalue())


def _build(spec: dict[str, Any], targets: SinkTargets) -> Any:
    (sink,) = build_sinks([copy.deepcopy(spec)], dataset="kit", state_dir=str(targets.dir / "state"))
    return sink


def _check_delivery(
    cls: type,
    spec: dict[str, Any],
    targets: SinkTargets,
    where: str,
    report: SinkReport,
    build: Callable[[dict[str, Any]], Any] | None,
) -> None:
    sink: Any = build(copy.deepcopy(spec)) if build is not None else _build(spec, targets)
    try:
        built: type = type(sink)
        if built is not cls:
            raise ContractViolation(f"{where}: the spec builds a {built.__name__}, not a {cls.__name__}")
        quiet = quiet_report(1)
        alerts_before = targets.alerts()
        _emit(sink, quiet, [], where)
        if targets.alerts() != alerts_before:
            raise ContractViolation(
                f"{where}: emit(report, []) delivered {targets.alerts() - alerts_before} alerts"
            )
        report.laws += 1
        delivered = targets.deliveries()
        printed = _emit(sink, quiet.as_replayed(), [], where)
        if targets.deliveries() != delivered or printed:
            raise ContractViolation(f"{where}: emitting batch 1 again delivered it again")
        report.laws += 1
        failing = failing_report(2)
        alerts, _ = AlertPolicy().evaluate(failing, {})
        if not alerts:
            raise ContractViolation("the kit's failing report raised no alert (the alert policy changed?)")
        before = targets.alerts()
        _emit(sink, failing, alerts, where)
        deadline = time.monotonic() + 3  # after flush(): what is still on its way (a consumer poll)
        while targets.alerts() == before and time.monotonic() < deadline:
            time.sleep(0.1)
        report.observed = report.observed or targets.alerts() > before
    finally:
        sink.close()


def check_sink(
    cls: type, targets: SinkTargets, *, build: Callable[[dict[str, Any]], Any] | None = None
) -> SinkReport:
    """Check the sink class ``cls`` against its config and delivery laws (see the module docstring).

    ``build`` makes a sink from a spec for a class the run config does not build (your own sink);
    by default the run config's ``build_sinks`` does, and the config laws run on every spec."""
    specs = _params(cls, targets)
    report = SinkReport(cls.__name__, specs)
    for i, spec in enumerate(specs):
        where = f"{cls.__name__} spec {i} {spec}"
        if build is None or spec.get("type") in SCHEMAS:
            _check_config(spec, where, report)
        _check_delivery(cls, spec, targets, where, report, build)
    return report


__all__ = [
    "SinkReport",
    "SinkTargets",
    "check_sink",
    "failing_report",
    "quiet_report",
    "sink_classes",
    "uncovered_types",
]
