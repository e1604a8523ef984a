"""The built-in constraint vocabulary (Deequ's, in snake_case) registered as constraint kinds.

Each kind maps its parameters to one analyzer (SEMANTICS.md, constraints/checks):
Completeness, Compliance (``are_complete``, ``is_non_negative``, ``is_contained_in``,
``is_less_than``... as SQL predicates with quoted identifiers and literals), Uniqueness,
Histogram (``has_number_of_distinct_values`` counts the NullValue bin), DataType (ratios
excluding Unknown; Numeric = Fractional + Integral), PatternMatch, ApproxQuantile, ...

``has_no_anomalies`` is reserved here as an extension point: its parameters (``metric``: an
analyzer spec such as ``{analyzer: Mean, column: amount}``; ``detector``: a detector spec
with a ``type`` key) are validated, but judging it needs the metric history, so it is judged
by the evaluator the caller passes in the check context (``context["anomaly_evaluator"]``: the
engine passes its ``streamdq.detectors.evaluator.AnomalyEvaluator`` per query, ``verify`` a
``HistoryAnomalyEvaluator``); without one it fails with a message saying so. There is no
process-wide evaluator.

Every kind carries a runnable example (``ConstraintKind.example``, from ``EXAMPLES`` at the end
of this module): the constraint built from its check-file form, the analyzer it asks for, and
its judgement of a hand-made metric; tests/unit/test_doctests_constraint_kinds.py runs them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from streamdq.analyzers.base import Analyzer
from streamdq.analyzers.metric import Metric
from streamdq.analyzers.register import analyzer_class, analyzer_from_spec
from streamdq.checks.assertion import Assertion, Comparison
from streamdq.checks.vocabulary import (
    ConstraintKind,
    Evaluator,
    Param,
    register_constraint_kind,
)
from streamdq.report import FAILURE

DATA_TYPES = ("Null", "Fractional", "Integral", "Boolean", "String", "Numeric")


def sql_ident(name: str) -> str:
    """A Spark SQL identifier taken literally (backticks doubled)."""
    return "`" + name.replace("`", "``") + "`"


def sql_literal(value: Any) -> str:
    """A Spark SQL literal: strings single-quoted with backslash and quote escaped."""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float) and not math.isfinite(value):
        return (
            f"CAST('{'-' if value < 0 else ''}Infinity' AS DOUBLE)"
            if value == value
            else "CAST('NaN' AS DOUBLE)"
        )
    if isinstance(value, int | float):
        return repr(value)
    text = str(value).replace("\\", "\\\\").replace("'", "\\'")
    return f"'{text}'"


def make(name: str, /, **kwargs: Any) -> Analyzer:
    """The registered analyzer ``name`` built with ``kwargs`` (None values left to defaults)."""
    return registered_analyzer(name)(**{k: v for k, v in kwargs.items() if v is not None})


def registered_analyzer(name: str) -> type[Analyzer]:
    """The analyzer class registered as ``name`` (``KeyError`` naming the known ones). The
    built-ins are there: ``analyzer_class`` registers them first (``streamdq.analyzers.register``)."""
    return analyzer_class(name)


def _number_of_bins(params: Mapping[str, Any], metric: Metric) -> float:
    return float(metric.value["number_of_bins"])


def _histogram_value(params: Mapping[str, Any], metric: Metric) -> Any:
    key = params.get("key")
    if key is None:
        return metric.value
    return metric.value["values"][key][params.get("value", "ratio")]


def _histogram_assertion(params: Mapping[str, Any], assertion: Assertion) -> str | None:
    if params.get("key") is None and assertion.serializable:
        return (
            f"{assertion.describe()!r} needs a histogram key: expected key: <value> "
            "(or, in Python code, a callable receiving the whole distribution)"
        )
    return None


def _data_type_ratio(params: Mapping[str, Any], metric: Metric) -> float:
    """Deequ's hasDataType: Null = Unknown ratio over all rows; others exclude Unknown."""
    values: Mapping[str, Any] = metric.value["values"]

    def absolute(key: str) -> int:
        entry = values.get(key)
        return int(entry["absolute"]) if entry else 0

    def ratio_ignoring_unknown(key: str) -> float:
        count = absolute(key)
        if count == 0:
            return 0.0
        total = sum(int(v["absolute"]) for v in values.values()) - absolute("Unknown")
        return count / total

    wanted = params["data_type"]
    if wanted == "Null":
        entry = values.get("Unknown")
        return float(entry["ratio"]) if entry else 0.0
    if wanted == "Numeric":
        return ratio_ignoring_unknown("Fractional") + ratio_ignoring_unknown("Integral")
    return ratio_ignoring_unknown(wanted)


def _compliance(name: str, predicate: str, columns: list[str], where: str | None) -> Analyzer:
    return make("Compliance", name=name, predicate=predicate, columns=tuple(columns), where=where)


COLUMN = Param("column", "column")
COLUMNS = Param("columns", "columns")
COLUMN_A = Param("column_a", "column")
COLUMN_B = Param("column_b", "column")


def _register(kind: ConstraintKind) -> None:
    """Register ``kind`` with its example from ``EXAMPLES``."""
    register_constraint_kind(replace(kind, example=EXAMPLES.get(kind.name, "")))


