"""ColumnCount: the number of data columns of the input (Deequ's ColumnCount).

The count is taken from the schema the analyzer runs on; the engine's own metadata columns
(``_streamdq_*``: decode errors, raw payload, source coordinates) are not data and are not
counted. It is a schema metric, as in Deequ: the count rides in the fused scan as a
``constant`` row aggregate (the same value on both engine paths, for any number of rows),
so an input with NO rows still gives its column count. States merge by the maximum (a
schema that gained a column in a later microbatch counts the wider schema at window and
total scope). ``where`` is accepted for symmetry and does not change the value. Only the
empty state (no input seen at all: an empty window) is an empty Failure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Self

from pyspark.sql.types import StructType

from streamdq import metadata_columns
from streamdq.analyzers.base import ScanShareableAnalyzer
from streamdq.analyzers.metric import Metric
from streamdq.analyzers.row_aggregate import RowAggregate
from streamdq.analyzers.state import JsonState, State


def data_columns(schema: StructType) -> list[str]:
    """The schema's column names without the engine's ``_streamdq_*`` metadata columns."""
    return metadata_columns.data_columns(schema.fieldNames())


@dataclass(frozen=True)
class ColumnCountState(JsonState):
    """The number of data columns seen (0 = no row seen yet); merges by the maximum.

    Examples
    --------
    >>> ColumnCountState(5).merge(ColumnCountState(7)).merge(ColumnCountState.empty())
    ColumnCountState(columns=7)
    """

    TYPE_TAG = "ColumnCount"
    columns: int = 0

    @classmethod
    def empty(cls) -> Self:
        return cls(0)

    def merge(self, other: Self) -> Self:
        return type(self)(max(self.columns, other.columns))


@dataclass(frozen=True)
class ColumnCount(ScanShareableAnalyzer):
    """Number of data columns of the input (dataset level).

    Examples
    --------
    The scan's row carries the number of data columns of the batch's schema:

    >>> c = ColumnCount()
    >>> c.metric(c.state_from([4], 0).merge(c.empty_state())).value
    4.0
    """

    NAME = "ColumnCount"
    where: str | None = None

    def row_aggregations(self, schema: StructType) -> list[RowAggregate]:
        return [RowAggregate("constant", (), len(data_columns(schema)))]

    def state_from(self, row: Sequence[Any], offset: int) -> State:
        value = row[offset]
        return ColumnCountState(0 if value is None else int(value))

    def empty_state(self) -> State:
        return ColumnCountState.empty()

    def metric(self, state: State) -> Metric:
        assert isinstance(state, ColumnCountState)
        if state.columns == 0:
            return self.empty_failure()
        return self.ok(float(state.columns))
