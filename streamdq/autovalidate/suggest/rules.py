"""Deequ's constraint-suggestion rules on a column profile (SEMANTICS.md, "Suggestion rules").

A rule looks at one ``ProfiledColumn`` (and the table's row count) and either returns a
``Suggestion`` or None. A suggestion carries the column, the rule's name, ``why`` (the
profile numbers that made the rule fire), the constraint as an ordinary streamdq
constraint spec (the YAML/JSON form of docs/checks.md, e.g. ``{"is_complete": {"column":
"id"}}``) and the equivalent fluent-builder call (``.is_complete('id')``).

Rules (in ``DEFAULT_RULES`` order):

* CompleteIfComplete: completeness == 1 -> ``is_complete``.
* RetainCompleteness(min=0.2, max=1.0): min < completeness < max -> ``has_completeness >=
  lower bound`` of the 95% Wilson (default) or Wald interval of the completeness over the
  rows; both intervals are stated in ``why``.
* RetainType: a string column whose values all look Integral, Fractional or Boolean ->
  ``has_data_type`` (Fractional is suggested as ``Numeric``: "3" is a valid fractional
  number but is classified Integral, so ``Fractional`` alone would fail on the profiled data).
* CategoricalRange: String/Integral column with a histogram whose ratio of keys seen once
  is <= 0.1 -> ``is_contained_in`` all observed values (most frequent first).
* FractionalCategoricalRange(0.9): that ratio <= 0.4 and the most frequent keys needed to
  cover 90% of the rows cover less than all of them -> ``is_contained_in`` those keys with
  ``>=`` the interval's lower bound of their coverage.
* NonNegativeNumbers: minimum >= 0 -> ``is_non_negative``.
* HasMin / HasMax: ``has_min >= minimum`` / ``has_max <= maximum``.
* HasMean: ``has_mean`` between the 95% interval of the mean (mean ± z·σ/√n).
* HasStandardDeviation: ``has_standard_deviation`` between σ ± z·σ/√(2(n−1)) (the normal
  approximation of the standard error of σ), lower end at least 0.
* HasMinLength / HasMaxLength: ``has_min_length >= min`` / ``has_max_length <= max``.
* UniqueIfApproximatelyUnique: complete and |1 − approxDistinct/rows| <= 0.08 -> ``is_unique``
  (the distinct count is a HyperLogLog estimate, so this may not hold even on the profile).

Intervals (``wald_interval``, ``wilson_interval``): 95%, z = 1.959963984540054, lower bound
truncated and upper bound rounded away from zero to 2 decimals, then clamped to [0, 1].
Bands of means and standard deviations are rounded outwards to two significant digits of
their half-width, and never narrower than 1e-9 relative, so that a suggestion holds when
the same data is verified again. This module runs without Spark.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import ROUND_CEILING, ROUND_DOWN, ROUND_FLOOR, ROUND_UP, Decimal
from typing import Any, Protocol

from streamdq.analyzers.histogram import NULL_VALUE
from streamdq.errors import InvalidArgument

Z_95 = 1.959963984540054
"""The two-sided 95% quantile of the standard normal distribution."""

INTEGRAL, FRACTIONAL, BOOLEAN, STRING, UNKNOWN = "Integral", "Fractional", "Boolean", "String", "Unknown"
DATA_TYPES = (INTEGRAL, FRACTIONAL, BOOLEAN, STRING, UNKNOWN)
WILSON, WALD = "wilson", "wald"
MIN_RELATIVE_MARGIN = 1e-9


# -- the profile ----------------------------------------------------------------------------


@dataclass(frozen=True)
class ProfiledColumn:
    """What the rules know about one column. Absent statistics are None.

    ``data_type`` is Deequ's column type: for a typed column the Spark type's family
    (Integral, Fractional, Boolean, String or Unknown for dates, binaries, nested types);
    for a string column the type inferred from its values (then ``type_inferred`` is True).
    ``type_counts`` counts the non-NULL values per inferred type. ``histogram`` maps every
    value (as a string, NULL as ``"NullValue"``) to its row count and must be complete
    (it is only computed for low-cardinality columns).
    """

    column: str
    data_type: str = UNKNOWN
    type_inferred: bool = False
    completeness: float | None = None
    approx_distinct: float | None = None
    minimum: float | None = None
    maximum: float | None = None
    mean: float | None = None
    std_dev: float | None = None
    min_length: float | None = None
    max_length: float | None = None
    type_counts: Mapping[str, int] | None = field(default=None, hash=False)
    histogram: Mapping[str, int] | None = field(default=None, hash=False)

    def __post_init__(self) -> None:
        if self.data_type not in DATA_TYPES:
            raise InvalidArgument(
                f"data_type: got {self.data_type!r}; expected one of {', '.join(DATA_TYPES)}"
            )


@dataclass(frozen=True)
class TableProfile:
    """The profile of a table: its row count, one ``ProfiledColumn`` per column, and the
    number of Spark jobs that computed it (0 for a hand-built profile)."""

    rows: int
    columns: tuple[ProfiledColumn, ...]
    jobs: int = 0


def infer_type(type_counts: Mapping[str, int]) -> str:
    """Deequ's type of a string column from the counts of its non-NULL values per type:
    Unknown without values; String if any value is a String or booleans mix with numbers;
    else Boolean, else Fractional if any value is Fractional, else Integral."""
    count = {t: int(type_counts.get(t, 0)) for t in (INTEGRAL, FRACTIONAL, BOOLEAN, STRING)}
    if not any(count.values()):
        return UNKNOWN
    if count[STRING] or (count[BOOLEAN] and (count[INTEGRAL] or count[FRACTIONAL])):
        return STRING
    if count[BOOLEAN]:
        return BOOLEAN
    return FRACTIONAL if count[FRACTIONAL] else INTEGRAL


# -- suggestions ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Suggestion:
    """One suggested constraint: ``constraint`` is a constraint spec ``{kind: {params...}}``
    loadable by ``streamdq.checks.spec.constraint_from_dict``; ``code`` the same constraint
    as a fluent builder call to append to ``Check(...)``."""

    column: str
    rule: str
    why: str
    constraint: Mapping[str, Any] = field(hash=False)
    code: str

    @property
    def kind(self) -> str:
        """The constraint kind (``is_complete``, ``has_completeness``, ...)."""
        return next(iter(self.constraint))

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able data."""
        return {
            "column": self.column,
            "rule": self.rule,
            "why": self.why,
            "constraint": dict(self.constraint),
            "code": self.code,
        }


