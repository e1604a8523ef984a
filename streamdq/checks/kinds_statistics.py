"""The rest of Deequ's constraint vocabulary: ranges, quantiles, moments and counts.

Registered by ``streamdq.checks.kinds`` (``register()``), each kind judging one analyzer:

============================  ====================  =======================================
kind                          analyzer              parameters (besides assertion, where)
============================  ====================  =======================================
``has_range``                 Range                 column
``has_interquartile_range``   InterquartileRange    column
``has_exact_quantile``        ExactQuantile         column, quantile (not mergeable: verify
                                                    and batch scope only)
``has_column_count``          ColumnCount           (none)
``has_variance``              Variance              column
``has_skewness``              Skewness              column
``has_kurtosis``              Kurtosis              column
``has_zeros_count``           ZerosCount            column
``has_duplicate_row_count``   DuplicateRowCount     columns (optional: all columns)
============================  ====================  =======================================

Every one needs an assertion (there is no natural default); the analyzers carry Deequ's
semantics (population moments, interpolated quantiles, NULL handling, empty-input failures).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from streamdq.analyzers.base import Analyzer
from streamdq.checks.vocabulary import ConstraintKind, Param, register_constraint_kind

COLUMN = Param("column", "column")


def _make(name: str, /, **kwargs: Any) -> Analyzer:
    from streamdq.checks.kinds import make

    return make(name, **kwargs)


def _column_kind(kind: str, analyzer: str, doc: str) -> ConstraintKind:
    return ConstraintKind(
        kind,
        (COLUMN,),
        lambda p, w: _make(analyzer, column=p["column"], where=w),
        default_assertion=None,
        doc=doc,
    )


def _duplicates(p: Mapping[str, Any], where: str | None) -> Analyzer:
    columns = tuple(p.get("columns") or ())
    return _make("DuplicateRowCount", columns=columns or None, where=where)


def kinds() -> list[ConstraintKind]:
    """The kinds this module adds (not yet registered)."""
    return [
        _column_kind("has_range", "Range", "max - min of a numeric column"),
        _column_kind(
            "has_interquartile_range",
            "InterquartileRange",
            "Q3 - Q1 (KLL sketch, interpolated; exact while the sketch holds every value)",
        ),
        ConstraintKind(
            "has_exact_quantile",
            (COLUMN, Param("quantile", "fraction", doc="the quantile, 0..1")),
            lambda p, w: _make("ExactQuantile", column=p["column"], quantile=p["quantile"], where=w),
            default_assertion=None,
            doc="exact interpolated quantile (not mergeable: verify and batch scope only)",
        ),
        ConstraintKind(
            "has_column_count",
            (),
            lambda p, w: _make("ColumnCount", where=w),
            default_assertion=None,
            doc="number of data columns",
        ),
        _column_kind("has_variance", "Variance", "population variance"),
        _column_kind("has_skewness", "Skewness", "population skewness (0 for a constant column)"),
        _column_kind("has_kurtosis", "Kurtosis", "excess kurtosis (0 for a constant column)"),
        _column_kind("has_zeros_count", "ZerosCount", "number of values equal to 0"),
        ConstraintKind(
            "has_duplicate_row_count",
            (Param("columns", "columns", required=False, doc="default: all columns"),),
            _duplicates,
            default_assertion=None,
            doc="rows whose (columns) value occurs more than once (every copy counted)",
        ),
    ]


def register() -> None:
    """Add the kinds to the vocabulary (called once by ``streamdq.checks.kinds``)."""
    for kind in kinds():
        register_constraint_kind(kind)
