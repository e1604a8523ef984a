"""Constraint suggestion (Deequ, Section 3.3): profile a table, apply the rules, write checks.

This module is pure Python over a ``TableProfile``; the Spark side (``profile_table``, and
``suggest(df)`` = profile + rules) runs the engine, so it lives above it in
:mod:`streamdq.commands.table_profile` (``streamdq.autovalidate.suggest.profile_table`` and
``.suggest`` still name those, resolved on first use: autovalidate never imports the engine).

* ``profile_table(df)`` computes the ``TableProfile`` with the engine in two steps, as the
  paper describes: ONE fused pass over every column (the analyzers of ``streamdq profile``
  but its quartiles: size, completeness, HyperLogLog distinct count, inferred type, min,
  max, mean and standard deviation of numbers, string lengths), then a ``Histogram`` for each String/Integral column whose estimated
  distinct count is at most ``histogram_threshold`` (default 120); the plan runs one
  grouped pass per histogram column. The job count therefore never depends on the number
  of numeric or high-cardinality columns.
* ``suggest_from_profile(profile)`` applies the rules of ``rules`` (pure
  Python, no Spark); ``suggest(df)`` = profile (optionally of a sample) + rules.
* ``checks_document`` / ``render_yaml`` turn suggestions into a checks file (one check per
  column) that ``streamdq.load_checks`` reads back; the YAML names each constraint's rule
  and reason in a comment.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import yaml

from streamdq.autovalidate.suggest.rules import (
    BOOLEAN,
    DEFAULT_RULES,
    FRACTIONAL,
    INTEGRAL,
    UNKNOWN,
    ProfiledColumn,
    Suggestion,
    SuggestionRule,
    TableProfile,
    infer_type,
)
from streamdq.errors import InvalidArgument

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.types import DataType, StructField

    from streamdq.analyzers.metric import Metric

DEFAULT_HISTOGRAM_THRESHOLD = 120
UNUSED = frozenset({"ApproxQuantiles"})  # profile analyzers no rule reads
LEVELS = ("error", "warning")

__all__ = [
    "DEFAULT_HISTOGRAM_THRESHOLD",
    "ProfiledColumn",
    "Suggestion",
    "TableProfile",
    "checks_document",
    "histogram_counts",
    "profiled_column",
    "render_json",
    "render_text",
    "render_yaml",
    "sample",
    "suggest_from_profile",
]


# -- rules on a profile ----------------------------------------------------------------------


def suggest_from_profile(
    profile: TableProfile, rules: Sequence[SuggestionRule] = DEFAULT_RULES
) -> list[Suggestion]:
    """Every suggestion of every rule, column by column in profile order, rules in order."""
    out: list[Suggestion] = []
    for column in profile.columns:
        for rule in rules:
            suggestion = rule(column, profile.rows)
            if suggestion is not None:
                out.append(suggestion)
    return out


def sample(df: DataFrame, fraction: float | None, seed: int | None = None) -> DataFrame:
    """``df`` itself for ``fraction`` None or 1, else a Bernoulli sample without replacement;
    a ``ValueError`` unless 0 < fraction <= 1."""
    if fraction is None:
        return df
    if isinstance(fraction, bool) or not isinstance(fraction, int | float) or not 0 < fraction <= 1:
        raise InvalidArgument(f"sample fraction: got {fraction!r}; expected a number in (0, 1]")
    return df if fraction == 1 else df.sample(withReplacement=False, fraction=float(fraction), seed=seed)


def spark_data_type(dtype: DataType) -> str | None:
    """Deequ's type family of a Spark type; None for strings (their type is inferred)."""
    from pyspark.sql.types import (
        BooleanType,
        ByteType,
        DecimalType,
        DoubleType,
        FloatType,
        IntegerType,
        LongType,
        ShortType,
        StringType,
    )

    if isinstance(dtype, StringType):
        return None
    if isinstance(dtype, ByteType | ShortType | IntegerType | LongType):
        return INTEGRAL
    if isinstance(dtype, FloatType | DoubleType | DecimalType):
        return FRACTIONAL
    if isinstance(dtype, BooleanType):
        return BOOLEAN
    return UNKNOWN


def _scalar(metrics: dict[str, Metric], name: str) -> float | None:
    m = metrics.get(name)
    return m.scalar if m is not None else None