def _simple(kind: str, analyzer: str) -> None:
    """A kind ``kind(column, assertion)`` judging ``analyzer(column)``; the assertion is required."""
    _register(
        ConstraintKind(
            kind,
            (COLUMN,),
            lambda p, w: make(analyzer, column=p["column"], where=w),
            default_assertion=None,
            doc=f"{analyzer} of a column",
        )
    )


AnalyzerBuilder = Callable[[Mapping[str, Any], str | None], Analyzer]


def _grouping_builder(analyzer: str) -> AnalyzerBuilder:
    def build(p: Mapping[str, Any], where: str | None) -> Analyzer:
        return make(analyzer, columns=tuple(p["columns"]), where=where)

    return build


def _pattern_builder(pattern: str) -> AnalyzerBuilder:
    def build(p: Mapping[str, Any], where: str | None) -> Analyzer:
        return make("PatternMatch", column=p["column"], pattern=pattern, where=where)

    return build


def _comparison_builder(op: str, words: str) -> AnalyzerBuilder:
    def build(p: Mapping[str, Any], where: str | None) -> Analyzer:
        a, b = p["column_a"], p["column_b"]
        return _compliance(f"{a} is {words} {b}", f"{sql_ident(a)} {op} {sql_ident(b)}", [a, b], where)

    return build


def _length_builder(analyzer: str) -> AnalyzerBuilder:
    def build(p: Mapping[str, Any], where: str | None) -> Analyzer:
        return make(analyzer, column=p["column"], null_behavior=p.get("null_behavior"), where=where)

    return build


