"""Row-level outcomes (Deequ's rowLevelResults): per row, did it pass each row-level constraint?

A constraint is **row-level** when its metric is a count of rows, so each row's share of it is
defined: completeness (``is_complete``, ``has_completeness``), compliance (``satisfies``,
``are_complete``, ``is_non_negative``, ``is_positive``, ``is_contained_in``, the column
comparisons), pattern (``has_pattern``, ``contains_*``), min/max length (``has_min_length``,
``has_max_length`` with a comparison or ``between`` assertion) and uniqueness
(``is_unique``, ``is_primary_key``, ``has_uniqueness``). Every other constraint is
dataset-level (a mean, a size, a quantile...) and never stamps a row.

The outcome of a row in scope of the constraint's ``where`` (Deequ's definitions):

=================  ======================================================================
completeness       TRUE when the column is not NULL, else FALSE
compliance         the predicate itself: TRUE, FALSE, or NULL when it evaluates to NULL
pattern            TRUE when the regex is found (searched anywhere), FALSE otherwise (NULL too)
min/max length     the constraint's assertion applied to the row's length; a NULL value is
                   TRUE with ``null_behavior`` ignore, length 0 with empty_string, FALSE with fail
uniqueness         TRUE when no other row in scope has the same key, FALSE otherwise; a row
                   whose key columns are all NULL is TRUE (the metric drops it)
=================  ======================================================================

A row outside the ``where`` gets ``filtered_row``: ``"true"`` (Deequ's default
``FilteredRowOutcome.TRUE``) or ``"null"`` (``FilteredRowOutcome.NULL``).

A row **fails** a constraint when it is in scope and its outcome is not TRUE: exactly the rows
the metric counts against the constraint (a NULL compliance outcome fails, as the metric counts
it non-compliant). The outcomes are Spark columns over the input: computing them is one
projection (plus one window per uniqueness key), in one pass, nothing collected.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from streamdq.analyzers.base import Analyzer, col, in_scope
from streamdq.analyzers.completeness import Completeness
from streamdq.analyzers.compliance import Compliance
from streamdq.analyzers.length import length_value
from streamdq.analyzers.max_length import MaxLength
from streamdq.analyzers.min_length import MinLength
from streamdq.analyzers.pattern_match import PatternMatch, resolve_pattern
from streamdq.analyzers.uniqueness import Uniqueness
from streamdq.checks.assertion import Between, Comparison
from streamdq.checks.check import Check
from streamdq.checks.constraint import Constraint
from streamdq.errors import InvalidArgument

FILTERED_TRUE = "true"
FILTERED_NULL = "null"
FILTERED_ROW = (FILTERED_TRUE, FILTERED_NULL)
FAILED_COLUMN = "_dq_failed_constraints"

_OPS = {
    "==": Column.__eq__,
    "!=": Column.__ne__,
    "<=": Column.__le__,
    ">=": Column.__ge__,
    "<": Column.__lt__,
    ">": Column.__gt__,
}


def _length_assertion(constraint: Constraint) -> Comparison | Between | None:
    a = constraint.assertion
    return a if isinstance(a, Comparison | Between) else None


def is_row_level(constraint: Constraint) -> bool:
    """True when ``constraint`` has per-row outcomes (see the module doc)."""
    if constraint.kind == "has_no_anomalies":
        return False
    a = constraint.analyzer
    if isinstance(a, Completeness | Compliance | PatternMatch | Uniqueness):
        return True
    return isinstance(a, MinLength | MaxLength) and _length_assertion(constraint) is not None


@dataclass(frozen=True)
class RowLevelRule:
    """One row-level constraint of one check, with the name its outcome column gets."""

    check: str
    constraint: Constraint
    name: str

    @property
    def analyzer(self) -> Analyzer:
        return self.constraint.analyzer

    def in_scope(self) -> Column:
        return in_scope(self.constraint.where)

    def raw_outcome(self) -> Column:
        """The outcome of a row in scope (TRUE / FALSE / NULL), ignoring the filter."""
        a = self.analyzer
        if isinstance(a, Completeness):
            return col(a.column).isNotNull()
        if isinstance(a, Compliance):
            return F.expr(a.predicate).cast("boolean")
        if isinstance(a, PatternMatch):
            found = F.regexp_extract(col(a.column), resolve_pattern(a.pattern), 0) != F.lit("")
            return F.coalesce(found, F.lit(False))
        if isinstance(a, MinLength | MaxLength):
            return self._length_outcome(a)
        if isinstance(a, Uniqueness):
            return self._unique_outcome(a)
        raise InvalidArgument(f"{self.constraint.describe()} is not a row-level constraint")

    def _length_outcome(self, a: MinLength | MaxLength) -> Column:
        assertion = _length_assertion(self.constraint)
        assert assertion is not None
        null_length = 0.0 if a.null_behavior == "empty_string" else None
        length = length_value(a.column, a.null_behavior, -1.0, None)
        if isinstance(assertion, Comparison):
            judged = _OPS[assertion.op](length, F.lit(assertion.value))
        else:
            judged = length.between(F.lit(assertion.lower), F.lit(assertion.upper))
        value_null = col(a.column).isNull()
        if a.null_behavior == "fail":
            return F.when(value_null, F.lit(False)).otherwise(judged)
        if null_length is None:  # ignore: a NULL value is not judged, it passes
            return F.when(value_null, F.lit(True)).otherwise(judged)
        return judged

    def _unique_outcome(self, a: Uniqueness) -> Column:
        keys = [col(c) for c in a.columns]
        all_null = keys[0].isNull()
        for k in keys[1:]:
            all_null = all_null & k.isNull()
        scope = self.in_scope()
        window = Window.partitionBy(scope, *keys)
        count = F.count(F.lit(1)).over(window)
        return F.when(all_null, F.lit(True)).otherwise(count == F.lit(1))

    def outcome(self, filtered_row: str = FILTERED_TRUE) -> Column:
        """The row's outcome: ``raw_outcome`` in scope, ``filtered_row`` outside the filter."""
        _check_filtered_row(filtered_row)
        outside = F.lit(True) if filtered_row == FILTERED_TRUE else F.lit(None).cast("boolean")
        if self.constraint.where is None:
            return self.raw_outcome()
        return F.when(self.in_scope(), self.raw_outcome()).otherwise(outside)

    def fails(self) -> Column:
        """TRUE when the row is in scope and its outcome is not TRUE (never NULL)."""
        return self.in_scope() & ~F.coalesce(self.raw_outcome(), F.lit(False))