def builder_code(kind: str, body: Mapping[str, Any]) -> str:
    """The fluent builder call for a constraint spec: the column positionally, the other
    parameters (and the assertion) as keywords, e.g. ``.has_min('x', assertion='>= 0')``."""
    args = [repr(body["column"])] if "column" in body else []
    args += [f"{k}={v!r}" for k, v in body.items() if k != "column"]
    return f".{kind}({', '.join(args)})"


def _suggestion(column: str, rule: str, why: str, kind: str, body: dict[str, Any]) -> Suggestion:
    return Suggestion(column, rule, why, {kind: body}, builder_code(kind, body))


# -- numbers ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Interval:
    """A closed interval ``[lower, upper]``."""

    lower: float
    upper: float

    def __str__(self) -> str:
        return f"[{self.lower:.2f}, {self.upper:.2f}]"


def _to_places(x: float, places: int, rounding: str) -> float:
    return float(Decimal(repr(x)).quantize(Decimal(1).scaleb(-places), rounding=rounding))


def _rounded(lower: float, upper: float) -> Interval:
    """Lower truncated (toward zero), upper rounded away from zero, to 2 decimals; in [0, 1]."""
    lo = _to_places(lower, 2, ROUND_DOWN)
    hi = _to_places(upper, 2, ROUND_UP)
    return Interval(min(max(lo, 0.0), 1.0), min(max(hi, 0.0), 1.0))


def _check_proportion(p: float, n: int) -> None:
    if not 0.0 <= p <= 1.0 or n <= 0:
        raise InvalidArgument(f"need 0 <= p <= 1 and n > 0, got p={p}, n={n}")


def wald_interval(p: float, n: int, z: float = Z_95) -> Interval:
    """Wald interval of a proportion ``p`` observed in ``n`` trials: p ± z·√(p(1−p)/n)."""
    _check_proportion(p, n)
    margin = z * math.sqrt(p * (1 - p) / n)
    return _rounded(p - margin, p + margin)


def wilson_interval(p: float, n: int, z: float = Z_95) -> Interval:
    """Wilson score interval: (p + z²/2n ± z·√(p(1−p)/n + z²/4n²)) / (1 + z²/n)."""
    _check_proportion(p, n)
    z2n = z * z / n
    centre = p + z2n / 2
    margin = z * math.sqrt(p * (1 - p) / n + z2n / (4 * n))
    return _rounded((centre - margin) / (1 + z2n), (centre + margin) / (1 + z2n))


