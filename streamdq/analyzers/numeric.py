"""Shared precondition helpers for analyzers that need numeric or string columns.

Pure driver-side checks against the DataFrame schema; they return the failure reason
(naming the analyzer, the column and its actual type) or None.
"""

from __future__ import annotations

from pyspark.sql.types import StructType

from streamdq.analyzers.base import Analyzer, field_type, is_numeric, is_string


def numeric_precondition(analyzer: Analyzer, schema: StructType, column: str) -> str | None:
    """None when ``column`` is numeric (int, long, float, double, decimal, ...)."""
    dtype = field_type(schema, column)
    if is_numeric(dtype):
        return None
    return f"column {column!r} is {dtype}, {analyzer.NAME} needs a numeric type"


def string_precondition(analyzer: Analyzer, schema: StructType, column: str) -> str | None:
    """None when ``column`` is a string column."""
    dtype = field_type(schema, column)
    if is_string(dtype):
        return None
    return f"column {column!r} is {dtype}, {analyzer.NAME} needs a string type"
