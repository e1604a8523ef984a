"""Shared parts of MinLength / MaxLength: string length with Deequ's ``null_behavior``.

``null_behavior``: "ignore" (default; NULL values are skipped), "empty_string" (NULL has
length 0), "fail" (NULL becomes -Double.MaxValue for MinLength and +Double.MaxValue for
MaxLength, so any min/max assertion on it fails). Rows outside the ``where`` scope are
always skipped. String columns only.

``LengthExtreme`` is the extreme (``extreme.ExtremeAnalyzer``) of that length; MinLength
and MaxLength name only their aggregate and state.

>>> from pyspark.sql.types import LongType, StringType, StructField, StructType
>>> from streamdq.analyzers.max_length import MaxLength
>>> schema = StructType([StructField("s", StringType()), StructField("n", LongType())])
>>> MaxLength("s", null_behavior="zero").preconditions(schema)
"MaxLength: null_behavior 'zero' is not one of ignore, empty_string, fail"
>>> MaxLength("n").preconditions(schema)
"column 'n' is LongType(), MaxLength needs a string type"
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from streamdq.analyzers.base import Analyzer, col, conditional
from streamdq.analyzers.extreme import ExtremeAnalyzer
from streamdq.analyzers.numeric import string_precondition

NULL_BEHAVIORS = ("ignore", "empty_string", "fail")
DOUBLE_MAX = sys.float_info.max


def length_precondition(
    analyzer: Analyzer, schema: StructType, column: str, null_behavior: str
) -> str | None:
    if null_behavior not in NULL_BEHAVIORS:
        return f"{analyzer.NAME}: null_behavior {null_behavior!r} is not one of {', '.join(NULL_BEHAVIORS)}"
    return string_precondition(analyzer, schema, column)


def length_value(column: str, null_behavior: str, null_value: float, where: str | None) -> Column:
    """Length of ``column`` as double (NULL handled per ``null_behavior``), NULL out of scope."""
    c = col(column)
    length = F.length(c).cast("double")
    if null_behavior == "empty_string":
        length = F.coalesce(length, F.lit(0.0))
    elif null_behavior == "fail":
        length = F.when(c.isNull(), F.lit(null_value)).otherwise(length)
    return conditional(length, where)


@dataclass(frozen=True)
class LengthExtreme(ExtremeAnalyzer):
    """The extreme of a string column's lengths (MinLength, MaxLength), as a float.

    Examples
    --------
    A subclass names only its aggregate and state (``min_length.MinLength``):

    >>> from streamdq.analyzers.min_length import MinLength
    >>> MinLength.AGGREGATE, MinLength.STATE.__name__, MinLength("s").null_behavior
    ('min', 'MinState', 'ignore')
    """

    column: str
    null_behavior: str = "ignore"
    where: str | None = None

    def preconditions(self, schema: StructType) -> str | None:
        return super().preconditions(schema) or length_precondition(
            self, schema, self.column, self.null_behavior
        )

    def value(self, schema: StructType) -> Column:
        # "fail": a NULL is the value no assertion on this extreme accepts
        failing = DOUBLE_MAX if self.AGGREGATE == "max" else -DOUBLE_MAX
        return length_value(self.column, self.null_behavior, failing, self.where)