def register() -> None:
    """Add Deequ's vocabulary to the registry (``streamdq.checks.register.register_builtins``
    calls it once)."""
    reg = _register
    # completeness
    reg(
        ConstraintKind(
            "is_complete",
            (COLUMN,),
            lambda p, w: make("Completeness", column=p["column"], where=w),
            doc="the column has no NULL",
        )
    )
    _simple("has_completeness", "Completeness")
    reg(
        ConstraintKind(
            "are_complete",
            (COLUMNS,),
            lambda p, w: _compliance(
                "Combined completeness of " + ", ".join(p["columns"]),
                " AND ".join(f"{sql_ident(c)} IS NOT NULL" for c in p["columns"]),
                p["columns"],
                w,
            ),
            doc="every listed column is non-NULL (default: in all rows)",
        )
    )
    reg(
        ConstraintKind(
            "are_any_complete",
            (COLUMNS,),
            lambda p, w: _compliance(
                "Any completeness of " + ", ".join(p["columns"]),
                " OR ".join(f"{sql_ident(c)} IS NOT NULL" for c in p["columns"]),
                p["columns"],
                w,
            ),
            doc="at least one listed column is non-NULL (default: in all rows)",
        )
    )
    # uniqueness family
    reg(
        ConstraintKind(
            "is_unique",
            (COLUMN,),
            lambda p, w: make("Uniqueness", columns=(p["column"],), where=w),
            doc="no value occurs twice (rows with NULL are dropped first)",
        )
    )
    reg(
        ConstraintKind(
            "is_primary_key",
            (COLUMNS,),
            lambda p, w: make("Uniqueness", columns=tuple(p["columns"]), where=w),
            doc="the column combination is unique (completeness is not demanded)",
        )
    )
    for kind, analyzer in (
        ("has_uniqueness", "Uniqueness"),
        ("has_distinctness", "Distinctness"),
        ("has_unique_value_ratio", "UniqueValueRatio"),
    ):
        reg(
            ConstraintKind(
                kind,
                (COLUMNS,),
                _grouping_builder(analyzer),
                default_assertion=None,
                doc=f"{analyzer} of the columns",
            )
        )
    max_bins = Param("max_bins", "int", required=False, doc="detailed histogram bins, 1..1000")
    reg(
        ConstraintKind(
            "has_number_of_distinct_values",
            (COLUMN, max_bins),
            lambda p, w: make("Histogram", column=p["column"], max_detail_bins=p.get("max_bins"), where=w),
            value=_number_of_bins,
            default_assertion=None,
            doc="number of histogram bins (NULL counts as a value)",
        )
    )
    reg(
        ConstraintKind(
            "has_histogram_values",
            (
                COLUMN,
                Param("key", "string", required=False, doc="the histogram key (value as a string)"),
                Param("value", "choice", required=False, choices=("ratio", "absolute")),
                max_bins,
                Param("sum_column", "string", required=False, doc="bins sum this column (Deequ's Sum)"),
            ),
            lambda p, w: make(
                "Histogram",
                column=p["column"],
                max_detail_bins=p.get("max_bins"),
                sum_column=p.get("sum_column"),
                where=w,
            ),
            value=_histogram_value,
            validate_assertion=_histogram_assertion,
            default_assertion=None,
            doc="the ratio (or absolute count, or with sum_column the sum) of one histogram key; an absent key fails",
        )
    )
    _simple("has_entropy", "Entropy")
    reg(
        ConstraintKind(
            "has_mutual_information",
            (COLUMN_A, COLUMN_B),
            lambda p, w: make("MutualInformation", columns=(p["column_a"], p["column_b"]), where=w),
            default_assertion=None,
            doc="mutual information of two columns (natural log)",
        )
    )
    reg(
        ConstraintKind(
            "has_approx_quantile",
            (
                COLUMN,
                Param("quantile", "fraction", doc="the quantile, 0..1"),
                Param("relative_error", "number", required=False, doc="Deequ's relativeError, (0, 1]"),
            ),
            lambda p, w: make(
                "ApproxQuantile",
                column=p["column"],
                quantile=p["quantile"],
                relative_error=p.get("relative_error"),
                where=w,
            ),
            default_assertion=None,
            doc="approximate quantile (KLL sketch)",
        )
    )
    _simple("has_approx_count_distinct", "ApproxCountDistinct")
    for kind, analyzer in (
        ("has_min", "Minimum"),
        ("has_max", "Maximum"),
        ("has_mean", "Mean"),
        ("has_sum", "Sum"),
        ("has_standard_deviation", "StandardDeviation"),
    ):
        _simple(kind, analyzer)
    # non-finite numbers (docs/non-finite.md): counted by NonFinite, skipped by the statistics
    reg(
        ConstraintKind(
            "has_no_non_finite",
            (COLUMN,),
            lambda p, w: make("NonFinite", column=p["column"], where=w),
            default_assertion=Comparison("==", 0.0),
            doc="no NaN, +Infinity or -Infinity in the column (the statistics skip them)",
        )
    )
    _simple("has_non_finite_count", "NonFinite")
    null_behavior = Param(
        "null_behavior", "choice", required=False, choices=("ignore", "empty_string", "fail")
    )
    for kind, analyzer in (("has_min_length", "MinLength"), ("has_max_length", "MaxLength")):
        reg(
            ConstraintKind(
                kind,
                (COLUMN, null_behavior),
                _length_builder(analyzer),
                default_assertion=None,
                doc=f"{analyzer} of a string column (null_behavior: ignore, empty_string or fail)",
            )
        )
    reg(
        ConstraintKind(
            "has_size",
            (),
            lambda p, w: make("Size", where=w),
            default_assertion=None,
            doc="number of rows (in scope of where)",
        )
    )
    reg(
        ConstraintKind(
            "has_data_type",
            (COLUMN, Param("data_type", "choice", choices=DATA_TYPES)),
            lambda p, w: make("DataType", column=p["column"], where=w),
            value=_data_type_ratio,
            doc="ratio of values of the type among non-NULL values (Null: among all)",
        )
    )
    # patterns
    reg(
        ConstraintKind(
            "has_pattern",
            (
                COLUMN,
                Param("pattern", "string", doc="a regex searched anywhere, or EMAIL/URL/..."),
                Param("name", "string", required=False),
            ),
            lambda p, w: make("PatternMatch", column=p["column"], pattern=p["pattern"], where=w),
            doc="fraction of values in which the regex is found",
        )
    )
    for kind, pattern in (
        ("contains_email", "EMAIL"),
        ("contains_url", "URL"),
        ("contains_credit_card_number", "CREDITCARD"),
        ("contains_social_security_number", "SOCIAL_SECURITY_NUMBER_US"),
    ):
        reg(
            ConstraintKind(
                kind,
                (COLUMN,),
                _pattern_builder(pattern),
                doc=f"fraction of values matching the built-in {pattern} pattern",
            )
        )
    reg(
        ConstraintKind(
            "has_correlation",
            (COLUMN_A, COLUMN_B),
            lambda p, w: make(
                "Correlation", first_column=p["column_a"], second_column=p["column_b"], where=w
            ),
            default_assertion=None,
            doc="Pearson correlation (NaN for a constant column)",
        )
    )
    # compliance (SQL predicates)
    reg(
        ConstraintKind(
            "satisfies",
            (
                Param("predicate", "string", doc="a Spark SQL predicate"),
                Param("name", "string", doc="a name for the metric"),
                Param("columns", "columns", required=False, doc="the columns the predicate reads"),
            ),
            lambda p, w: _compliance(p["name"], p["predicate"], p.get("columns") or [], w),
            doc="fraction of rows where the predicate is TRUE (NULL fails)",
        )
    )
    reg(
        ConstraintKind(
            "is_non_negative",
            (COLUMN,),
            lambda p, w: _compliance(
                f"{p['column']} is non-negative",
                f"COALESCE(CAST({sql_ident(p['column'])} AS DOUBLE), 0.0) >= 0",
                [p["column"]],
                w,
            ),
            doc="values >= 0 (NULL passes; strings are cast to DOUBLE)",
        )
    )
    reg(
        ConstraintKind(
            "is_positive",
            (COLUMN,),
            lambda p, w: _compliance(
                f"{p['column']} is positive",
                f"COALESCE(CAST({sql_ident(p['column'])} AS DOUBLE), 1.0) > 0",
                [p["column"]],
                w,
            ),
            doc="values > 0 (NULL passes; strings are cast to DOUBLE)",
        )
    )
    reg(
        ConstraintKind(
            "is_contained_in",
            (
                COLUMN,
                Param("values", "values", required=False, doc="allowed values"),
                Param("lower_bound", "number", required=False),
                Param("upper_bound", "number", required=False),
                Param("include_lower", "bool", required=False),
                Param("include_upper", "bool", required=False),
            ),
            _contained_in,
            validate=_validate_contained_in,
            doc="NULL or one of values / NULL or inside [lower, upper]",
        )
    )
    for kind, op, words in (
        ("is_less_than", "<", "less than"),
        ("is_less_than_or_equal_to", "<=", "less than or equal to"),
        ("is_greater_than", ">", "greater than"),
        ("is_greater_than_or_equal_to", ">=", "greater than or equal to"),
    ):
        reg(
            ConstraintKind(
                kind,
                (COLUMN_A, COLUMN_B),
                _comparison_builder(op, words),
                doc=f"column_a {op} column_b (NULL fails)",
            )
        )
    # extension point implemented by streamdq.detectors
    reg(
        ConstraintKind(
            "has_no_anomalies",
            (
                Param("metric", "mapping", doc="an analyzer spec, e.g. {analyzer: Mean, column: amount}"),
                Param("detector", "mapping", doc="a detector spec with a 'type' key"),
            ),
            lambda p, w: analyzer_from_spec(_with_where(p["metric"], w)),
            validate=_validate_anomaly,
            evaluate=_anomaly_evaluator_missing,
            takes_assertion=False,
            doc="the metric's newest point is not anomalous for the detector (judged by streamdq.detectors)",
        )
    )


