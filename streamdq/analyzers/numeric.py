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


def sketch_value(schema: StructType, column: str) -> Column:
    """``column`` as DOUBLE with NaN and +-Infinity turned into NaN: the input of a KLL sketch,
    which skips NaN (DataSketches' rule, kept by Spark's ``kll_sketch_agg_double`` and the
    Arrow path alike), so the sketch sees exactly ``finite_value``'s non-NULL values.

    ``x + x * 0.0`` is ``x`` for a finite ``x`` (``-0.0`` included) and NaN for NaN and
    +-Infinity (``Infinity * 0.0`` is NaN). Why not ``finite_value``'s ``CASE WHEN``: Spark
    evaluates a sketch aggregate's input without generated code, row by row, and there the
    ``CASE WHEN`` of two comparisons cost 0.1-1.3 s per 10M rows more than a plain column
    (bench/engine, the KLL of the standard suite; the high figure in some JVM launches), the
    arithmetic form 0.0-0.1 s. Integral and decimal columns give their plain cast.

    >>> from streamdq.spark import get_spark
    >>> df = get_spark().createDataFrame(
    ...     [(1.0, 1), (-0.0, 2), (float("inf"), 3), (float("nan"), 4), (None, None)], "x double, n long"
    ... )
    >>> [tuple(r) for r in df.select(sketch_value(df.schema, "x"), sketch_value(df.schema, "n")).collect()]
    [(1.0, 1.0), (-0.0, 2.0), (nan, 3.0), (nan, 4.0), (None, None)]
    """
    value = col(column).cast("double")
    if not can_be_non_finite(schema, column):
        return value
    return value + value * F.lit(0.0)


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
