"""Shared helpers for analyzers that need numeric or string columns.

Preconditions are pure driver-side checks against the DataFrame schema; they return the
failure reason (naming the analyzer, the column and its actual type) or None.

``finite_value`` is the ONE non-finite policy of the value analyzers (docs/non-finite.md):
Sum, Mean, Minimum, Maximum, StandardDeviation, Variance, Skewness, Kurtosis, Correlation,
RatioOfSums and ApproxQuantile(s) read a column through it, so a NaN, +Infinity or
-Infinity is treated exactly like a NULL (skipped) and is counted instead by the
``NonFinite`` analyzer (check kind ``has_no_non_finite``). It is a per-row Spark
expression, so the fused Spark path and the Arrow small-batch path (which projects the
same expression) see the same values.

``NumericColumnAnalyzer`` is the base of the analyzers of ONE such column (Sum, Mean,
Minimum, Maximum, Range and the moments): its ``column`` and ``where``, the numeric
precondition and ``value``, the column read through ``finite_value`` in scope.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import DoubleType, FloatType, StructType

from streamdq.analyzers.base import (
    Analyzer,
    ScanShareableAnalyzer,
    col,
    conditional,
    field_type,
    is_numeric,
    is_string,
)

DOUBLE_MAX = 1.7976931348623157e308


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


def can_be_non_finite(schema: StructType, column: str) -> bool:
    """True when ``column`` is FLOAT or DOUBLE, the only types that hold NaN and infinities."""
    return isinstance(field_type(schema, column), FloatType | DoubleType)


def is_finite(value: Column) -> Column:
    """TRUE for a finite double, FALSE for NaN and +-Infinity, NULL for NULL.

    Spark orders NaN above +Infinity, so one range test covers all three.
    """
    return (value >= F.lit(-DOUBLE_MAX)) & (value <= F.lit(DOUBLE_MAX))


def finite_value(schema: StructType, column: str) -> Column:
    """``column`` as DOUBLE with NaN and +-Infinity turned into NULL (the non-finite policy).

    Integral and decimal columns cannot hold a non-finite value: their plain cast is
    returned, so the plan's expressions stay as small as before for them.
    """
    value = col(column).cast("double")
    if not can_be_non_finite(schema, column):
        return value
    return F.when(is_finite(value), value)


@dataclass(frozen=True)
class NumericColumnAnalyzer(ScanShareableAnalyzer):
    """An analyzer of one numeric column's finite values in scope, read through the non-finite
    policy: Sum and Mean (``sum.SumAndCount``), Minimum and Maximum (``extreme.ValueExtreme``),
    Range, and the moments (``moments.MomentsAnalyzer``).

    Its fields are ``column`` and ``where``; a column that is not numeric fails the
    precondition (naming its type); ``value`` is the per-row input of its aggregates.

    Examples
    --------
    >>> from pyspark.sql.types import StringType, StructField, StructType
    >>> from streamdq.analyzers.range import Range
    >>> Range("name").preconditions(StructType([StructField("name", StringType())]))
    "column 'name' is StringType(), Range needs a numeric type"
    """

    column: str
    where: str | None = None

    def preconditions(self, schema: StructType) -> str | None:
        return super().preconditions(schema) or numeric_precondition(self, schema, self.column)

    def value(self, schema: StructType) -> Column:
        """The column as DOUBLE, NULL where it is non-finite, NULL or out of scope."""
        return conditional(finite_value(schema, self.column), self.where)
