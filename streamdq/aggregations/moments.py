"""``average`` and ``standardDeviation`` of a numeric column (CDAP's library), on the moments state.

Both keep the analyzers' ``MomentsState`` (count, mean, m2; merged with Chan et al.'s pairwise
formulas), so they are exact up to floating-point rounding and combinable: the average or
standard deviation over any range of windows is the metric of the merged state. (CDAP serves the
standard deviation as a non-combinable time series because its states were plain numbers; the
moments make it combinable here, and every aggregation is also served as a time series.)

Non-finite values (NaN, +-Infinity) are skipped like NULL, as by the ``Mean`` and
``StandardDeviation`` analyzers (docs/non-finite.md). Both forms: numpy over the Arrow column on
the small-batch path, ``count``/``avg``/``var_pop`` in the fused Spark ``agg``. Zero values ->
the metric fails as empty. Takes no params. The standard deviation is the population one.

>>> import pyarrow as pa
>>> s = Average.from_arrow(pa.array([1, 2, 3]), {}).merge(Average.from_arrow(pa.array([6.0]), {}))
>>> s.value({})
3.0
>>> StandardDeviation.from_arrow(pa.array([2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]), {}).value({})
2.0
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Self

import numpy as np
import pyarrow as pa
from pyspark.sql import Column
from pyspark.sql import functions as F

from streamdq.analyzers.aggregation import Aggregation, EmptyInput
from streamdq.analyzers.basic_states import MomentsState

DOUBLE_MAX = 1.7976931348623157e308


def finite_floats(values: pa.Array) -> np.ndarray:
    """The values as float64 with NaN and infinities dropped (the non-finite policy)."""
    if pa.types.is_dictionary(values.type):
        values = values.dictionary_decode()
    x = np.asarray(values.to_numpy(zero_copy_only=False), dtype=np.float64)
    return x[np.isfinite(x)]


def finite_double(column: Column) -> Column:
    """``column`` as DOUBLE, NULL where it is NaN or infinite (Spark side of ``finite_floats``)."""
    x = column.cast("double")
    return F.when((x >= F.lit(-DOUBLE_MAX)) & (x <= F.lit(DOUBLE_MAX)), x)


@dataclass(frozen=True)
class _MomentsAggregation(Aggregation):
    """Count, mean and m2 of the finite values (``MomentsState`` of order 2)."""

    input_type = "numeric"
    moments: MomentsState = field(default_factory=MomentsState)

    @classmethod
    def empty(cls) -> Self:
        return cls()

    def merge(self, other: Self) -> Self:
        return type(self)(self.moments.merge(other.moments))

    @classmethod
    def from_arrow(cls, values: pa.Array, params: Mapping[str, Any]) -> Self:
        x = finite_floats(values)
        if x.size == 0:
            return cls()
        with np.errstate(over="ignore", invalid="ignore"):  # overflow poisons the moments, as in Spark
            mean = float(x.sum()) / x.size
            d = x - mean
            m2 = float(np.dot(d, d))
        return cls(MomentsState(int(x.size), mean, m2, order=2))

    @classmethod
    def spark_aggregations(cls, column: Column, params: Mapping[str, Any]) -> list[Column]:
        x = finite_double(column)
        return [F.count(x), F.avg(x), F.var_pop(x)]

    @classmethod
    def from_spark(cls, row: Sequence[Any], params: Mapping[str, Any]) -> Self:
        return cls(MomentsState.from_spark(row[0], row[1], row[2], None, None, order=2))

    def payload(self) -> bytes:
        return self.moments.payload()

    @classmethod
    def from_payload(cls, payload: bytes, version: int) -> Self:
        return cls(MomentsState.from_payload(payload, MomentsState.FORMAT_VERSION))

    @classmethod
    def validate_params(cls, params: Mapping[str, Any]) -> str | None:
        return f"{cls.metric_name()} takes no params, got {sorted(params)}" if params else None

    @classmethod
    def _unit_test_params(cls) -> Iterator[dict[str, Any]]:
        yield {}


@dataclass(frozen=True)
class Average(_MomentsAggregation):
    """The mean of the finite values.

    Examples
    --------
    The Spark path's (count, avg, var_pop) and the Arrow path's values give one state:

    >>> import pyarrow as pa
    >>> arrow_side = Average.from_arrow(pa.array([1.0, float("nan"), 3.0]), {})  # NaN skipped
    >>> arrow_side.merge(Average.from_spark([2, 5.0, 1.0], {})).value({})
    3.5
    >>> Average.empty().value({})
    Traceback (most recent call last):
    ...
    streamdq.analyzers.aggregation.EmptyInput: no finite value
    """

    NAME = "average"
    TYPE_TAG = "agg.Average"

    def value(self, params: Mapping[str, Any]) -> float:
        if self.moments.n == 0:
            raise EmptyInput("no finite value")
        return float(self.moments.mean)


@dataclass(frozen=True)
class StandardDeviation(_MomentsAggregation):
    """The population standard deviation of the finite values.

    Examples
    --------
    Two windows merged give the population standard deviation of all their values:

    >>> import pyarrow as pa
    >>> first = StandardDeviation.from_arrow(pa.array([2.0, 4.0, 4.0, 4.0]), {})
    >>> first.merge(StandardDeviation.from_arrow(pa.array([5.0, 5.0, 7.0, 9.0]), {})).value({})
    2.0
    """

    NAME = "standardDeviation"
    TYPE_TAG = "agg.StandardDeviation"

    def value(self, params: Mapping[str, Any]) -> float:
        if self.moments.n == 0:
            raise EmptyInput("no finite value")
        return math.sqrt(max(self.moments.m2, 0.0) / self.moments.n)
