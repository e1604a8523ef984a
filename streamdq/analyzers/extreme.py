"""The extreme of one per-row value: the shared piece of Minimum, Maximum, MinLength, MaxLength.

Each of the four is ``min`` or ``max`` of a per-row value over the rows in scope (rows
outside ``where`` are NULL, so skipped): Minimum and Maximum the finite value of a numeric
column (``numeric.finite_value``), MinLength and MaxLength the length of a string column
(``length.LengthExtreme``). A subclass names its aggregate and its state, ``"min"`` with
``MinState`` or ``"max"`` with ``MaxState``, and says how its per-row value is computed
(``value``); the rest is written here once.

Runs in the fused scan as one ``min``/``max`` aggregate (and on the Arrow path as the same
reduction on the driver); states merge by taking the extreme (``basic_states.ExtremeState``,
Spark's NaN and signed-zero ordering). No value in scope (empty input, all NULL, or all
filtered) -> Failure (empty).

>>> from streamdq.analyzers.maximum import Maximum
>>> m = Maximum("x")
>>> batches = [m.state_from([4.0], 0), m.state_from([None], 0), m.state_from([9.5], 0)]
>>> total = m.empty_state()
>>> for state in batches:
...     total = total.merge(state)
>>> m.metric(total).value
9.5
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from pyspark.sql import Column
from pyspark.sql.types import StructType

from streamdq.analyzers.base import ScanShareableAnalyzer
from streamdq.analyzers.basic_states import ExtremeState
from streamdq.analyzers.metric import Metric
from streamdq.analyzers.numeric import NumericColumnAnalyzer
from streamdq.analyzers.row_aggregate import RowAggregate, of
from streamdq.analyzers.state import State


@dataclass(frozen=True)
class ExtremeAnalyzer(ScanShareableAnalyzer):
    """``AGGREGATE`` (min or max) of ``value(schema)`` in scope, kept as a ``STATE``."""

    AGGREGATE: ClassVar[Literal["min", "max"]]
    STATE: ClassVar[type[ExtremeState]]  # MinState for "min", MaxState for "max"

    @abstractmethod
    def value(self, schema: StructType) -> Column:
        """The per-row value as DOUBLE, NULL where it is skipped (out of scope, NULL input)."""

    def row_aggregations(self, schema: StructType) -> list[RowAggregate]:
        return [of(self.AGGREGATE, self.value(schema))]

    def state_from(self, row: Sequence[Any], offset: int) -> State:
        value = row[offset]
        return self.STATE(None if value is None else float(value))

    def empty_state(self) -> State:
        return self.STATE.empty()

    def metric(self, state: State) -> Metric:
        assert isinstance(state, self.STATE)
        if state.value is None:
            return self.empty_failure()
        return self.ok(state.value)


@dataclass(frozen=True)
class ValueExtreme(NumericColumnAnalyzer, ExtremeAnalyzer):
    """The extreme of a numeric column's finite values (Minimum, Maximum). Numeric columns only.

    Examples
    --------
    A subclass names only its aggregate and state (``minimum.Minimum``):

    >>> from streamdq.analyzers.minimum import Minimum
    >>> Minimum.AGGREGATE, Minimum.STATE.__name__, Minimum("x").input_columns()
    ('min', 'MinState', ('x',))
    """
