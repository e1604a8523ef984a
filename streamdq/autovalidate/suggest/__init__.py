"""Constraint suggestion (Deequ, Section 3.3): one table profile -> suggested constraints.

* ``rules``: the suggestion rules on a ``ProfiledColumn`` (``DEFAULT_RULES``).
* ``suggestions``: ``suggest_from_profile`` and the checks file it writes (``render_yaml``).

Pure Python, no Spark: profiling a table runs the engine, so ``profile_table(df)`` and
``suggest(df)`` live above it in :mod:`streamdq.commands.table_profile`; the names
``streamdq.autovalidate.suggest.profile_table`` and ``.suggest`` still resolve to them on first use
(autovalidate never imports the engine).
"""

from __future__ import annotations

import importlib
from typing import Any

from streamdq.autovalidate.suggest.suggestions import (
    DEFAULT_HISTOGRAM_THRESHOLD,
    ProfiledColumn,
    Suggestion,
    TableProfile,
    checks_document,
    histogram_counts,
    profiled_column,
    render_json,
    render_text,
    render_yaml,
    sample,
    spark_data_type,
    suggest_from_profile,
)


def __getattr__(name: str) -> Any:
    # compatibility: the engine-running functions moved up to streamdq.commands.table_profile
    if name in ("profile_table", "suggest"):
        module = importlib.import_module("streamdq.commands.table_profile")
        return getattr(module, "suggest_table" if name == "suggest" else name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
    "spark_data_type",
    "suggest_from_profile",
]
