"""``check_constraint_kind``: the laws every registered constraint kind keeps, checked on cases.

Constraints are data (DESIGN.md section 3): a constraint of any kind must survive being written
out and read back, and judging it must never raise. Runs on the driver in pure Python: the
metric a constraint judges is given by the case (``analyzer.ok(value)``), so no Spark. For each
``KindCase`` of a kind:

* **spec round trip**: ``Constraint.create`` accepts the case; ``constraint_to_dict`` -> YAML
  text -> ``constraint_from_dict`` gives an equal constraint with the same stable
  ``constraint_id``, and so do JSON text and the flat form ``{kind: ..., params...}``; a whole
  check file (``dump_checks`` -> ``loads_suite``) gives the constraint back too;
* **evaluation**: judged on the case's metric (plus ``context``) the result's status is the
  case's ``expect``, never an evaluation error (a message starting ``Can't``); without a metric,
  and on a failed metric, it is a ``Failure`` that says why (kinds that judge no metric of their
  own, ``needs_metric=False``, are judged on the context alone).

Kinds are data in the vocabulary, not classes, so their cases live with the suite that runs them
(tests/laws/test_constraint_kind_conformance.py keeps one table keyed by kind name, and fails
when a registered kind has no entry: a new kind cannot skip the laws).

>>> report = check_constraint_kind("has_size", [KindCase({}, metric=10.0, assertion=">= 5")])
>>> report.laws >= 6
True
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

from streamdq.checks.check import Check, Level
from streamdq.checks.constraint import Constraint, constraint_kind
from streamdq.checks.spec import constraint_from_dict, constraint_to_dict, dump_checks, loads_suite
from streamdq.report import FAILURE, SUCCESS
from streamdq.testing.laws import ContractReport, ContractViolation

CHECK = "contract kit"


@dataclass(frozen=True)
class KindCase:
    """One constraint of a kind and the metric value it is judged on.

    ``params``, ``assertion``, ``where``, ``scope``: as ``Constraint.create`` takes them;
    ``metric``: the value of the constraint's analyzer metric (a float, or the dict of a
    distribution metric); ``context``: what the engine would pass when judging (``seq`` and
    ``anomaly_evaluator`` for ``has_no_anomalies``); ``expect``: the status it must judge to."""

    params: Mapping[str, Any]
    metric: Any = None
    assertion: Any = None
    where: str | None = None
    scope: str = "batch"
    context: Mapping[str, Any] = field(default_factory=dict)
    expect: str = SUCCESS


def _same(a: Constraint, b: Constraint, how: str, where: str) -> None:
    if a != b or hash(a) != hash(b):
        raise ContractViolation(f"{where}: read back from {how} the constraint is {b!r}, not {a!r}")
    if a.constraint_id(CHECK) != b.constraint_id(CHECK):
        raise ContractViolation(f"{where}: read back from {how} the constraint id changed")
    if a.describe() != b.describe():
        raise ContractViolation(f"{where}: read back from {how} it describes itself as {b.describe()!r}")


def _check_round_trips(c: Constraint, where: str, report: ContractReport) -> None:
    data = constraint_to_dict(c)
    _same(c, constraint_from_dict(yaml.safe_load(yaml.safe_dump(data))), "YAML", where)
    _same(c, constraint_from_dict(json.loads(json.dumps(data, allow_nan=False))), "JSON", where)
    ((kind, body),) = data.items()
    flat = {"kind": kind, **body} if isinstance(body, Mapping) else None
    if flat is not None and len(flat) > 1:
        _same(c, constraint_from_dict(flat), "the flat form", where)
    suite = loads_suite(dump_checks([Check(Level.ERROR, CHECK, (c,))], dataset="kit"), file="kit.yaml")
    (check,) = suite.checks
    (back,) = check.constraints
    _same(c, back, "a dumped check file", where)
    report.laws += 4


def _judge(c: Constraint, metric: Any, context: Mapping[str, Any], where: str) -> tuple[str, str | None]:
    metrics = {c.analyzer: metric} if metric is not None else {}
    try:
        result = c.evaluate(metrics, check=CHECK, level="Error", context=context)
    except Exception as exc:  # the law: judging never raises
        raise ContractViolation(f"{where}: evaluate raised {type(exc).__name__}: {exc}") from None
    if result.status not in (SUCCESS, FAILURE):
        raise ContractViolation(f"{where}: status {result.status!r} is neither Success nor Failure")
    if result.message and result.message.startswith("Can't"):
        raise ContractViolation(f"{where}: the constraint could not be evaluated: {result.message}")
    return result.status, result.message


def _check_evaluation(c: Constraint, case: KindCase, where: str, report: ContractReport) -> None:
    needs = c.definition.needs_metric
    metric = c.analyzer.ok(case.metric) if needs else None
    status, message = _judge(c, metric, case.context, where)
    if status != case.expect:
        raise ContractViolation(f"{where}: judged {status} ({message}), expected {case.expect}")
    report.laws += 1
    if not needs:
        return
    status, message = _judge(c, None, case.context, f"{where}, no metric")
    if status != FAILURE or not message:
        raise ContractViolation(
            f"{where}: without a metric it judged {status} ({message}), not a Failure saying why"
        )
    failed = c.analyzer.failed("the kit's failure reason")
    status, message = _judge(c, failed, case.context, f"{where}, failed metric")
    if status != FAILURE or "the kit's failure reason" not in (message or ""):
        raise ContractViolation(
            f"{where}: on a failed metric it judged {status} ({message}), not a Failure naming the reason"
        )
    report.laws += 2


def check_constraint_kind(name: str, cases: Sequence[KindCase]) -> ContractReport:
    """Check the registered kind ``name`` on ``cases``; raises ``ContractViolation`` naming the law."""
    try:
        constraint_kind(name)
    except KeyError as exc:
        raise ContractViolation(str(exc.args[0])) from None
    if not cases:
        raise ContractViolation(f"constraint kind {name!r}: no cases to check it with")
    report = ContractReport(name, [dict(case.params) for case in cases])
    for i, case in enumerate(cases):
        where = f"constraint kind {name!r}, case {i} {dict(case.params)}"
        try:
            c = Constraint.create(
                name, case.params, assertion=case.assertion, where=case.where, scope=case.scope
            )
        except Exception as exc:
            raise ContractViolation(f"{where}: Constraint.create rejects the case: {exc}") from None
        try:
            _check_round_trips(c, where, report)
        except ContractViolation:
            raise
        except Exception as exc:
            raise ContractViolation(f"{where}: does not round-trip through its spec: {exc}") from None
        _check_evaluation(c, case, where, report)
    return report


__all__ = ["KindCase", "check_constraint_kind"]
