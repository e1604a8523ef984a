"""The ``expression`` constraint kind: a named CEL expression over measures, metrics and history.

In a check file::

    checks:
      - description: orders
        constraints:
          - expression: {name: all order is unique,
                         expression: 'measures["multiple values"]["c"] == measures["multiple values"]["cd"]'}

(``- {kind: expression, name: ..., expression: ...}`` is the same constraint). The kind
judges no analyzer metric of its own (``needs_metric=False``: it adds nothing to the plan and
its result carries no metric); ``Check.evaluate`` hands its evaluator the metrics of the
scope being judged, the caller adds ``context["measures"]`` (name -> ``MeasureResult``;
``context["declared_measures"]``: every declared name, so one missing at this scope says why)
and ``context["history"]`` (``HistoryRef`` -> values, oldest first, read before judging:
``expression_history_refs``). Load time: ``compile_expression`` (syntax, sandbox, limits)
through the kind's ``validate``; ``check_expression_refs`` then checks the literal
``measures["..."]`` and ``metrics["..."]`` keys against the suite's measures and metrics.

Runtime: ``Success`` when the expression is true; ``Failure`` with the reason when it is
false, a key is missing, a measure or metric it names failed, a type error, or the result is
not a boolean. It never raises.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from streamdq.analyzers.base import Analyzer
from streamdq.analyzers.metric import Metric
from streamdq.checks.expression import (
    ExpressionError,
    HistoryRef,
    compile_expression,
    evaluate_expression,
)
from streamdq.checks.vocabulary import ConstraintKind, Param, did_you_mean, register_constraint_kind
from streamdq.errors import ConfigError
from streamdq.report import FAILURE, SUCCESS

KIND = "expression"

# analyzer spec fields already shown as the metric's instance (or naming it)
_INSTANCE_FIELDS = frozenset(
    {"analyzer", "column", "columns", "first_column", "second_column", "numerator", "denominator", "name"}
)


def metric_key(analyzer: Analyzer) -> str:
    """The key of ``analyzer``'s metric in an expression's ``metrics`` map: the console's label.

    ``Size``, ``Completeness(email)``, ``Mean(amount where amount > 0)``,
    ``ApproxQuantile(amount, quantile=0.5)`` (other parameters as ``key=value`` sorted by key,
    non-strings as JSON), ``Compliance(amount is non-negative)`` (its name is the instance).
    """
    spec = analyzer.to_spec()
    instance = analyzer.instance
    inner = "" if instance in ("*", "") else instance
    params = ",".join(
        f"{k}={v if isinstance(v, str) else json.dumps(v, sort_keys=True, separators=(',', ':'))}"
        for k, v in sorted(spec.items())
        if k not in _INSTANCE_FIELDS and k != "where"
    )
    if params:
        inner = f"{inner}, {params}" if inner else params
    where = spec.get("where")
    if isinstance(where, str) and where.strip():
        inner = f"{inner} where {where}" if inner else f"where {where}"
    return f"{analyzer.NAME}({inner})" if inner else analyzer.NAME


def _validate(params: Mapping[str, Any]) -> tuple[str, str] | None:
    try:
        compile_expression(params["expression"])
    except ExpressionError as exc:
        return "expression", f"expression {params['name']!r}: {exc}"
    return None


def _placeholder(params: Mapping[str, Any], where: str | None) -> Analyzer:
    """The kind judges no analyzer (``needs_metric=False``); Size stands in where one is asked for
    (so ``metrics["Size"]`` is always in the plan of a check with an expression)."""
    from streamdq.checks.kinds import make

    if where is not None:
        raise ConfigError(
            "where", "an expression takes no where", "filter inside a measure's SQL or a metric's where"
        )

    return make("Size")


def _evaluate(constraint: Any, metric: Metric | None, context: Mapping[str, Any]) -> tuple[str, str | None]:
    compiled = compile_expression(constraint.params["expression"])
    failed: dict[str, str] = {}
    measures: dict[str, Any] = {}
    for name, result in (context.get("measures") or {}).items():
        if getattr(result, "failure", None) is not None:
            failed[name] = f"measure failed: {result.failure}"
        else:
            measures[name] = getattr(result, "value", result)
    for name in context.get("declared_measures") or ():
        if name not in measures and name not in failed:  # declared, but not computed at this scope
            failed[name] = (
                f"the measure has no value at {constraint.scope} scope (only measures compiled into "
                "analyzers exist per window and in total; `streamdq verify --explain` shows each form)"
            )
    metrics: dict[str, Any] = {}
    for analyzer, m in (context.get("metrics_by_analyzer") or {}).items():
        key = metric_key(analyzer)
        if m.ok:
            metrics[key] = m.value
        else:
            failed.setdefault(key, f"metric failed: {m.failure}")
    passed, reason = evaluate_expression(
        compiled, measures=measures, metrics=metrics, history=context.get("history") or {}, failed=failed
    )
    if passed:
        return SUCCESS, None
    name = constraint.params["name"]
    message = f"{name}: {reason}" if reason else f"{name}: the expression is false"
    if constraint.hint:
        message += f" {constraint.hint}"
    return FAILURE, message


EXAMPLE = """\
>>> c = constraint_from_dict({"expression": {"name": "has rows", "expression": 'metrics["Size"] > 0'}})
>>> c.analyzer.to_spec()
{'analyzer': 'Size'}
>>> c.judge(None, {"metrics_by_analyzer": {c.analyzer: c.analyzer.ok(42.0)}})
('Success', None)
>>> c.judge(None, {"metrics_by_analyzer": {c.analyzer: c.analyzer.ok(0.0)}})
('Failure', 'has rows: the expression is false')
>>> c.judge(None)
('Failure', "has rows: no such key 'Size'")
"""
"""The kind's example (``ConstraintKind.example``): the expression judged against the metrics given."""