def proportion_interval(p: float, n: int, strategy: str = WILSON) -> Interval:
    """The Wilson or Wald interval (``strategy``) of a proportion."""
    if strategy == WILSON:
        return wilson_interval(p, n)
    if strategy == WALD:
        return wald_interval(p, n)
    raise InvalidArgument(f"strategy: got {strategy!r}; expected {WILSON!r} or {WALD!r}")


def _intervals_text(p: float, n: int, strategy: str) -> str:
    return (
        f"95% Wilson interval {wilson_interval(p, n)}, Wald interval {wald_interval(p, n)}; "
        f"lower {strategy.capitalize()} bound used"
    )


def outward_band(value: float, margin: float) -> tuple[float, float]:
    """``[value − margin, value + margin]`` rounded outwards (floor / ceiling) to two
    significant digits of the margin; the margin is at least 1e-9 relative to the value."""
    margin = max(abs(margin), MIN_RELATIVE_MARGIN * max(1.0, abs(value)))
    places = max(0, 1 - math.floor(math.log10(margin)))
    return (
        _to_places(value - margin, places, ROUND_FLOOR),
        _to_places(value + margin, places, ROUND_CEILING),
    )


def number(x: float) -> int | float:
    """An integral float as an int (``3.0`` -> ``3``), other floats unchanged."""
    x = float(x)
    return int(x) if x.is_integer() and abs(x) < 2**53 else x


# -- rules ---------------------------------------------------------------------------------


class SuggestionRule(Protocol):
    """A rule: ``name`` and ``__call__(column, rows) -> Suggestion | None``."""

    @property
    def name(self) -> str: ...

    def __call__(self, column: ProfiledColumn, rows: int) -> Suggestion | None: ...


@dataclass(frozen=True)
class CompleteIfComplete:
    """completeness == 1 -> ``is_complete``."""

    name: str = "CompleteIfComplete"

    def __call__(self, column: ProfiledColumn, rows: int) -> Suggestion | None:
        if column.completeness != 1.0 or rows <= 0:
            return None
        why = f"completeness 1.0 (no NULL in {rows} rows)"
        return _suggestion(column.column, self.name, why, "is_complete", {"column": column.column})


@dataclass(frozen=True)
class RetainCompleteness:
    """min < completeness < max -> ``has_completeness >= lower bound`` of its 95% interval."""

    min_completeness: float = 0.2
    max_completeness: float = 1.0
    strategy: str = WILSON
    name: str = "RetainCompleteness"

    def __call__(self, column: ProfiledColumn, rows: int) -> Suggestion | None:
        p = column.completeness
        if p is None or rows <= 0 or not self.min_completeness < p < self.max_completeness:
            return None
        bound = proportion_interval(p, rows, self.strategy).lower
        why = f"completeness {p:.4g} over {rows} rows; {_intervals_text(p, rows, self.strategy)}"
        body = {"column": column.column, "assertion": f">= {bound:.2f}"}
        return _suggestion(column.column, self.name, why, "has_completeness", body)


@dataclass(frozen=True)
class RetainType:
    """A string column whose values all look Integral/Fractional/Boolean -> ``has_data_type``."""

    name: str = "RetainType"

    def __call__(self, column: ProfiledColumn, rows: int) -> Suggestion | None:
        if not column.type_inferred or column.data_type not in (INTEGRAL, FRACTIONAL, BOOLEAN):
            return None
        suggested = "Numeric" if column.data_type == FRACTIONAL else column.data_type
        counts = ", ".join(f"{n} {t}" for t, n in (column.type_counts or {}).items() if n and t != UNKNOWN)
        why = f"string column whose non-NULL values are all {column.data_type}" + (
            f" ({counts})" if counts else ""
        )
        if suggested != column.data_type:
            why += "; Numeric = Fractional or Integral"
        body = {"column": column.column, "data_type": suggested}
        return _suggestion(column.column, self.name, why, "has_data_type", body)


def _categorical_keys(column: ProfiledColumn) -> list[tuple[str, int]] | None:
    """The histogram of a String/Integral column, most frequent first (ties by key)."""
    if column.histogram is None or not column.histogram or column.data_type not in (STRING, INTEGRAL):
        return None
    return sorted(column.histogram.items(), key=lambda kv: (-kv[1], kv[0]))


