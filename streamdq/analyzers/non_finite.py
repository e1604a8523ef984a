"""NonFinite: the number of rows in scope whose numeric column is NaN, +Infinity or -Infinity.

The counting half of the non-finite policy (docs/non-finite.md): the value analyzers
(Sum, Mean, Minimum, Maximum, the moments, Correlation, RatioOfSums, ApproxQuantile) skip
a non-finite value as if it were NULL (``numeric.finite_value``), and this analyzer counts
what they skipped, so a NaN is never dropped silently. Check kinds: ``has_no_non_finite``
(default assertion ``== 0``) and ``has_non_finite_count``.

Runs in the fused scan as one conditional count (the Arrow path projects the same
predicate); states merge by addition (``NumMatches``). Integral and decimal columns hold no
non-finite value: the count is 0. Empty input, an all-NULL column or a filter keeping
nothing give 0.0 (a success, like ZerosCount). NULL is not a non-finite value. Numeric
columns only.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from streamdq.analyzers.base import col, in_scope
from streamdq.analyzers.matches import MatchCount
from streamdq.analyzers.numeric import can_be_non_finite, is_finite, numeric_precondition
from streamdq.analyzers.row_aggregate import RowAggregate, count_if


@dataclass(frozen=True)
class NonFinite(MatchCount):
    """Count of NaN / +Infinity / -Infinity values in scope (NULL is not counted).

    Examples
    --------
    A batch's state is the count of NaN and +-Infinity values in scope; states add:

    >>> a = NonFinite("temperature")
    >>> a.metric(a.state_from([1], 0).merge(a.state_from([2], 0))).value
    3.0
    """

    NAME = "NonFinite"
    column: str
    where: str | None = None

    def preconditions(self, schema: StructType) -> str | None:
        return super().preconditions(schema) or numeric_precondition(self, schema, self.column)

    def row_aggregations(self, schema: StructType) -> list[RowAggregate]:
        if not can_be_non_finite(schema, self.column):
            return [count_if(F.lit(False))]
        value = col(self.column).cast("double")
        return [count_if(in_scope(self.where) & value.isNotNull() & ~is_finite(value))]
