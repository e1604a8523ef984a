"""Profile a table with the engine for constraint suggestion (Deequ, Section 3.3).

``profile_table(df)`` runs the engine (``streamdq.engine.analysis.analyze``) in two steps: ONE
fused pass over every column (the analyzers of ``streamdq profile`` but its quartiles), then a
``Histogram`` for each String/Integral column whose estimated distinct count is at most
``histogram_threshold``; ``suggest_table(df)`` = profile (optionally of a sample) + the rules of
:mod:`streamdq.autovalidate.suggest`, which are pure Python over the ``TableProfile``. It runs on
the driver and starts Spark jobs (``TableProfile.jobs`` counts them); an empty table profiles as
zero rows. It sits above the engine, beside ``commands/profile.py``, so the suggestion rules never
import the engine (docs/architecture.md).

With a SparkSession ``spark``::

    profile = profile_table(spark.createDataFrame([(1, "a"), (2, None)], "id int, s string"))
    profile.rows  # 2
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from pyspark.sql import DataFrame

from streamdq.autovalidate.suggest.rules import (
    DEFAULT_RULES,
    INTEGRAL,
    STRING,
    Suggestion,
    SuggestionRule,
    TableProfile,
)
from streamdq.autovalidate.suggest.suggestions import (
    DEFAULT_HISTOGRAM_THRESHOLD,
    UNUSED,
    histogram_counts,
    profiled_column,
    sample,
    suggest_from_profile,
)
from streamdq.errors import ConfigError


def profile_table(
    df: DataFrame,
    *,
    columns: Sequence[str] | None = None,
    histogram_threshold: int = DEFAULT_HISTOGRAM_THRESHOLD,
) -> TableProfile:
    """The profile of ``df`` (or of ``columns``): one fused pass, then one grouped pass per
    low-cardinality String/Integral column (histogram). A ``ConfigError`` names unknown columns."""
    from pyspark.sql.types import StructType

    from streamdq.checks.kinds import make
    from streamdq.commands.profile import profile_analyzers
    from streamdq.engine.analysis import analyze

    fields = list(df.schema.fields)
    if columns is not None:
        unknown = sorted(set(columns) - {f.name for f in fields})
        if unknown:
            raise ConfigError("columns", f"unknown column(s) {', '.join(map(repr, unknown))}")
        wanted_names = set(columns)
        fields = [f for f in fields if f.name in wanted_names]
    per_column = profile_analyzers(StructType(fields))
    # the rules use no quartiles: leave out the profile's KLL sketches
    first = analyze(df, [a for group in per_column.values() for a in group if a.NAME not in UNUSED])
    size = first.metric(per_column["*"][0]).scalar
    rows = int(size) if size is not None else 0
    profiled = {
        f.name: profiled_column(
            f, {a.NAME: first.metric(a) for a in per_column[f.name] if a.NAME not in UNUSED}
        )
        for f in fields
    }
    wanted = {
        name: make("Histogram", column=name)
        for name, c in profiled.items()
        if c.data_type in (STRING, INTEGRAL)
        and c.approx_distinct is not None
        and c.approx_distinct <= histogram_threshold
    }
    jobs = first.jobs
    if wanted:
        second = analyze(df, list(wanted.values()))
        jobs += second.jobs
        for name, analyzer in wanted.items():
            histogram = histogram_counts(second.metric(analyzer))
            if histogram is not None:
                profiled[name] = replace(profiled[name], histogram=histogram)
    return TableProfile(rows=rows, columns=tuple(profiled.values()), jobs=jobs)


def suggest_table(
    df: DataFrame,
    *,
    columns: Sequence[str] | None = None,
    sample_fraction: float | None = None,
    seed: int | None = None,
    histogram_threshold: int = DEFAULT_HISTOGRAM_THRESHOLD,
    rules: Sequence[SuggestionRule] = DEFAULT_RULES,
) -> list[Suggestion]:
    """Suggested constraints for ``df`` (or ``columns`` of it, or a ``sample_fraction``)."""
    data = sample(df, sample_fraction, seed)
    return suggest_from_profile(
        profile_table(data, columns=columns, histogram_threshold=histogram_threshold), rules
    )


__all__ = ["profile_table", "suggest_table"]
