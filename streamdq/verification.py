"""verify(): run every check on a DataFrame with ONE analysis (Deequ's VerificationSuite).

It sits beside the engine, above the checks it runs, as Deequ's VerificationSuite sits above its
checks: it imports the engine's analysis and the checks, and the checks never import it (the
import layers, docs/architecture.md). ``streamdq.verify``, ``streamdq.checks.verify`` and
``streamdq.checks.verification.verify`` are the same function.

``verify(df, checks)`` collects the analyzers required by all checks (deduplicated across
checks), computes them with ``analyze`` (one fused scan plus one grouped pass per grouping
set; the Spark job count is kept in ``jobs``) and judges every constraint of every check,
whatever its scope: a table is one batch. Empty input is judged like any other (e.g.
``has_size("> 0")`` fails, Completeness of zero rows is a failure). The overall status is
``Error`` if an error-level check failed, else ``Warning`` if a warning-level check failed,
else ``Success``.

``df`` may also be a pandas or Polars DataFrame (converted with ``streamdq.frames.to_spark``).

``has_no_anomalies`` in a batch verify: the table gives one point per metric, judged against the
earlier points that ``history`` returns (``streamdq.detectors.history_evaluator``). Without
history the detector is still warming up: the constraint passes with a ``not enough history``
message, or fails when ``anomalies_need_history=True``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from pyspark.sql import DataFrame

from streamdq.analyzers.base import Analyzer
from streamdq.analyzers.metric import Metric
from streamdq.checks.check import Check
from streamdq.checks.expression import HistoryRef
from streamdq.checks.measure import Measure, MeasureResult
from streamdq.checks.pass_policy import PassPolicy
from streamdq.checks.result_document import build_document
from streamdq.engine.analysis import analyze
from streamdq.engine.plan import DEFAULT_MAX_GROUPS
from streamdq.report import ERROR, SUCCESS, WARNING, CheckResult, ConstraintResult
from streamdq.result_document import MeasureCheckPass


@dataclass(frozen=True)
class VerificationResult:
    """Overall status, per-check and per-constraint results, the metrics and the job count."""

    status: str
    check_results: tuple[CheckResult, ...]
    metrics: dict[Analyzer, Metric] = field(default_factory=dict, compare=False)
    jobs: int = 0
    checks: tuple[Check, ...] = field(default=(), compare=False, repr=False)
    row_level: DataFrame | None = field(default=None, compare=False, repr=False)
    """With ``verify(..., row_level=True)``: the input plus one boolean column per row-level
    constraint (``streamdq.checks.row_level``), lazy; else None."""
    measures: tuple[MeasureResult, ...] = ()
    """The SQL measures' results (scope ``batch``: the whole input), in declaration order."""
    measure_check_pass: MeasureCheckPass | None = None
    """The seed's result document ``{"measure", "check", "pass"}`` (streamdq.result_document)."""

    @property
    def constraint_results(self) -> list[ConstraintResult]:
        return [r for c in self.check_results for r in c.constraint_results]

    def failed_constraints(self) -> list[ConstraintResult]:
        return [r for r in self.constraint_results if r.failed]

    def check_results_as_rows(self) -> list[dict[str, Any]]:
        """One flat row per constraint (Deequ's checkResultsAsDataFrame), JSON-safe."""
        return [
            {
                "check": r.check,
                "check_level": r.level,
                "check_status": c.status,
                "constraint": r.constraint,
                "constraint_id": r.constraint_id,
                "constraint_status": r.status,
                "constraint_message": r.message or "",
                "scope": r.scope,
            }
            for c in self.check_results
            for r in c.constraint_results
        ]

    def metrics_as_rows(self) -> list[dict[str, Any]]:
        """One row per successful scalar metric (Deequ's successMetricsAsDataFrame)."""
        return [
            {"entity": m.entity, "instance": m.instance, "name": m.name, "value": m.scalar}
            for m in self.metrics.values()
            if m.scalar is not None
        ]

    def check_results_as_dataframe(self, spark: Any) -> Any:
        schema = (
            "check string, check_level string, check_status string, constraint string, "
            "constraint_id string, constraint_status string, constraint_message string, scope string"
        )
        return spark.createDataFrame(self.check_results_as_rows(), schema)

    def metrics_as_dataframe(self, spark: Any) -> Any:
        return spark.createDataFrame(
            self.metrics_as_rows(), "entity string, instance string, name string, value double"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "jobs": self.jobs,
            "check_results": [c.to_dict() for c in self.check_results],
            "metrics": [{"analyzer": a.to_spec(), **m.to_dict()} for a, m in self.metrics.items()],
            "measures": [m.to_json() for m in self.measures],
            **({"measure_check_pass": self.measure_check_pass.to_dict()} if self.measure_check_pass else {}),
        }

    def to_json(self, indent: int | None = None) -> str:
        return json.dumps(self.to_dict(), indent=indent, sort_keys=True, allow_nan=False, default=str)

    def render_text(self) -> str:
        """A readable report: one block per check, one line per constraint, then the metrics."""
        lines = [f"Verification: {self.status} ({len(self.check_results)} checks, {self.jobs} Spark jobs)"]
        for c in self.check_results:
            lines.append(f"\n[{c.status}] {c.check} (level {c.level})")
            for r in c.constraint_results:
                mark = "ok  " if not r.failed else "FAIL"
                lines.append(f"  {mark} {r.constraint}  -> {self._judged(r)}")
                if r.message:
                    lines.append(f"       {r.message}")
        if self.measures:
            lines.append("\nMeasures:")
            for mr in self.measures:
                shown = json.dumps(mr.to_json()["value"]) if mr.ok else f"failed: {mr.failure}"
                lines.append(f"  {mr.name}: {shown}")
        doc = self.measure_check_pass
        if doc is not None and (doc.check or doc.measure):
            lines.append("\nCheck -> pass (measure/check/pass):")
            lines.extend(f"  {'ok  ' if ok else 'FAIL'} {name}" for name, ok in doc.check.items())
            lines.append(f"  pass: {str(doc.passed).lower()}")
        lines.append("\nMetrics:")
        width = min(48, max((len(m.instance) for m in self.metrics.values()), default=0))
        for m in self.metrics.values():
            lines.append(f"  {m.name:<20} {m.instance:<{width}}  {_value(m)}")
        return "\n".join(lines)

    def _judged(self, r: ConstraintResult) -> str:
        """The value the assertion judged (e.g. a data type ratio), else the metric."""
        if r.metric is None and r.constraint.startswith("expression("):
            return str(not r.failed).lower()  # an expression judges no metric: its outcome
        if r.metric is not None and r.metric.ok:
            for check in self.checks:
                if check.description != r.check:
                    continue
                for c in check.constraints:
                    if c.constraint_id(check.description) == r.constraint_id:
                        try:
                            value = c.definition.value(c.params, r.metric)
                        except Exception:  # the message already says why
                            break
                        if isinstance(value, int | float) and not isinstance(value, bool):
                            return _value(replace(r.metric, value=float(value)))
                        break
        return _value(r.metric)

    def __str__(self) -> str:
        return self.render_text()


