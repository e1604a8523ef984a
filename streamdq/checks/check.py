"""Check: a named group of constraints at a level, built fluently, judged in pure Python.

``Check(Level.ERROR, "orders").is_complete("id").has_completeness("email", ">= 0.9")``
returns a new immutable ``Check`` at each step (the Deequ vocabulary in snake_case); every
method compiles to a ``Constraint`` (data), so the check round-trips through YAML/JSON.
Assertions may be given as ``Assertion`` objects, shorthand strings (``">= 0.95"``),
``{"between": [lo, hi]}``, numbers, or Python callables (code only, not serializable).
Every method takes keyword-only ``where`` (Spark SQL filter for the analyzer), ``hint``
(added to the failure message) and ``scope`` (``batch``/``window``/``total``: which merged
state the streaming runner judges; ``verify`` treats a table as one batch).

``required_analyzers()`` lists the analyzers of all constraints (deduplicated, order kept);
``evaluate(metrics, scope=..., window=...)`` judges the constraints of that scope against
a mapping analyzer -> metric without touching Spark: the status is ``Success`` when every
judged constraint succeeds, else the check's level (``Error``/``Warning``). A check with no
constraint at the scope is a ``Success`` with no constraint results.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from streamdq.analyzers.base import Analyzer
from streamdq.analyzers.metric import Metric
from streamdq.checks.constraint import Constraint
from streamdq.errors import ConfigError
from streamdq.report import SUCCESS, CheckResult, Window

ROW_LEVEL_MODES = (None, "quarantine")


class Level(StrEnum):
    """How severe a failing check is."""

    ERROR = "Error"
    WARNING = "Warning"

    @classmethod
    def parse(cls, value: Any) -> Level:
        if isinstance(value, Level):
            return value
        if isinstance(value, str):
            for level in cls:
                if value.strip().lower() == level.value.lower():
                    return level
        raise ConfigError("level", f"got {value!r}; expected 'error' or 'warning'")

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Check:
    """An immutable check; the fluent methods return a new check with one more constraint."""

    level: Level
    description: str
    constraints: tuple[Constraint, ...] = ()
    row_level: str | None = None
    """``"quarantine"``: in the streaming job, rows failing this check's row-level constraints
    go to the quarantine table (``streamdq.checks.row_level``); None: metrics only."""

    def __post_init__(self) -> None:
        if not isinstance(self.description, str) or not self.description.strip():
            raise ConfigError("description", f"got {self.description!r}; expected a non-empty string")
        if self.row_level not in ROW_LEVEL_MODES:
            raise ConfigError("row_level", f"got {self.row_level!r}; expected 'quarantine' (or leave it out)")
        object.__setattr__(self, "level", Level.parse(self.level))
        object.__setattr__(self, "constraints", tuple(self.constraints))

    # -- generic ------------------------------------------------------------------------
    def add_constraint(
        self,
        kind: str,
        *,
        assertion: Any = None,
        where: str | None = None,
        hint: str | None = None,
        scope: str = "batch",
        **params: Any,
    ) -> Check:
        """Add a constraint of any registered kind (including kinds added by other modules)."""
        clean = {k: (list(v) if isinstance(v, tuple) else v) for k, v in params.items() if v is not None}
        c = Constraint.create(kind, clean, assertion=assertion, where=where, hint=hint, scope=scope)
        return replace(self, constraints=self.constraints + (c,))

    def with_constraints(self, constraints: Sequence[Constraint]) -> Check:
        return replace(self, constraints=self.constraints + tuple(constraints))

    # -- completeness ---------------------------------------------------------------------
    def is_complete(self, column: str, **kw: Any) -> Check:
        return self.add_constraint("is_complete", column=column, **kw)

    def has_completeness(self, column: str, assertion: Any, **kw: Any) -> Check:
        return self.add_constraint("has_completeness", column=column, assertion=assertion, **kw)

    def are_complete(self, columns: Sequence[str], assertion: Any = None, **kw: Any) -> Check:
        return self.add_constraint("are_complete", columns=columns, assertion=assertion, **kw)

    def are_any_complete(self, columns: Sequence[str], assertion: Any = None, **kw: Any) -> Check:
        return self.add_constraint("are_any_complete", columns=columns, assertion=assertion, **kw)

    # -- uniqueness family -------------------------------------------------------------------
    def is_unique(self, column: str, **kw: Any) -> Check:
        return self.add_constraint("is_unique", column=column, **kw)

    def is_primary_key(self, column: str, *columns: str, **kw: Any) -> Check:
        return self.add_constraint("is_primary_key", columns=[column, *columns], **kw)

    def has_uniqueness(self, columns: Sequence[str] | str, assertion: Any, **kw: Any) -> Check:
        return self.add_constraint("has_uniqueness", columns=columns, assertion=assertion, **kw)

    def has_distinctness(self, columns: Sequence[str] | str, assertion: Any, **kw: Any) -> Check:
        return self.add_constraint("has_distinctness", columns=columns, assertion=assertion, **kw)

    def has_unique_value_ratio(self, columns: Sequence[str] | str, assertion: Any, **kw: Any) -> Check:
        return self.add_constraint("has_unique_value_ratio", columns=columns, assertion=assertion, **kw)

    def has_number_of_distinct_values(
        self, column: str, assertion: Any, *, max_bins: int | None = None, **kw: Any
    ) -> Check:
        return self.add_constraint(
            "has_number_of_distinct_values", column=column, assertion=assertion, max_bins=max_bins, **kw
        )

    def has_histogram_values(
        self,
        column: str,
        assertion: Any,
        *,
        key: str | None = None,
        value: str | None = None,
        max_bins: int | None = None,
        sum_column: str | None = None,
        **kw: Any,
    ) -> Check:
        """Judge ``ratio`` (or ``absolute``) of histogram ``key``; without ``key`` the assertion
        (a callable) receives the whole distribution dict. With ``sum_column`` a bin's value is
        the sum of that column over its rows (Deequ's ``aggregateFunction = Sum(sum_column)``),
        and ``ratio`` its share of the column's total."""
        return self.add_constraint(
            "has_histogram_values",
            column=column,
            assertion=assertion,
            key=key,
            value=value,
            max_bins=max_bins,
            sum_column=sum_column,
            **kw,
        )

    def has_entropy(self, column: str, assertion: Any, **kw: Any) -> Check:
        return self.add_constraint("has_entropy", column=column, assertion=assertion, **kw)

    def has_mutual_information(self, column_a: str, column_b: str, assertion: Any, **kw: Any) -> Check:
        return self.add_constraint(
            "has_mutual_information", column_a=column_a, column_b=column_b, assertion=assertion, **kw
        )

    # -- statistics -------------------------------------------------------------------------
    def has_approx_quantile(
        self,
        column: str,
        quantile: float,
        assertion: Any,
        *,
        relative_error: float | None = None,
        **kw: Any,
    ) -> Check:
        """``relative_error``: Deequ's relativeError in (0, 1], mapped to the KLL sketch's k."""
        return self.add_constraint(
            "has_approx_quantile",
            column=column,
            quantile=quantile,
            assertion=assertion,
            relative_error=relative_error,
            **kw,
        )

    def has_approx_count_distinct(self, column: str, assertion: Any, **kw: Any) -> Check:
        return self.add_constraint("has_approx_count_distinct", column=column, assertion=assertion, **kw)

    def has_min(self, column: str, assertion: Any, **kw: Any) -> Check:
        return self.add_constraint("has_min", column=column, assertion=assertion, **kw)

    def has_max(self, column: str, assertion: Any, **kw: Any) -> Check:
        return self.add_constraint("has_max", column=column, assertion=assertion, **kw)

    def has_mean(self, column: str, assertion: Any, **kw: Any) -> Check:
        return self.add_constraint("has_mean", column=column, assertion=assertion, **kw)

    def has_sum(self, column: str, assertion: Any, **kw: Any) -> Check:
        return self.add_constraint("has_sum", column=column, assertion=assertion, **kw)

    def has_standard_deviation(self, column: str, assertion: Any, **kw: Any) -> Check:
        return self.add_constraint("has_standard_deviation", column=column, assertion=assertion, **kw)

    def has_range(self, column: str, assertion: Any, **kw: Any) -> Check:
        """max - min of ``column`` (Range)."""
        return self.add_constraint("has_range", column=column, assertion=assertion, **kw)

    def has_interquartile_range(self, column: str, assertion: Any, **kw: Any) -> Check:
        """Q3 - Q1 of ``column`` (InterquartileRange, KLL)."""
        return self.add_constraint("has_interquartile_range", column=column, assertion=assertion, **kw)

    def has_exact_quantile(self, column: str, quantile: float, assertion: Any, **kw: Any) -> Check:
        """Exact quantile (ExactQuantile: not mergeable, verify and batch scope only)."""
        return self.add_constraint(
            "has_exact_quantile", column=column, quantile=quantile, assertion=assertion, **kw
        )

    def has_column_count(self, assertion: Any, **kw: Any) -> Check:
        return self.add_constraint("has_column_count", assertion=assertion, **kw)

    def has_variance(self, column: str, assertion: Any, **kw: Any) -> Check:
        return self.add_constraint("has_variance", column=column, assertion=assertion, **kw)

    def has_skewness(self, column: str, assertion: Any, **kw: Any) -> Check:
        return self.add_constraint("has_skewness", column=column, assertion=assertion, **kw)

    def has_kurtosis(self, column: str, assertion: Any, **kw: Any) -> Check:
        return self.add_constraint("has_kurtosis", column=column, assertion=assertion, **kw)

    def has_zeros_count(self, column: str, assertion: Any, **kw: Any) -> Check:
        return self.add_constraint("has_zeros_count", column=column, assertion=assertion, **kw)

    def has_duplicate_row_count(
        self, assertion: Any, columns: Sequence[str] | None = None, **kw: Any
    ) -> Check:
        """Rows whose ``columns`` (default: all) value occurs more than once (DuplicateRowCount)."""
        return self.add_constraint("has_duplicate_row_count", columns=columns, assertion=assertion, **kw)

    def has_no_non_finite(self, column: str, assertion: Any = None, **kw: Any) -> Check:
        """No NaN, +Infinity or -Infinity in ``column`` (NonFinite; default ``== 0``)."""
        return self.add_constraint("has_no_non_finite", column=column, assertion=assertion, **kw)

    def has_non_finite_count(self, column: str, assertion: Any, **kw: Any) -> Check:
        """The number of NaN / +-Infinity values in ``column`` (NonFinite)."""
        return self.add_constraint("has_non_finite_count", column=column, assertion=assertion, **kw)

    def has_min_length(
        self, column: str, assertion: Any, *, null_behavior: str | None = None, **kw: Any
    ) -> Check:
        """``null_behavior``: "ignore" (default), "empty_string" (length 0) or "fail"."""
        return self.add_constraint(
            "has_min_length", column=column, assertion=assertion, null_behavior=null_behavior, **kw
        )

    def has_max_length(
        self, column: str, assertion: Any, *, null_behavior: str | None = None, **kw: Any
    ) -> Check:
        """``null_behavior``: "ignore" (default), "empty_string" (length 0) or "fail"."""
        return self.add_constraint(
            "has_max_length", column=column, assertion=assertion, null_behavior=null_behavior, **kw
        )

    def has_size(self, assertion: Any, **kw: Any) -> Check:
        return self.add_constraint("has_size", assertion=assertion, **kw)

    def has_data_type(self, column: str, data_type: str, assertion: Any = None, **kw: Any) -> Check:
        """``data_type``: Null, Fractional, Integral, Boolean, String or Numeric."""
        return self.add_constraint(
            "has_data_type", column=column, data_type=data_type, assertion=assertion, **kw
        )

    def has_correlation(self, column_a: str, column_b: str, assertion: Any, **kw: Any) -> Check:
        return self.add_constraint(
            "has_correlation", column_a=column_a, column_b=column_b, assertion=assertion, **kw
        )

    # -- patterns -----------------------------------------------------------------------------
    def has_pattern(
        self, column: str, pattern: str, assertion: Any = None, *, name: str | None = None, **kw: Any
    ) -> Check:
        return self.add_constraint(
            "has_pattern", column=column, pattern=pattern, name=name, assertion=assertion, **kw
        )

    def contains_email(self, column: str, assertion: Any = None, **kw: Any) -> Check:
        return self.add_constraint("contains_email", column=column, assertion=assertion, **kw)

    def contains_url(self, column: str, assertion: Any = None, **kw: Any) -> Check:
        return self.add_constraint("contains_url", column=column, assertion=assertion, **kw)

    def contains_credit_card_number(self, column: str, assertion: Any = None, **kw: Any) -> Check:
        return self.add_constraint("contains_credit_card_number", column=column, assertion=assertion, **kw)

    def contains_social_security_number(self, column: str, assertion: Any = None, **kw: Any) -> Check:
        return self.add_constraint(
            "contains_social_security_number", column=column, assertion=assertion, **kw
        )

    # -- predicates ------------------------------------------------------------------------------
    def satisfies(
        self,
        predicate: str,
        name: str,
        assertion: Any = None,
        *,
        columns: Sequence[str] | None = None,
        **kw: Any,
    ) -> Check:
        """Fraction of rows where the Spark SQL ``predicate`` is TRUE (``columns``: what it reads)."""
        return self.add_constraint(
            "satisfies", predicate=predicate, name=name, columns=columns, assertion=assertion, **kw
        )

    def is_non_negative(self, column: str, assertion: Any = None, **kw: Any) -> Check:
        return self.add_constraint("is_non_negative", column=column, assertion=assertion, **kw)

    def is_positive(self, column: str, assertion: Any = None, **kw: Any) -> Check:
        return self.add_constraint("is_positive", column=column, assertion=assertion, **kw)

    def is_contained_in(
        self,
        column: str,
        values: Sequence[Any] | None = None,
        *,
        lower_bound: float | None = None,
        upper_bound: float | None = None,
        include_lower: bool | None = None,
        include_upper: bool | None = None,
        assertion: Any = None,
        **kw: Any,
    ) -> Check:
        """NULL or one of ``values``; or NULL or within ``lower_bound``..``upper_bound`` (inclusive by default)."""
        return self.add_constraint(
            "is_contained_in",
            column=column,
            values=values,
            lower_bound=lower_bound,
            upper_bound=upper_bound,
            include_lower=include_lower,
            include_upper=include_upper,
            assertion=assertion,
            **kw,
        )

    def is_less_than(self, column_a: str, column_b: str, assertion: Any = None, **kw: Any) -> Check:
        return self.add_constraint(
            "is_less_than", column_a=column_a, column_b=column_b, assertion=assertion, **kw
        )

    def is_less_than_or_equal_to(
        self, column_a: str, column_b: str, assertion: Any = None, **kw: Any
    ) -> Check:
        return self.add_constraint(
            "is_less_than_or_equal_to", column_a=column_a, column_b=column_b, assertion=assertion, **kw
        )

    def is_greater_than(self, column_a: str, column_b: str, assertion: Any = None, **kw: Any) -> Check:
        return self.add_constraint(
            "is_greater_than", column_a=column_a, column_b=column_b, assertion=assertion, **kw
        )

    def is_greater_than_or_equal_to(
        self, column_a: str, column_b: str, assertion: Any = None, **kw: Any
    ) -> Check:
        return self.add_constraint(
            "is_greater_than_or_equal_to", column_a=column_a, column_b=column_b, assertion=assertion, **kw
        )

    # -- expressions (DolphinScheduler's checks, streamdq.checks.expression) --------------------
    def expression(self, name: str, expression: str, **kw: Any) -> Check:
        """A named boolean CEL expression over ``measures``, ``metrics`` and their history, e.g.
        ``expression("all order is unique", 'measures["m"]["c"] == measures["m"]["cd"]')``."""
        return self.add_constraint("expression", name=name, expression=expression, **kw)

    def aggregation(
        self, function: str, column: str, params: Mapping[str, Any] | None = None, **kw: Any
    ) -> Check:
        """An aggregation function on ``column`` (docs/aggregations.md), collected unless an
        ``assertion`` is given, e.g. ``aggregation("discreteValuesHistogram", "status")``."""
        return self.add_constraint("aggregation", function=function, column=column, params=params, **kw)

    # -- anomalies (evaluated by streamdq.detectors) -------------------------------------------
    def has_no_anomalies(
        self,
        metric: Analyzer | Mapping[str, Any],
        detector: Mapping[str, Any],
        *,
        scope: str = "window",
        hint: str | None = None,
        where: str | None = None,
    ) -> Check:
        """The newest point of ``metric``'s series at ``scope`` is not anomalous for ``detector``."""
        spec = metric.to_spec() if isinstance(metric, Analyzer) else dict(metric)
        return self.add_constraint(
            "has_no_anomalies", metric=spec, detector=dict(detector), scope=scope, hint=hint, where=where
        )

    # -- judging --------------------------------------------------------------------------------
    def constraints_at(self, scope: str | None) -> tuple[Constraint, ...]:
        """The constraints judged at ``scope`` (all of them when ``scope`` is None)."""
        if scope is None:
            return self.constraints
        return tuple(c for c in self.constraints if c.scope == scope)

    def required_analyzers(self, scope: str | None = None) -> list[Analyzer]:
        """Analyzers of the constraints (at ``scope``, or all), deduplicated, order kept."""
        return list(dict.fromkeys(c.analyzer for c in self.constraints_at(scope)))

    def evaluate(
        self,
        metrics: Mapping[Analyzer, Metric],
        *,
        scope: str | None = "batch",
        window: Window | None = None,
        context: Mapping[str, Any] | None = None,
    ) -> CheckResult:
        """Judge the constraints of ``scope`` (None: all, each labelled with its own scope).

        Kinds that read the whole scope (``expression``) find ``metrics`` in
        ``context["metrics_by_analyzer"]``."""
        context = {**(context or {}), "metrics_by_analyzer": metrics}
        results = tuple(
            c.evaluate(
                metrics,
                check=self.description,
                level=self.level.value,
                scope=scope,
                window=window,
                context=context,
            )
            for c in self.constraints_at(scope)
        )
        status = self.level.value if any(r.failed for r in results) else SUCCESS
        return CheckResult(self.description, self.level.value, status, results)