def _with_where(spec: Mapping[str, Any], where: str | None) -> dict[str, Any]:
    out = dict(spec)
    if where is not None:
        out["where"] = where
    return out


def _contained_in(p: Mapping[str, Any], where: str | None) -> Analyzer:
    column = p["column"]
    c = sql_ident(column)
    if p.get("values") is not None:
        values = p["values"]
        listed = ", ".join(sql_literal(v) for v in values) if values else "''"
        return _compliance(
            f"{column} contained in {','.join(map(str, values))}",
            f"{c} IS NULL OR {c} IN ({listed})",
            [column],
            where,
        )
    lower, upper = p["lower_bound"], p["upper_bound"]
    closed_lo = p.get("include_lower", True) is not False
    closed_hi = p.get("include_upper", True) is not False
    lo_op, hi_op = (">=" if closed_lo else ">"), ("<=" if closed_hi else "<")
    interval = f"{'[' if closed_lo else '('}{lower}, {upper}{']' if closed_hi else ')'}"
    return _compliance(
        f"{column} between {interval}",
        f"{c} IS NULL OR ({c} {lo_op} {sql_literal(lower)} AND {c} {hi_op} {sql_literal(upper)})",
        [column],
        where,
    )


def _validate_contained_in(p: Mapping[str, Any]) -> tuple[str, str] | None:
    has_values = p.get("values") is not None
    has_range = p.get("lower_bound") is not None or p.get("upper_bound") is not None
    if has_values and has_range:
        return "values", "give either values: [...] or lower_bound/upper_bound, not both"
    if not has_values and not has_range:
        return (
            "values",
            "missing: expected values: [...] (allowed values) or lower_bound: and upper_bound: (a range)",
        )
    if has_range:
        if p.get("lower_bound") is None:
            return "lower_bound", "missing: a range needs both lower_bound and upper_bound (numbers)"
        if p.get("upper_bound") is None:
            return "upper_bound", "missing: a range needs both lower_bound and upper_bound (numbers)"
        if p["lower_bound"] > p["upper_bound"]:
            return (
                "lower_bound",
                f"lower bound {p['lower_bound']} is above upper bound {p['upper_bound']}; expected lower_bound <= upper_bound",
            )
    elif p.get("include_lower") is not None or p.get("include_upper") is not None:
        return "include_lower", "include_lower/include_upper apply to a lower_bound/upper_bound range only"
    return None


def _validate_anomaly(p: Mapping[str, Any]) -> tuple[str, str] | None:
    metric = p["metric"]
    if "analyzer" not in metric:
        return "metric.analyzer", "missing: expected an analyzer name such as Mean or Completeness"
    try:
        registered_analyzer(str(metric["analyzer"]))
        analyzer_from_spec(metric)
    except KeyError as exc:
        return "metric.analyzer", str(exc.args[0])
    except (TypeError, ValueError) as exc:
        return "metric", f"not a valid analyzer spec: {exc}"
    if not isinstance(p["detector"].get("type"), str):
        return "detector.type", "missing: expected the detector type, e.g. online_normal"
    # the detector's own spec laws (an unknown type or key, a bad value), at load time rather
    # than as "can't evaluate" on every judgement; the detectors own them (same layer)
    from streamdq.detectors.evaluator import validate_detector_spec

    return validate_detector_spec(p["detector"])


def _anomaly_evaluator_missing(
    constraint: Any, metric: Metric | None, context: Mapping[str, Any]
) -> tuple[str, str | None] | tuple[str, str | None, Any]:
    evaluator: Evaluator | None = context.get("anomaly_evaluator")
    if evaluator is None:
        return FAILURE, (
            "has_no_anomalies needs a detector evaluator in the check context "
            "(context['anomaly_evaluator'], e.g. streamdq.detectors.evaluator.AnomalyEvaluator()); "
            "the streaming engine and verify pass one"
        )
    return evaluator(constraint, metric, context)


# -- examples (ConstraintKind.example; run by tests/unit/test_doctests_constraint_kinds.py) --