def profiled_column(f: StructField, metrics: dict[str, Metric]) -> ProfiledColumn:
    """A ``ProfiledColumn`` from the profile metrics of one column (failed metrics -> None)."""
    type_counts: dict[str, int] | None = None
    dt = metrics.get("DataType")
    if dt is not None and dt.ok and isinstance(dt.value, dict):
        type_counts = {k: int(v["absolute"]) for k, v in dt.value.get("values", {}).items() if k != UNKNOWN}
    native = spark_data_type(f.dataType)
    data_type = native if native is not None else infer_type(type_counts or {})
    return ProfiledColumn(
        column=f.name,
        data_type=data_type,
        type_inferred=native is None,
        completeness=_scalar(metrics, "Completeness"),
        approx_distinct=_scalar(metrics, "ApproxCountDistinct"),
        minimum=_scalar(metrics, "Minimum"),
        maximum=_scalar(metrics, "Maximum"),
        mean=_scalar(metrics, "Mean"),
        std_dev=_scalar(metrics, "StandardDeviation"),
        min_length=_scalar(metrics, "MinLength"),
        max_length=_scalar(metrics, "MaxLength"),
        type_counts=type_counts,
    )


def histogram_counts(m: Metric) -> dict[str, int] | None:
    """Key -> count of a successful, exact and complete Histogram metric, else None."""
    if not m.ok or m.approximate or not isinstance(m.value, dict):
        return None
    values = m.value.get("values", {})
    if len(values) != m.value.get("number_of_bins"):
        return None
    return {str(k): int(v["absolute"]) for k, v in values.items()}


# -- checks files ---------------------------------------------------------------------------


def _by_column(suggestions: Iterable[Suggestion]) -> dict[str, list[Suggestion]]:
    out: dict[str, list[Suggestion]] = {}
    for s in suggestions:
        out.setdefault(s.column, []).append(s)
    return out


def _description(column: str) -> str:
    return f"suggested constraints for column {column}"


def _check_level(level: str) -> str:
    if level not in LEVELS:
        raise InvalidArgument(f"level: got {level!r}; expected one of {', '.join(LEVELS)}")
    return level


def checks_document(
    suggestions: Iterable[Suggestion], dataset: str | None = None, *, level: str = "error"
) -> dict[str, Any]:
    """A checks document ``{dataset?, checks}`` (docs/checks.md): one check per column."""
    doc: dict[str, Any] = {} if dataset is None else {"dataset": dataset}
    doc["checks"] = [
        {
            "description": _description(column),
            "level": _check_level(level),
            "constraints": [dict(s.constraint) for s in group],
        }
        for column, group in _by_column(suggestions).items()
    ]
    return doc


def _comment(text: str) -> str:
    return "# " + " ".join(text.split())


def _quoted(text: str) -> str:
    """A double-quoted scalar (a JSON string is a valid YAML double-quoted scalar)."""
    return json.dumps(text, ensure_ascii=False)


def _flow(data: Any) -> str:
    return yaml.safe_dump(
        data, default_flow_style=True, width=1 << 30, allow_unicode=True, sort_keys=False
    ).strip()


def render_yaml(
    suggestions: Iterable[Suggestion],
    dataset: str | None = None,
    *,
    level: str = "error",
    header: Sequence[str] = (),
) -> str:
    """A YAML checks file (one check per column) with each constraint preceded by a comment
    ``# <rule>: <why>``; ``header`` lines become comments at the top."""
    lines = [_comment(h) for h in header]
    if dataset is not None:
        lines.append(f"dataset: {_quoted(dataset)}")
    groups = _by_column(suggestions)
    lines.append("checks:" if groups else "checks: []")
    for column, group in groups.items():
        lines.append(f"  - description: {_quoted(_description(column))}")
        lines.append(f"    level: {_check_level(level)}")
        lines.append("    constraints:")
        for s in group:
            lines.append("      " + _comment(f"{s.rule}: {s.why}"))
            lines.append(f"      - {_flow(dict(s.constraint))}")
    return "\n".join(lines) + "\n"


def render_json(
    suggestions: Iterable[Suggestion], dataset: str | None = None, *, level: str = "error"
) -> str:
    """The checks document as JSON (JSON has no comments: ``render_text`` explains)."""
    return json.dumps(checks_document(suggestions, dataset, level=level), indent=2, allow_nan=False) + "\n"


def render_text(suggestions: Iterable[Suggestion]) -> str:
    """A readable list: per suggestion the column, rule, reason and builder call."""
    lines = []
    for s in suggestions:
        lines.append(f"{s.column}: {s.rule}\n    why:  {s.why}\n    code: {s.code}")
    return "\n".join(lines) + ("\n" if lines else "no suggestions\n")
