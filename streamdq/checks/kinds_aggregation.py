"""The constraint kind ``aggregation``: an aggregation function (``streamdq.aggregations``) in a check file.

::

    - aggregation: {function: discreteValuesHistogram, column: status}
    - aggregation: {function: numericHistogram, column: bytes, params: {bins: 20}}
    - aggregation: {function: "mypkg.aggs:LongValues", column: path, params: {limit: 40},
                    assertion: "< 100", scope: window}

``function`` is a registered name (the built-ins, entry points of group
``streamdq.aggregations``) or ``module:Class``; it is resolved and checked against the contract
when the file loads, so a missing module, a name that is not a class, or a class that does not
implement the contract is a ``ConfigError`` naming the file and
``checks[i].constraints[j].aggregation.function``; params the class rejects name
``...aggregation.params``. The analyzer is ``AggregationAnalyzer``: its state joins the fused
pass (or the small-batch Arrow job) and is stored in Delta with the other states.

Without an assertion the aggregation is *collected*: its metric is computed, stored and served
(``streamdq query``, the service's /aggregations endpoints) and the constraint passes unless the
metric failed for a reason other than empty input. With an assertion (numeric metrics) it is
judged like any constraint.

>>> from streamdq.checks.spec import constraint_from_dict
>>> c = constraint_from_dict({"aggregation": {"function": "median", "column": "bytes"}}, file="checks.yaml")
>>> c.describe(), c.analyzer.metric_name
("aggregation(function='median', column='bytes')", 'median')
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from streamdq.analyzers.aggregation_registry import AggregationLoadError, resolve
from streamdq.analyzers.metric import Metric
from streamdq.analyzers.user_aggregation import AggregationAnalyzer
from streamdq.checks.assertion import Assertion
from streamdq.checks.vocabulary import ConstraintKind, Param, register_constraint_kind
from streamdq.report import FAILURE, SUCCESS

if TYPE_CHECKING:
    from streamdq.checks.constraint import Constraint


@dataclass(frozen=True)
class Collected(Assertion):
    """The default assertion of ``aggregation``: the metric is kept, nothing is judged."""

    def test(self, value: Any) -> bool:
        return True

    def describe(self) -> str:
        return "collected"

    def to_spec(self) -> Any:
        return None


COLLECTED = Collected()


def _validate(params: Mapping[str, Any]) -> tuple[str, str] | None:
    try:
        cls = resolve(params["function"])
    except AggregationLoadError as exc:
        return "function", str(exc)
    problem = cls.validate_params(params.get("params") or {})
    if problem is not None:
        return "params", f"aggregation {params['function']!r}: {problem}"
    return None


def _evaluate(c: Constraint, metric: Metric | None, context: Mapping[str, Any]) -> tuple[str, str | None]:
    if metric is None:
        return FAILURE, f"No metric computed for aggregation {c.params['function']}({c.params['column']})"
    if not metric.ok:
        if metric.empty and (c.where is not None or isinstance(c.assertion, Collected | None)):
            return SUCCESS, None
        return FAILURE, str(metric.failure)
    assertion = c.assertion
    if assertion is None or isinstance(assertion, Collected):
        return SUCCESS, None
    if assertion.test(metric.value):
        return SUCCESS, None
    msg = (
        f"Value: {metric.value!r} does not meet the constraint requirement! (expected {assertion.describe()})"
    )
    return FAILURE, msg + (f" {c.hint}" if c.hint else "")


EXAMPLE = """\
>>> c = constraint_from_dict({"aggregation": {"function": "median", "column": "bytes", "assertion": "< 1000"}})
>>> c.analyzer.to_spec()
{'analyzer': 'Aggregation', 'function': 'median', 'column': 'bytes'}
>>> c.judge(c.analyzer.ok(512.0))
('Success', None)
>>> c.judge(c.analyzer.ok(4096.0))
('Failure', 'Value: 4096.0 does not meet the constraint requirement! (expected < 1000.0)')
>>> collected = constraint_from_dict({"aggregation": {"function": "median", "column": "bytes"}})
>>> collected.describe(), collected.judge(collected.analyzer.ok(4096.0))
("aggregation(function='median', column='bytes')", ('Success', None))
"""
"""The kind's example (``ConstraintKind.example``): asserted, then collected (no assertion)."""


def kinds() -> list[ConstraintKind]:
    return [
        ConstraintKind(
            "aggregation",
            (
                Param("function", "string", doc="a registered aggregation name or 'module:Class'"),
                Param("column", "column"),
                Param("params", "mapping", required=False, doc="the aggregation's parameters"),
            ),
            lambda p, w: AggregationAnalyzer(p["function"], p["column"], p.get("params") or {}, w),
            value=lambda p, m: m.value,
            default_assertion=COLLECTED,
            validate=_validate,
            evaluate=_evaluate,
            doc="an aggregation function on a column (docs/aggregations.md); collected unless asserted",
            example=EXAMPLE,
        )
    ]


def register() -> None:
    """Add the kind to the vocabulary (called once by ``streamdq.checks.kinds``)."""
    for kind in kinds():
        register_constraint_kind(kind)


__all__ = ["COLLECTED", "Collected", "kinds", "register"]