def _value(m: Metric | None) -> str:
    if m is None:
        return "(no metric)"
    if not m.ok:
        return f"failed: {m.failure}"
    v = m.value
    if isinstance(v, float):
        text = repr(v) if not math.isfinite(v) else f"{v:.6g}"
    elif isinstance(v, dict) and isinstance(v.get("values"), dict):
        text = _distribution(v)
    elif isinstance(v, dict):
        text = ", ".join(f"{k}: {_num(x)}" for k, x in v.items())
    else:
        text = str(v)
    if m.approximate and m.error_bound is not None:
        text += f" (approx, ±{m.error_bound:.3g})"
    return text


def _num(x: Any) -> str:
    return f"{x:.6g}" if isinstance(x, float) and math.isfinite(x) else str(x)


def _distribution(v: dict[str, Any], top: int = 4) -> str:
    """``5 bins: DE 0.2, FR 0.2, ...``: the largest non-empty bins of a Histogram/DataType."""
    entries = [(k, e) for k, e in v["values"].items() if e.get("absolute")]
    entries.sort(key=lambda kv: (-kv[1]["absolute"], kv[0]))
    shown = ", ".join(f"{k} {_num(float(e['ratio']))}" for k, e in entries[:top])
    more = ", ..." if len(entries) > top else ""
    return f"{v.get('number_of_bins', len(entries))} bins: {shown}{more}"