def expression_kind() -> ConstraintKind:
    return ConstraintKind(
        KIND,
        (
            Param("name", "string", doc="the check's name in the result document"),
            Param("expression", "string", doc="a boolean CEL expression"),
        ),
        _placeholder,
        default_assertion=None,
        doc="a named boolean CEL expression over measures, metrics and their history",
        validate=_validate,
        evaluate=_evaluate,
        takes_assertion=False,
        needs_metric=False,
        example=EXAMPLE,
    )


def register() -> None:
    register_constraint_kind(expression_kind())


# -- suite-level helpers ------------------------------------------------------------------


def expressions_of(checks: Iterable[Any]) -> list[tuple[Any, Any]]:
    """``(check, constraint)`` for every expression constraint of ``checks``."""
    return [(check, c) for check in checks for c in check.constraints if c.kind == KIND]


def expression_history_refs(checks: Iterable[Any], scope: str | None = None) -> list[HistoryRef]:
    """The history every expression of ``checks`` (at ``scope``, or all) reads, deduplicated."""
    refs: list[HistoryRef] = []
    for _check, c in expressions_of(checks):
        if scope is None or c.scope == scope:
            refs.extend(compile_expression(c.params["expression"]).history_refs)
    return list(dict.fromkeys(refs))


def check_expression_refs(
    checks: Sequence[Any],
    measure_names: Iterable[str],
    *,
    extra_analyzers: Iterable[Analyzer] = (),
    path: str = "checks",
) -> list[tuple[str, str]]:
    """``(key path, problem)`` for every literal ``measures["x"]`` naming no declared measure
    and every ``metrics["k"]`` naming no metric of the plan (the checks' analyzers and
    ``extra_analyzers``)."""
    measures = list(measure_names)
    if not any(c.kind == KIND for check in checks for c in check.constraints):
        return []
    keys: set[str] = set()
    for a in [*(c.analyzer for check in checks for c in check.constraints), *extra_analyzers]:
        try:
            keys.add(metric_key(a))
        except Exception:  # an analyzer its own validation reports (e.g. a bad parameter)
            continue
    problems: list[tuple[str, str]] = []
    for i, check in enumerate(checks):
        for j, c in enumerate(check.constraints):
            if c.kind != KIND:
                continue
            here = f"{path}[{i}].constraints[{j}].{KIND}"
            name = c.params["name"]
            compiled = compile_expression(c.params["expression"])
            for m in compiled.measure_refs:
                if m not in measures:
                    problems.append(
                        (
                            f"{here}.expression",
                            f"expression {name!r}: measures[{m!r}] is not a measure of this file "
                            f"(measures: {', '.join(measures) or 'none'}){did_you_mean(m, measures)}",
                        )
                    )
            for k in compiled.metric_refs:
                if k not in keys:
                    known = sorted(keys)
                    problems.append(
                        (
                            f"{here}.expression",
                            f"expression {name!r}: metrics[{k!r}] is not a metric of the plan "
                            f"(metrics: {', '.join(known) or 'none'}){did_you_mean(k, known)}",
                        )
                    )
    return problems
