"""``uniqueValues``: the set of distinct values of a string column (CDAP's unique values).

Exact and NOT bounded (one entry per distinct value): meant for fields such as the client IPs
of an access log over an interval. Both forms: on the small-batch path ``pc.unique`` over the
Arrow column, on the fused Spark path ``collect_set`` in the shared ``agg``. NULLs are skipped.
Combinable: the union of the windows' sets. Value: the sorted list of values (``[]`` for zero
values). Takes no params.

>>> import pyarrow as pa
>>> a = UniqueValues.from_arrow(pa.array(["10.0.0.2", "10.0.0.1", "10.0.0.2"]), {})
>>> a.merge(UniqueValues.from_arrow(pa.array(["10.0.0.9"]), {})).value({})
['10.0.0.1', '10.0.0.2', '10.0.0.9']
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Self

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import Column
from pyspark.sql import functions as F

from streamdq.aggregations.discrete_histogram import as_strings
from streamdq.analyzers.aggregation import Aggregation


@dataclass(frozen=True)
class UniqueValues(Aggregation):
    """The sorted distinct values (see the module docstring).

    Examples
    --------
    The Spark path's ``collect_set`` value reads into the same state as the Arrow path's:

    >>> import pyarrow as pa
    >>> spark_side = UniqueValues.from_spark([["b", "a"]], {})
    >>> spark_side == UniqueValues.from_arrow(pa.array(["a", "b", "a"]), {})
    True
    >>> spark_side.merge(UniqueValues.empty()).value({})
    ['a', 'b']
    """

    NAME = "uniqueValues"
    TYPE_TAG = "agg.UniqueValues"
    input_type = "string"
    values: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "values", tuple(sorted(set(self.values))))

    @classmethod
    def empty(cls) -> Self:
        return cls()

    def merge(self, other: Self) -> Self:
        return type(self)(self.values + other.values)

    @classmethod
    def from_arrow(cls, values: pa.Array, params: Mapping[str, Any]) -> Self:
        return cls(tuple(pc.unique(as_strings(values)).to_pylist()))

    @classmethod
    def spark_aggregations(cls, column: Column, params: Mapping[str, Any]) -> list[Column]:
        return [F.collect_set(column)]

    @classmethod
    def from_spark(cls, row: Sequence[Any], params: Mapping[str, Any]) -> Self:
        return cls(tuple(str(v) for v in row[0] or ()))

    def value(self, params: Mapping[str, Any]) -> list[str]:
        return list(self.values)

    @classmethod
    def validate_params(cls, params: Mapping[str, Any]) -> str | None:
        return f"{cls.NAME} takes no params, got {sorted(params)}" if params else None

    @classmethod
    def _unit_test_params(cls) -> Iterator[dict[str, Any]]:
        yield {}