def _check_filtered_row(filtered_row: str) -> None:
    if filtered_row not in FILTERED_ROW:
        raise InvalidArgument(
            f"filtered_row: got {filtered_row!r}; expected one of {', '.join(FILTERED_ROW)}"
        )


def row_level_rules(checks: Iterable[Check]) -> list[RowLevelRule]:
    """The row-level constraints of ``checks`` in order, each named by its description (the
    check's description is prefixed when two checks hold the same constraint text)."""
    pairs = [(c.description, k) for c in checks for k in c.constraints if is_row_level(k)]
    texts = [k.describe() for _, k in pairs]
    rules = []
    for (check, constraint), text in zip(pairs, texts, strict=True):
        name = f"{check}: {text}" if texts.count(text) > 1 else text
        rules.append(RowLevelRule(check, constraint, name))
    return rules


def with_outcomes(df: DataFrame, checks: Iterable[Check], *, filtered_row: str = FILTERED_TRUE) -> DataFrame:
    """``df`` with one boolean column per row-level constraint (named as in ``row_level_rules``)."""
    _check_filtered_row(filtered_row)
    rules = row_level_rules(checks)
    return df.select("*", *[r.outcome(filtered_row).alias(r.name) for r in rules])


def failed_names(rules: Sequence[RowLevelRule]) -> Column:
    """array<string> of the names of the rules the row fails (empty when it passes all)."""
    if not rules:
        return F.array().cast("array<string>")
    flags = [F.when(r.fails(), F.lit(r.name)) for r in rules]
    return F.filter(F.array(*flags), lambda x: x.isNotNull())


def failing_rows(df: DataFrame, checks: Iterable[Check]) -> DataFrame:
    """The rows of ``df`` failing at least one row-level constraint, with ``_dq_failed_constraints``
    (the names of the constraints they fail). Lazy: one pass when an action runs."""
    rules = row_level_rules(checks)
    marked = df.select("*", failed_names(rules).alias(FAILED_COLUMN))
    return marked.filter(F.size(col(FAILED_COLUMN)) > 0)
