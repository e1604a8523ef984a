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
from dataclasses import replace
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
    """The kinds this module adds (not yet registered), each with its example from ``EXAMPLES``."""
    return [replace(kind, example=EXAMPLES.get(kind.name, "")) for kind in _kinds()]


def _kinds() -> list[ConstraintKind]:
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


# -- examples (ConstraintKind.example; run by tests/unit/test_doctests_constraint_kinds.py) --

EXAMPLES: dict[str, str] = {
    "has_range": """\
>>> c = constraint_from_dict({"has_range": {"column": "temperature", "assertion": "<= 40"}})
>>> c.analyzer.to_spec()
{'analyzer': 'Range', 'column': 'temperature'}
>>> c.judge(c.analyzer.ok(25.0))
('Success', None)
>>> c.judge(c.analyzer.ok(60.0))
('Failure', 'Value: 60.0 does not meet the constraint requirement! (expected <= 40.0)')
""",
    "has_interquartile_range": """\
>>> c = constraint_from_dict({"has_interquartile_range": {"column": "latency", "assertion": "< 100"}})
>>> c.analyzer.to_spec()
{'analyzer': 'InterquartileRange', 'column': 'latency', 'k': 200}
>>> c.judge(c.analyzer.ok(35.0))
('Success', None)
>>> c.judge(c.analyzer.ok(250.0))
('Failure', 'Value: 250.0 does not meet the constraint requirement! (expected < 100.0)')
""",
    "has_exact_quantile": """\
>>> c = constraint_from_dict({"has_exact_quantile": {"column": "latency", "quantile": 0.5, "assertion": "< 200"}})
>>> c.analyzer.to_spec()
{'analyzer': 'ExactQuantile', 'column': 'latency', 'quantile': 0.5}
>>> c.judge(c.analyzer.ok(120.0))
('Success', None)
>>> c.judge(c.analyzer.ok(480.0))
('Failure', 'Value: 480.0 does not meet the constraint requirement! (expected < 200.0)')
""",
    "has_column_count": """\
>>> c = constraint_from_dict({"has_column_count": {"assertion": "== 12"}})
>>> c.analyzer.to_spec()
{'analyzer': 'ColumnCount'}
>>> c.judge(c.analyzer.ok(12.0))
('Success', None)
>>> c.judge(c.analyzer.ok(11.0))
('Failure', 'Value: 11.0 does not meet the constraint requirement! (expected == 12.0)')
""",
    "has_variance": """\
>>> c = constraint_from_dict({"has_variance": {"column": "amount", "assertion": "< 25"}})
>>> c.analyzer.to_spec()
{'analyzer': 'Variance', 'column': 'amount'}
>>> c.judge(c.analyzer.ok(4.0))
('Success', None)
>>> c.judge(c.analyzer.ok(100.0))
('Failure', 'Value: 100.0 does not meet the constraint requirement! (expected < 25.0)')
""",
    "has_skewness": """\
>>> c = constraint_from_dict({"has_skewness": {"column": "amount", "assertion": {"between": [-1, 1]}}})
>>> c.analyzer.to_spec()
{'analyzer': 'Skewness', 'column': 'amount'}
>>> c.judge(c.analyzer.ok(0.3))
('Success', None)
>>> c.judge(c.analyzer.ok(2.5))
('Failure', 'Value: 2.5 does not meet the constraint requirement! (expected between -1.0 and 1.0)')
""",
    "has_kurtosis": """\
>>> c = constraint_from_dict({"has_kurtosis": {"column": "amount", "assertion": "< 3"}})
>>> c.analyzer.to_spec()
{'analyzer': 'Kurtosis', 'column': 'amount'}
>>> c.judge(c.analyzer.ok(0.5))
('Success', None)
>>> c.judge(c.analyzer.ok(7.0))
('Failure', 'Value: 7.0 does not meet the constraint requirement! (expected < 3.0)')
""",
    "has_zeros_count": """\
>>> c = constraint_from_dict({"has_zeros_count": {"column": "quantity", "assertion": "== 0"}})
>>> c.analyzer.to_spec()
{'analyzer': 'ZerosCount', 'column': 'quantity'}
>>> c.judge(c.analyzer.ok(0.0))
('Success', None)
>>> c.judge(c.analyzer.ok(4.0))
('Failure', 'Value: 4.0 does not meet the constraint requirement! (expected == 0.0)')
""",
    "has_duplicate_row_count": """\
>>> c = constraint_from_dict({"has_duplicate_row_count": {"columns": ["order_id"], "assertion": "== 0"}})
>>> c.analyzer.to_spec()
{'analyzer': 'DuplicateRowCount', 'columns': ['order_id']}
>>> c.judge(c.analyzer.ok(0.0))
('Success', None)
>>> c.judge(c.analyzer.ok(2.0))
('Failure', 'Value: 2.0 does not meet the constraint requirement! (expected == 0.0)')
>>> constraint_from_dict({"has_duplicate_row_count": {"assertion": "== 0"}}).analyzer.to_spec()
{'analyzer': 'DuplicateRowCount', 'columns': []}
""",
}
