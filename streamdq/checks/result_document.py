"""Building the measure/check/pass document of one judgement (``streamdq.result_document``).

``check_names(checks)`` lists the names a document's ``check`` map uses, in order: each
``expression`` constraint by its ``name``; each check holding other constraints by its
``description``. ``check_outcomes(checks, results)`` turns check results (one scope, or a
whole ``verify``) into ``{name: passed}``: an expression passed when its constraint
succeeded; a check's entry passed when all its other constraints judged here succeeded.
Names judged nowhere in ``results`` (another scope) are left out. ``build_document`` adds the
measures (a failed one is ``None``) and the pass policy's verdict. Pure Python, no Spark.

Example::

    >>> from streamdq.checks.check import Check, Level
    >>> from streamdq.checks.pass_policy import PassPolicy
    >>> c = Check(Level.ERROR, "orders").expression("few", "metrics['Size'] < 10")
    >>> result = c.evaluate({}, scope=None)
    >>> build_document([c], [result], (), PassPolicy("all")).to_dict()
    {'measure': {}, 'check': {'few': False}, 'pass': False}
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from streamdq.checks.check import Check
from streamdq.checks.expression_kind import KIND
from streamdq.checks.measure import MeasureResult, json_value
from streamdq.checks.pass_policy import PassPolicy
from streamdq.report import CheckResult
from streamdq.result_document import MeasureCheckPass


def check_names(checks: Iterable[Check]) -> list[str]:
    """The ``check`` map's names for ``checks``, in order (a check's description, then its expressions)."""
    names: list[str] = []
    for check in checks:
        if any(c.kind != KIND for c in check.constraints):
            names.append(check.description)
        names.extend(str(c.params["name"]) for c in check.constraints if c.kind == KIND)
    return list(dict.fromkeys(names))


def duplicate_names(checks: Sequence[Check]) -> list[str]:
    """Expression names that another expression or a check's description also uses (a
    load-time error). Checks sharing a description share one entry (all must pass)."""
    described = {check.description for check in checks if any(c.kind != KIND for c in check.constraints)}
    seen: set[str] = set()
    dups: list[str] = []
    for check in checks:
        for c in check.constraints:
            if c.kind != KIND:
                continue
            name = str(c.params["name"])
            if (name in seen or name in described) and name not in dups:
                dups.append(name)
            seen.add(name)
    return dups


def check_outcomes(checks: Iterable[Check], results: Iterable[CheckResult]) -> dict[str, bool]:
    """``{name: passed}`` for the entries judged in ``results`` (see module docstring)."""
    results = list(results)
    out: dict[str, bool] = {}
    for check in checks:
        ids = {c.constraint_id(check.description): c for c in check.constraints}
        judged = [
            r
            for result in results
            if result.check == check.description
            for r in result.constraint_results
            if r.constraint_id in ids
        ]
        others = [r for r in judged if ids[r.constraint_id].kind != KIND]
        if others:
            out[check.description] = out.get(check.description, True) and all(not r.failed for r in others)
        for r in judged:
            c = ids[r.constraint_id]
            if c.kind == KIND:
                name = str(c.params["name"])
                out[name] = out.get(name, True) and not r.failed
    return out


def build_document(
    checks: Iterable[Check],
    results: Iterable[CheckResult],
    measures: Iterable[MeasureResult],
    policy: PassPolicy,
    *,
    scope: str | None = None,
    window: tuple[str, str] | None = None,
) -> MeasureCheckPass:
    """The document of one judgement (``scope``/``window`` label it; None for ``verify``)."""
    outcomes = check_outcomes(checks, results)
    measure: dict[str, Any] = {m.name: json_value(m.value) if m.ok else None for m in measures}
    return MeasureCheckPass(measure, outcomes, policy.decide(outcomes), scope, window)
