"""Load-time validation of what ties measures, expressions and the pass policy together.

``validate_judgement(checks, measure_names, pass_value)`` runs after the checks and measures of a
check file (or run config) each validated on their own, and reports every problem at once
(one ``ConfigErrors``), each naming the file and the key:

* an expression's literal ``measures["x"]`` naming no measure of the file, or ``metrics["k"]``
  naming no metric of the plan (``expression_kind.check_expression_refs``);
* two entries of the result document's ``check`` map sharing a name (expression names and
  the descriptions of checks with other constraints key the document and the pass policy);
* the ``pass:`` policy (unknown check names, ``at_least`` out of range: ``PassPolicy.parse``).

It returns the parsed ``PassPolicy``, or None when ``pass:`` is not written (the document's
verdict is then ``always``, the seed's default, and ``verify`` keeps its exit code from the
check levels). Pure Python, no Spark.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from streamdq.analyzers.base import Analyzer
from streamdq.checks.check import Check
from streamdq.checks.expression_kind import check_expression_refs
from streamdq.checks.pass_policy import PassPolicy
from streamdq.checks.result_document import check_names, duplicate_names
from streamdq.errors import ConfigError, ErrorCollector


def validate_judgement(
    checks: Sequence[Check],
    measure_names: Iterable[str],
    pass_value: Any,
    *,
    file: str | None = None,
    checks_path: str = "checks",
    pass_path: str = "pass",
    extra_analyzers: Iterable[Analyzer] = (),
) -> PassPolicy | None:
    """The pass policy (None when not written), after checking the references between measures, checks and policy."""
    errs = ErrorCollector()
    names = list(measure_names)
    for key, problem in check_expression_refs(
        checks, names, extra_analyzers=extra_analyzers, path=checks_path
    ):
        errs.add(ConfigError(key, problem, file=file))
    for name in duplicate_names(checks):
        errs.add(
            ConfigError(
                checks_path,
                f"two checks are named {name!r}: expression names and check descriptions key the "
                "result document and the pass policy, so they must be unique",
                file=file,
            )
        )
    policy = errs.get(
        PassPolicy.parse,
        pass_value,
        names=check_names(checks),
        file=file,
        path=pass_path,
        default=PassPolicy(),
    )
    errs.raise_if_any()
    return None if pass_value is None else policy