def _unique_ratio(keys: list[tuple[str, int]]) -> tuple[int, float]:
    once = sum(1 for _, count in keys if count == 1)
    return once, once / len(keys)


def _values(column: ProfiledColumn, keys: list[str]) -> list[Any] | None:
    """Histogram keys as constraint values: ints for a typed Integral column; NULL dropped.

    None (the rule declines) when a key of a typed Integral column does not parse as an
    integer: a profile that contradicts its declared type is no basis for a suggestion.
    """
    native_int = column.data_type == INTEGRAL and not column.type_inferred
    if not native_int:
        return [k for k in keys if k != NULL_VALUE]
    out: list[Any] = []
    for k in keys:
        if k == NULL_VALUE:
            continue
        try:
            out.append(int(k))
        except (TypeError, ValueError):
            return None
    return out


@dataclass(frozen=True)
class CategoricalRange:
    """(#keys seen once)/#keys <= 0.1 -> ``is_contained_in`` all observed values."""

    max_unique_ratio: float = 0.1
    name: str = "CategoricalRange"

    def __call__(self, column: ProfiledColumn, rows: int) -> Suggestion | None:
        keys = _categorical_keys(column)
        if keys is None:
            return None
        once, ratio = _unique_ratio(keys)
        values = _values(column, [k for k, _ in keys])
        if ratio > self.max_unique_ratio or not values:  # None: keys not of the declared type
            return None
        why = (
            f"{len(keys)} distinct values, {once} of them seen once "
            f"(ratio {ratio:.2f} <= {self.max_unique_ratio})"
        )
        body = {"column": column.column, "values": values}
        return _suggestion(column.column, self.name, why, "is_contained_in", body)


@dataclass(frozen=True)
class FractionalCategoricalRange:
    """(#keys seen once)/#keys <= 0.4 and the top keys covering ``target`` of the rows do not
    cover all rows -> ``is_contained_in`` those keys ``>=`` the lower bound of their coverage."""

    target: float = 0.9
    max_unique_ratio: float = 0.4
    strategy: str = WILSON
    name: str = "FractionalCategoricalRange"

    def __call__(self, column: ProfiledColumn, rows: int) -> Suggestion | None:
        keys = _categorical_keys(column)
        if keys is None:
            return None
        once, ratio = _unique_ratio(keys)
        total = sum(count for _, count in keys)
        top: list[str] = []
        covered = 0
        for key, count in keys:
            if covered >= self.target * total:
                break
            top.append(key)
            covered += count
        values = _values(column, top)
        if ratio > self.max_unique_ratio or covered >= total or not values:
            return None
        p = covered / total
        bound = proportion_interval(p, total, self.strategy).lower
        why = (
            f"{len(keys)} distinct values, {once} seen once (ratio {ratio:.2f} <= {self.max_unique_ratio}); "
            f"the top {len(top)} cover {p:.4g} of {total} rows (target {self.target}); "
            f"{_intervals_text(p, total, self.strategy)}"
        )
        body = {"column": column.column, "values": values, "assertion": f">= {bound:.2f}"}
        return _suggestion(column.column, self.name, why, "is_contained_in", body)


@dataclass(frozen=True)
class NonNegativeNumbers:
    """minimum >= 0 -> ``is_non_negative``."""

    name: str = "NonNegativeNumbers"

    def __call__(self, column: ProfiledColumn, rows: int) -> Suggestion | None:
        minimum = column.minimum
        if minimum is None or not math.isfinite(minimum) or minimum < 0:
            return None
        why = f"minimum {number(minimum)!r} >= 0"
        return _suggestion(column.column, self.name, why, "is_non_negative", {"column": column.column})


def _bound_rule(
    column: str, rule: str, kind: str, op: str, value: float | None, what: str
) -> Suggestion | None:
    if value is None or not math.isfinite(value):
        return None
    shown = number(value)
    body = {"column": column, "assertion": f"{op} {shown!r}"}
    return _suggestion(column, rule, f"{what} {shown!r}", kind, body)


@dataclass(frozen=True)
class HasMin:
    """the minimum is known -> ``has_min >= minimum``."""

    name: str = "HasMin"

    def __call__(self, column: ProfiledColumn, rows: int) -> Suggestion | None:
        return _bound_rule(column.column, self.name, "has_min", ">=", column.minimum, "minimum")