def overall_status(results: Iterable[CheckResult]) -> str:
    statuses = {r.status for r in results}
    if ERROR in statuses:
        return ERROR
    if WARNING in statuses:
        return WARNING
    return SUCCESS


def verify(
    df: DataFrame | Any,
    checks: Iterable[Check],
    *,
    max_groups: int = DEFAULT_MAX_GROUPS,
    history: Callable[[Any], Sequence[float | None]] | None = None,
    anomalies_need_history: bool = False,
    row_level: bool = False,
    filtered_row: str = "true",
    measures: Iterable[Measure] = (),
    pass_policy: PassPolicy | None = None,
    expression_history: Mapping[HistoryRef, Any] | None = None,
) -> VerificationResult:
    """Judge ``checks`` on ``df`` with one fused analysis (see module docstring).

    ``history(constraint)`` returns the earlier values (oldest first) of a ``has_no_anomalies``
    constraint's metric; ``anomalies_need_history`` fails such a constraint while its detector
    has too little history instead of passing it with a message.

    ``row_level=True`` adds ``result.row_level``: Deequ's row-level outcomes as Spark columns
    on the input (rows outside a constraint's ``where`` get ``filtered_row``: "true" or "null").

    ``measures`` (``streamdq.checks.measure``): compiled ones join the one analysis, the others
    run as Spark SQL on ``df`` (``FROM data``); ``result.measures`` holds their results.

    ``expression`` constraints see the measures, the metrics and ``expression_history`` (each
    ``HistoryRef`` of their ``previous_values``/``previous`` calls -> stored values, oldest
    first; ``streamdq.engine.expression_history``); ``result.measure_check_pass`` is the
    seed's document, its ``pass`` decided by ``pass_policy`` (None: always).
    """
    from streamdq.frames import to_spark

    df = to_spark(df)
    checks = list(checks)
    from streamdq.engine.measures import MeasureRunner

    measures = list(measures)
    if measures:  # a column the table lacks: a config error before any job
        from streamdq.checks.measure_spec import measure_column_errors
        from streamdq.errors import ConfigErrors

        unknown = measure_column_errors(measures, df.columns)
        if unknown:
            raise ConfigErrors(unknown)
    runner = MeasureRunner(measures, df.schema)
    analyzers = list(dict.fromkeys(a for c in checks for a in c.required_analyzers(None)))
    analyzers = list(dict.fromkeys([*analyzers, *runner.analyzers()]))
    ctx = analyze(df, analyzers, max_groups=max_groups)
    measured: tuple[MeasureResult, ...] = ()
    if runner:
        runner.resolve_names(df)
        by_sql = {r.name: r for r in runner.run_sql(df)}
        failed = {a: str(m.failure) for a, m in ctx.metrics.items() if not m.ok and a not in ctx.states}
        compiled = {r.name: r for r in runner.from_states(ctx.states, scope="batch", failures=failed)}
        measured = tuple(by_sql.get(f.measure.name) or compiled[f.measure.name] for f in runner.forms)
    context: dict[str, Any] | None = None
    if any(k.kind == "has_no_anomalies" for c in checks for k in c.constraints):
        from streamdq.detectors.history_evaluator import HistoryAnomalyEvaluator

        context = {"anomaly_evaluator": HistoryAnomalyEvaluator(history, strict=anomalies_need_history)}
    # expressions (streamdq.checks.expression) read the measures and their prefetched history
    context = {**(context or {}), "measures": {m.name: m for m in measured}, "history": expression_history}
    results = tuple(c.evaluate(ctx.metrics, scope=None, context=context) for c in checks)
    document = build_document(checks, results, measured, pass_policy or PassPolicy())
    rows = None
    if row_level:
        from streamdq.checks.row_level import with_outcomes

        rows = with_outcomes(df, checks, filtered_row=filtered_row)
    return VerificationResult(
        overall_status(results),
        results,
        dict(ctx.metrics),
        ctx.jobs,
        tuple(checks),
        row_level=rows,
        measures=measured,
        measure_check_pass=document,
    )