EXAMPLES: dict[str, str] = {
    "is_complete": """\
>>> c = constraint_from_dict({"is_complete": {"column": "email"}})
>>> c.analyzer.to_spec()
{'analyzer': 'Completeness', 'column': 'email'}
>>> c.judge(c.analyzer.ok(1.0))
('Success', None)
>>> c.judge(c.analyzer.ok(0.75))
('Failure', 'Value: 0.75 does not meet the constraint requirement! (expected == 1.0)')
""",
    "has_completeness": """\
>>> c = constraint_from_dict({"has_completeness": {"column": "email", "assertion": ">= 0.9"}})
>>> c.analyzer.to_spec()
{'analyzer': 'Completeness', 'column': 'email'}
>>> c.judge(c.analyzer.ok(0.95))
('Success', None)
>>> c.judge(c.analyzer.ok(0.5))
('Failure', 'Value: 0.5 does not meet the constraint requirement! (expected >= 0.9)')
""",
    "are_complete": """\
>>> c = constraint_from_dict({"are_complete": {"columns": ["email", "phone"]}})
>>> c.analyzer.to_spec()["predicate"]
'`email` IS NOT NULL AND `phone` IS NOT NULL'
>>> c.judge(c.analyzer.ok(1.0))
('Success', None)
>>> c.judge(c.analyzer.ok(0.5))
('Failure', 'Value: 0.5 does not meet the constraint requirement! (expected == 1.0)')
""",
    "are_any_complete": """\
>>> c = constraint_from_dict({"are_any_complete": {"columns": ["email", "phone"]}})
>>> c.analyzer.to_spec()["predicate"]
'`email` IS NOT NULL OR `phone` IS NOT NULL'
>>> c.judge(c.analyzer.ok(1.0))
('Success', None)
>>> c.judge(c.analyzer.ok(0.9))
('Failure', 'Value: 0.9 does not meet the constraint requirement! (expected == 1.0)')
""",
    "is_unique": """\
>>> c = constraint_from_dict({"is_unique": {"column": "id"}})
>>> c.analyzer.to_spec()
{'analyzer': 'Uniqueness', 'columns': ['id']}
>>> c.judge(c.analyzer.ok(1.0))
('Success', None)
>>> c.judge(c.analyzer.ok(0.5))
('Failure', 'Value: 0.5 does not meet the constraint requirement! (expected == 1.0)')
""",
    "is_primary_key": """\
>>> c = constraint_from_dict({"is_primary_key": {"columns": ["order_id", "line"]}})
>>> c.analyzer.to_spec()
{'analyzer': 'Uniqueness', 'columns': ['order_id', 'line']}
>>> c.judge(c.analyzer.ok(1.0))
('Success', None)
>>> c.judge(c.analyzer.ok(0.8))
('Failure', 'Value: 0.8 does not meet the constraint requirement! (expected == 1.0)')
""",
    "has_uniqueness": """\
>>> c = constraint_from_dict({"has_uniqueness": {"columns": ["id"], "assertion": ">= 0.9"}})
>>> c.analyzer.to_spec()
{'analyzer': 'Uniqueness', 'columns': ['id']}
>>> c.judge(c.analyzer.ok(0.95))
('Success', None)
>>> c.judge(c.analyzer.ok(0.5))
('Failure', 'Value: 0.5 does not meet the constraint requirement! (expected >= 0.9)')
""",
    "has_distinctness": """\
>>> c = constraint_from_dict({"has_distinctness": {"columns": ["country"], "assertion": "<= 0.1"}})
>>> c.analyzer.to_spec()
{'analyzer': 'Distinctness', 'columns': ['country']}
>>> c.judge(c.analyzer.ok(0.05))
('Success', None)
>>> c.judge(c.analyzer.ok(0.5))
('Failure', 'Value: 0.5 does not meet the constraint requirement! (expected <= 0.1)')
""",
    "has_unique_value_ratio": """\
>>> c = constraint_from_dict({"has_unique_value_ratio": {"columns": ["id"], "assertion": "== 1"}})
>>> c.analyzer.to_spec()
{'analyzer': 'UniqueValueRatio', 'columns': ['id']}
>>> c.judge(c.analyzer.ok(1.0))
('Success', None)
>>> c.judge(c.analyzer.ok(0.25))
('Failure', 'Value: 0.25 does not meet the constraint requirement! (expected == 1.0)')
""",
    "has_number_of_distinct_values": """\
>>> c = constraint_from_dict({"has_number_of_distinct_values": {"column": "status", "assertion": "<= 3"}})
>>> c.analyzer.to_spec()
{'analyzer': 'Histogram', 'column': 'status', 'max_detail_bins': 1000, 'compute_frequencies_as_ratio': True}
>>> c.judge(c.analyzer.ok(Distribution.of({"ok": (3, 0.75), "NullValue": (1, 0.25)}, number_of_bins=2)))
('Success', None)
>>> c.judge(c.analyzer.ok(Distribution.of({"a": (1, 0.25), "b": (1, 0.25), "c": (1, 0.25), "d": (1, 0.25)}, number_of_bins=4)))
('Failure', 'Value: 4.0 does not meet the constraint requirement! (expected <= 3.0)')
""",
    "has_histogram_values": """\
>>> c = constraint_from_dict({"has_histogram_values": {"column": "status", "key": "ok", "assertion": ">= 0.5"}})
>>> c.analyzer.to_spec()
{'analyzer': 'Histogram', 'column': 'status', 'max_detail_bins': 1000, 'compute_frequencies_as_ratio': True}
>>> c.judge(c.analyzer.ok(Distribution.of({"ok": (3, 0.75), "error": (1, 0.25)}, number_of_bins=2)))
('Success', None)
>>> c.judge(c.analyzer.ok(Distribution.of({"error": (4, 1.0)}, number_of_bins=1)))
('Failure', "Can't retrieve the value to assert on: key 'ok' not found")
""",
    "has_entropy": """\
>>> c = constraint_from_dict({"has_entropy": {"column": "status", "assertion": "> 0.5"}})
>>> c.analyzer.to_spec()
{'analyzer': 'Entropy', 'column': 'status'}
>>> c.judge(c.analyzer.ok(0.69))
('Success', None)
>>> c.judge(c.analyzer.ok(0.0))
('Failure', 'Value: 0.0 does not meet the constraint requirement! (expected > 0.5)')
""",
    "has_mutual_information": """\
>>> c = constraint_from_dict({"has_mutual_information": {"column_a": "city", "column_b": "zip", "assertion": "> 0.1"}})
>>> c.analyzer.to_spec()
{'analyzer': 'MutualInformation', 'columns': ['city', 'zip']}
>>> c.judge(c.analyzer.ok(0.7))
('Success', None)
>>> c.judge(c.analyzer.ok(0.0))
('Failure', 'Value: 0.0 does not meet the constraint requirement! (expected > 0.1)')
""",
    "has_approx_quantile": """\
>>> c = constraint_from_dict({"has_approx_quantile": {"column": "latency", "quantile": 0.99, "assertion": "< 500"}})
>>> c.analyzer.to_spec()
{'analyzer': 'ApproxQuantile', 'column': 'latency', 'quantile': 0.99, 'k': 200}
>>> c.judge(c.analyzer.ok(320.0))
('Success', None)
>>> c.judge(c.analyzer.ok(900.0))
('Failure', 'Value: 900.0 does not meet the constraint requirement! (expected < 500.0)')
""",
    "has_approx_count_distinct": """\
>>> c = constraint_from_dict({"has_approx_count_distinct": {"column": "user", "assertion": ">= 100"}})
>>> c.analyzer.to_spec()
{'analyzer': 'ApproxCountDistinct', 'column': 'user'}
>>> c.judge(c.analyzer.ok(1520.0))
('Success', None)
>>> c.judge(c.analyzer.ok(12.0))
('Failure', 'Value: 12.0 does not meet the constraint requirement! (expected >= 100.0)')
""",
    "has_min": """\
>>> c = constraint_from_dict({"has_min": {"column": "amount", "assertion": ">= 0"}})
>>> c.analyzer.to_spec()
{'analyzer': 'Minimum', 'column': 'amount'}
>>> c.judge(c.analyzer.ok(0.5))
('Success', None)
>>> c.judge(c.analyzer.ok(-3.0))
('Failure', 'Value: -3.0 does not meet the constraint requirement! (expected >= 0.0)')
""",
    "has_max": """\
>>> c = constraint_from_dict({"has_max": {"column": "amount", "assertion": "<= 1000"}})
>>> c.analyzer.to_spec()
{'analyzer': 'Maximum', 'column': 'amount'}
>>> c.judge(c.analyzer.ok(999.0))
('Success', None)
>>> c.judge(c.analyzer.ok(1500.0))
('Failure', 'Value: 1500.0 does not meet the constraint requirement! (expected <= 1000.0)')
""",
    "has_mean": """\
>>> c = constraint_from_dict({"has_mean": {"column": "amount", "assertion": {"between": [10, 20]}}})
>>> c.analyzer.to_spec()
{'analyzer': 'Mean', 'column': 'amount'}
>>> c.judge(c.analyzer.ok(12.5))
('Success', None)
>>> c.judge(c.analyzer.ok(7.5))
('Failure', 'Value: 7.5 does not meet the constraint requirement! (expected between 10.0 and 20.0)')
""",
    "has_sum": """\
>>> c = constraint_from_dict({"has_sum": {"column": "amount", "assertion": "> 0"}})
>>> c.analyzer.to_spec()
{'analyzer': 'Sum', 'column': 'amount'}
>>> c.judge(c.analyzer.ok(420.0))
('Success', None)
>>> c.judge(c.analyzer.ok(0.0))
('Failure', 'Value: 0.0 does not meet the constraint requirement! (expected > 0.0)')
""",
    "has_standard_deviation": """\
>>> c = constraint_from_dict({"has_standard_deviation": {"column": "amount", "assertion": "< 5"}})
>>> c.analyzer.to_spec()
{'analyzer': 'StandardDeviation', 'column': 'amount'}
>>> c.judge(c.analyzer.ok(1.5))
('Success', None)
>>> c.judge(c.analyzer.ok(8.0))
('Failure', 'Value: 8.0 does not meet the constraint requirement! (expected < 5.0)')
""",
    "has_no_non_finite": """\
>>> c = constraint_from_dict({"has_no_non_finite": {"column": "amount"}})
>>> c.analyzer.to_spec()
{'analyzer': 'NonFinite', 'column': 'amount'}
>>> c.judge(c.analyzer.ok(0.0))
('Success', None)
>>> c.judge(c.analyzer.ok(2.0))
('Failure', 'Value: 2.0 does not meet the constraint requirement! (expected == 0.0)')
""",
    "has_non_finite_count": """\
>>> c = constraint_from_dict({"has_non_finite_count": {"column": "amount", "assertion": "<= 1"}})
>>> c.analyzer.to_spec()
{'analyzer': 'NonFinite', 'column': 'amount'}
>>> c.judge(c.analyzer.ok(1.0))
('Success', None)
>>> c.judge(c.analyzer.ok(3.0))
('Failure', 'Value: 3.0 does not meet the constraint requirement! (expected <= 1.0)')
""",
    "has_min_length": """\
>>> c = constraint_from_dict({"has_min_length": {"column": "code", "assertion": ">= 2"}})
>>> c.analyzer.to_spec()
{'analyzer': 'MinLength', 'column': 'code', 'null_behavior': 'ignore'}
>>> c.judge(c.analyzer.ok(2.0))
('Success', None)
>>> c.judge(c.analyzer.ok(1.0))
('Failure', 'Value: 1.0 does not meet the constraint requirement! (expected >= 2.0)')
""",
    "has_max_length": """\
>>> c = constraint_from_dict({"has_max_length": {"column": "code", "null_behavior": "empty_string", "assertion": "<= 8"}})
>>> c.analyzer.to_spec()
{'analyzer': 'MaxLength', 'column': 'code', 'null_behavior': 'empty_string'}
>>> c.judge(c.analyzer.ok(8.0))
('Success', None)
>>> c.judge(c.analyzer.ok(12.0))
('Failure', 'Value: 12.0 does not meet the constraint requirement! (expected <= 8.0)')
""",
    "has_size": """\
>>> c = constraint_from_dict({"has_size": {"assertion": "> 0", "where": "country = 'DE'"}})
>>> c.analyzer.to_spec()
{'analyzer': 'Size', 'where': "country = 'DE'"}
>>> c.judge(c.analyzer.ok(42.0))
('Success', None)
>>> c.judge(c.analyzer.ok(0.0))
('Failure', 'Value: 0.0 does not meet the constraint requirement! (expected > 0.0)')
>>> c.judge(c.analyzer.failed("no rows", empty=True))
('Success', None)
""",
    "has_data_type": """\
>>> c = constraint_from_dict({"has_data_type": {"column": "amount", "data_type": "Numeric", "assertion": ">= 0.9"}})
>>> c.analyzer.to_spec()
{'analyzer': 'DataType', 'column': 'amount'}
>>> c.judge(c.analyzer.ok(Distribution.of({"Integral": (7, 0.7), "Fractional": (3, 0.3)}, number_of_bins=2)))
('Success', None)
>>> c.judge(c.analyzer.ok(Distribution.of({"Integral": (4, 0.4), "String": (4, 0.4), "Unknown": (2, 0.2)}, number_of_bins=3)))
('Failure', 'Value: 0.5 does not meet the constraint requirement! (expected >= 0.9)')
""",
    "has_pattern": """\
>>> c = constraint_from_dict({"has_pattern": {"column": "sku", "pattern": "^[A-Z]{3}-[0-9]+$", "assertion": ">= 0.99"}})
>>> c.analyzer.to_spec()
{'analyzer': 'PatternMatch', 'column': 'sku', 'pattern': '^[A-Z]{3}-[0-9]+$'}
>>> c.judge(c.analyzer.ok(1.0))
('Success', None)
>>> c.judge(c.analyzer.ok(0.5))
('Failure', 'Value: 0.5 does not meet the constraint requirement! (expected >= 0.99)')
""",
    "contains_email": """\
>>> c = constraint_from_dict({"contains_email": {"column": "contact"}})
>>> c.analyzer.to_spec()["pattern"]
'EMAIL'
>>> c.judge(c.analyzer.ok(1.0))
('Success', None)
>>> c.judge(c.analyzer.ok(0.75))
('Failure', 'Value: 0.75 does not meet the constraint requirement! (expected == 1.0)')
""",
    "contains_url": """\
>>> c = constraint_from_dict({"contains_url": {"column": "homepage", "assertion": ">= 0.5"}})
>>> c.analyzer.to_spec()["pattern"]
'URL'
>>> c.judge(c.analyzer.ok(0.6))
('Success', None)
>>> c.judge(c.analyzer.ok(0.1))
('Failure', 'Value: 0.1 does not meet the constraint requirement! (expected >= 0.5)')
""",
    "contains_credit_card_number": """\
>>> c = constraint_from_dict({"contains_credit_card_number": {"column": "note", "assertion": "== 0"}})
>>> c.analyzer.to_spec()["pattern"]
'CREDITCARD'
>>> c.judge(c.analyzer.ok(0.0))
('Success', None)
>>> c.judge(c.analyzer.ok(0.01))
('Failure', 'Value: 0.01 does not meet the constraint requirement! (expected == 0.0)')
""",
    "contains_social_security_number": """\
>>> c = constraint_from_dict({"contains_social_security_number": {"column": "note", "assertion": "== 0"}})
>>> c.analyzer.to_spec()["pattern"]
'SOCIAL_SECURITY_NUMBER_US'
>>> c.judge(c.analyzer.ok(0.0))
('Success', None)
>>> c.judge(c.analyzer.ok(0.02))
('Failure', 'Value: 0.02 does not meet the constraint requirement! (expected == 0.0)')
""",
    "has_correlation": """\
>>> c = constraint_from_dict({"has_correlation": {"column_a": "height", "column_b": "weight", "assertion": "> 0.5"}})
>>> c.analyzer.to_spec()
{'analyzer': 'Correlation', 'first_column': 'height', 'second_column': 'weight'}
>>> c.judge(c.analyzer.ok(0.8))
('Success', None)
>>> c.judge(c.analyzer.ok(-0.1))
('Failure', 'Value: -0.1 does not meet the constraint requirement! (expected > 0.5)')
""",
    "satisfies": """\
>>> c = constraint_from_dict({"satisfies": {"predicate": "price >= cost", "name": "no loss", "columns": ["price", "cost"], "assertion": ">= 0.95"}})
>>> c.analyzer.to_spec()
{'analyzer': 'Compliance', 'name': 'no loss', 'predicate': 'price >= cost', 'columns': ['price', 'cost']}
>>> c.judge(c.analyzer.ok(0.98))
('Success', None)
>>> c.judge(c.analyzer.ok(0.9))
('Failure', 'Value: 0.9 does not meet the constraint requirement! (expected >= 0.95)')
""",
    "is_non_negative": """\
>>> c = constraint_from_dict({"is_non_negative": {"column": "amount"}})
>>> c.analyzer.to_spec()["predicate"]
'COALESCE(CAST(`amount` AS DOUBLE), 0.0) >= 0'
>>> c.judge(c.analyzer.ok(1.0))
('Success', None)
>>> c.judge(c.analyzer.ok(0.97))
('Failure', 'Value: 0.97 does not meet the constraint requirement! (expected == 1.0)')
""",
    "is_positive": """\
>>> c = constraint_from_dict({"is_positive": {"column": "quantity"}})
>>> c.analyzer.to_spec()["predicate"]
'COALESCE(CAST(`quantity` AS DOUBLE), 1.0) > 0'
>>> c.judge(c.analyzer.ok(1.0))
('Success', None)
>>> c.judge(c.analyzer.ok(0.5))
('Failure', 'Value: 0.5 does not meet the constraint requirement! (expected == 1.0)')
""",
    "is_contained_in": """\
>>> c = constraint_from_dict({"is_contained_in": {"column": "status", "values": ["open", "closed"]}})
>>> c.analyzer.to_spec()["predicate"]
"`status` IS NULL OR `status` IN ('open', 'closed')"
>>> c.judge(c.analyzer.ok(1.0))
('Success', None)
>>> c.judge(c.analyzer.ok(0.75))
('Failure', 'Value: 0.75 does not meet the constraint requirement! (expected == 1.0)')
>>> constraint_from_dict({"is_contained_in": {"column": "age", "lower_bound": 0, "upper_bound": 150}}).analyzer.to_spec()["predicate"]
'`age` IS NULL OR (`age` >= 0.0 AND `age` <= 150.0)'
""",
    "is_less_than": """\
>>> c = constraint_from_dict({"is_less_than": {"column_a": "start", "column_b": "end"}})
>>> c.analyzer.to_spec()["predicate"]
'`start` < `end`'
>>> c.judge(c.analyzer.ok(1.0))
('Success', None)
>>> c.judge(c.analyzer.ok(0.5))
('Failure', 'Value: 0.5 does not meet the constraint requirement! (expected == 1.0)')
""",
    "is_less_than_or_equal_to": """\
>>> c = constraint_from_dict({"is_less_than_or_equal_to": {"column_a": "discount", "column_b": "price"}})
>>> c.analyzer.to_spec()["predicate"]
'`discount` <= `price`'
>>> c.judge(c.analyzer.ok(1.0))
('Success', None)
>>> c.judge(c.analyzer.ok(0.9))
('Failure', 'Value: 0.9 does not meet the constraint requirement! (expected == 1.0)')
""",
    "is_greater_than": """\
>>> c = constraint_from_dict({"is_greater_than": {"column_a": "end", "column_b": "start", "assertion": ">= 0.99"}})
>>> c.analyzer.to_spec()["predicate"]
'`end` > `start`'
>>> c.judge(c.analyzer.ok(0.995))
('Success', None)
>>> c.judge(c.analyzer.ok(0.5))
('Failure', 'Value: 0.5 does not meet the constraint requirement! (expected >= 0.99)')
""",
    "is_greater_than_or_equal_to": """\
>>> c = constraint_from_dict({"is_greater_than_or_equal_to": {"column_a": "paid", "column_b": "due"}})
>>> c.analyzer.to_spec()["predicate"]
'`paid` >= `due`'
>>> c.judge(c.analyzer.ok(1.0))
('Success', None)
>>> c.judge(c.analyzer.ok(0.8))
('Failure', 'Value: 0.8 does not meet the constraint requirement! (expected == 1.0)')
""",
    "has_no_anomalies": """\
>>> c = constraint_from_dict({"has_no_anomalies": {"metric": {"analyzer": "Size"}, "detector": {"type": "simple_threshold", "upper_bound": 100}}})
>>> c.analyzer.to_spec()
{'analyzer': 'Size'}
>>> c.judge(c.analyzer.ok(300.0))
('Failure', "has_no_anomalies needs a detector evaluator in the check context ...")
>>> from streamdq.detectors.history_evaluator import HistoryAnomalyEvaluator
>>> evaluator = HistoryAnomalyEvaluator()
>>> c.judge(c.analyzer.ok(42.0), {"anomaly_evaluator": evaluator})
('Success', None)
>>> c.judge(c.analyzer.ok(300.0), {"anomaly_evaluator": evaluator})
('Failure', 'anomaly (simple_threshold) against 0 earlier point(s): value 300.0 is not in bounds [..., 100.0]')
""",
}