@dataclass(frozen=True)
class HasMax:
    """the maximum is known -> ``has_max <= maximum``."""

    name: str = "HasMax"

    def __call__(self, column: ProfiledColumn, rows: int) -> Suggestion | None:
        return _bound_rule(column.column, self.name, "has_max", "<=", column.maximum, "maximum")


@dataclass(frozen=True)
class HasMinLength:
    """the minimum length is known -> ``has_min_length >= it``."""

    name: str = "HasMinLength"

    def __call__(self, column: ProfiledColumn, rows: int) -> Suggestion | None:
        return _bound_rule(
            column.column, self.name, "has_min_length", ">=", column.min_length, "shortest value has length"
        )


@dataclass(frozen=True)
class HasMaxLength:
    """the maximum length is known -> ``has_max_length <= it``."""

    name: str = "HasMaxLength"

    def __call__(self, column: ProfiledColumn, rows: int) -> Suggestion | None:
        return _bound_rule(
            column.column, self.name, "has_max_length", "<=", column.max_length, "longest value has length"
        )


@dataclass(frozen=True)
class HasMean:
    """mean and σ known -> ``has_mean`` between mean ± z·σ/√n (95% interval of the mean)."""

    name: str = "HasMean"

    def __call__(self, column: ProfiledColumn, rows: int) -> Suggestion | None:
        mean, sd = column.mean, column.std_dev
        if mean is None or sd is None or not (math.isfinite(mean) and math.isfinite(sd)) or rows <= 0:
            return None
        lo, hi = outward_band(mean, Z_95 * sd / math.sqrt(rows))
        why = f"mean {mean:.6g}, standard deviation {sd:.6g} over {rows} rows; 95% interval of the mean"
        body = {"column": column.column, "assertion": {"between": [lo, hi]}}
        return _suggestion(column.column, self.name, why, "has_mean", body)


@dataclass(frozen=True)
class HasStandardDeviation:
    """σ known -> ``has_standard_deviation`` between σ ± z·σ/√(2(n−1)), at least 0."""

    name: str = "HasStandardDeviation"

    def __call__(self, column: ProfiledColumn, rows: int) -> Suggestion | None:
        sd = column.std_dev
        if sd is None or not math.isfinite(sd) or rows <= 0:
            return None
        margin = Z_95 * sd / math.sqrt(2 * (rows - 1)) if rows > 1 else 0.0
        lo, hi = outward_band(sd, margin)
        why = f"standard deviation {sd:.6g} over {rows} rows; 95% interval (normal approximation)"
        body = {"column": column.column, "assertion": {"between": [max(lo, 0.0), hi]}}
        return _suggestion(column.column, self.name, why, "has_standard_deviation", body)


@dataclass(frozen=True)
class UniqueIfApproximatelyUnique:
    """complete and |1 − approxDistinct/rows| <= 0.08 -> ``is_unique``."""

    tolerance: float = 0.08
    name: str = "UniqueIfApproximatelyUnique"

    def __call__(self, column: ProfiledColumn, rows: int) -> Suggestion | None:
        distinct = column.approx_distinct
        if column.completeness != 1.0 or distinct is None or rows <= 0:
            return None
        gap = abs(1.0 - distinct / rows)
        if gap > self.tolerance:
            return None
        why = (
            f"complete, about {number(distinct)} distinct values in {rows} rows "
            f"(|1 - distinct/rows| = {gap:.3f} <= {self.tolerance}; HyperLogLog estimate)"
        )
        return _suggestion(column.column, self.name, why, "is_unique", {"column": column.column})


DEFAULT_RULES: tuple[SuggestionRule, ...] = (
    CompleteIfComplete(),
    RetainCompleteness(),
    RetainType(),
    CategoricalRange(),
    FractionalCategoricalRange(),
    NonNegativeNumbers(),
    HasMin(),
    HasMax(),
    HasMean(),
    HasStandardDeviation(),
    HasMinLength(),
    HasMaxLength(),
    UniqueIfApproximatelyUnique(),
)
"""Every rule, in the order their suggestions are listed for a column."""

DEEQU_DEFAULT_RULES: tuple[SuggestionRule, ...] = DEFAULT_RULES[:6]
"""Deequ's ``Rules.DEFAULT`` set: the completeness, type, categorical and non-negativity rules
(the statistics, length and uniqueness rules are Deequ's ``EXTENDED`` additions)."""
