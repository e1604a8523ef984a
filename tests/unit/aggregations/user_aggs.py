"""Aggregations as a user writes them, for the tests (importable as
``tests.unit.aggregations.user_aggs:<Class>``)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import Column
from pyspark.sql import functions as F

from streamdq.aggregations import Aggregation, EmptyInput


@dataclass(frozen=True)
class SparkOnlyTotal(Aggregation):
    """Sum and count of a numeric column, with a Spark form only (the large-batch path)."""

    NAME = "sparkTotal"
    TYPE_TAG = "test.SparkOnlyTotal"
    input_type = "numeric"
    total: float = 0.0
    count: int = 0

    @classmethod
    def empty(cls) -> SparkOnlyTotal:
        return cls()

    def merge(self, other: SparkOnlyTotal) -> SparkOnlyTotal:
        return SparkOnlyTotal(self.total + other.total, self.count + other.count)

    @classmethod
    def spark_aggregations(cls, column: Column, params: Mapping[str, Any]) -> list[Column]:
        return [F.sum(column.cast("double")), F.count(column)]

    @classmethod
    def from_spark(cls, row: Sequence[Any], params: Mapping[str, Any]) -> SparkOnlyTotal:
        return cls(float(row[0] or 0.0), int(row[1] or 0))

    def value(self, params: Mapping[str, Any]) -> dict[str, float]:
        return {"total": self.total, "count": self.count}

    @classmethod
    def _unit_test_params(cls) -> Iterator[dict[str, Any]]:
        yield {}

    @classmethod
    def _unit_test_states(cls) -> list[SparkOnlyTotal]:
        return [cls(1.0, 1), cls(5.0, 3), cls(-2.0, 2)]


@dataclass(frozen=True)
class WindowMax(Aggregation):
    """The largest value: NOT combinable (served per window as a time series), Arrow form only."""

    NAME = "windowMax"
    TYPE_TAG = "test.WindowMax"
    combinable = False
    input_type = "numeric"
    max: float | None = None

    @classmethod
    def empty(cls) -> WindowMax:
        return cls()

    def merge(self, other: WindowMax) -> WindowMax:
        values = [v for v in (self.max, other.max) if v is not None]
        return WindowMax(max(values) if values else None)

    @classmethod
    def from_arrow(cls, values: pa.Array, params: Mapping[str, Any]) -> WindowMax:
        if len(values) == 0:
            return cls()
        return cls(float(pc.max(values.cast(pa.float64())).as_py()))

    def value(self, params: Mapping[str, Any]) -> float:
        if self.max is None:
            raise EmptyInput("no value")
        return self.max

    @classmethod
    def _unit_test_params(cls) -> Iterator[dict[str, Any]]:
        yield {}


@dataclass(frozen=True)
class NoParams(Aggregation):
    """Implements the contract but forgot ``_unit_test_params`` (the kit must refuse it)."""

    TYPE_TAG = "test.NoParams"
    n: int = 0

    @classmethod
    def empty(cls) -> NoParams:
        return cls()

    def merge(self, other: NoParams) -> NoParams:
        return NoParams(self.n + other.n)

    @classmethod
    def from_arrow(cls, values: pa.Array, params: Mapping[str, Any]) -> NoParams:
        return cls(len(values))

    def value(self, params: Mapping[str, Any]) -> int:
        return self.n


@dataclass(frozen=True)
class NotMergeable(Aggregation):
    """Breaks the merge laws: merge keeps the left operand (not commutative)."""

    TYPE_TAG = "test.NotMergeable"
    n: int = 0

    @classmethod
    def empty(cls) -> NotMergeable:
        return cls()

    def merge(self, other: NotMergeable) -> NotMergeable:
        return self if self.n else other

    @classmethod
    def from_arrow(cls, values: pa.Array, params: Mapping[str, Any]) -> NotMergeable:
        return cls(len(values))

    def value(self, params: Mapping[str, Any]) -> int:
        return self.n

    @classmethod
    def _unit_test_params(cls) -> Iterator[dict[str, Any]]:
        yield {}


class NoBuild(Aggregation):
    """Subclasses Aggregation but can be built from no batch (no from_arrow, no Spark form)."""

    TYPE_TAG = "test.NoBuild"


def not_a_class() -> None:
    """A function, not a class."""


@dataclass(frozen=True)
class IntegerCount(Aggregation):
    """Counts the values of an integer column and insists on an integer Arrow type (a strict
    user class: it must never be handed a typeless empty array)."""

    TYPE_TAG = "test.IntegerCount"
    input_type = "numeric"
    n: int = 0

    @classmethod
    def empty(cls) -> IntegerCount:
        return cls()

    def merge(self, other: IntegerCount) -> IntegerCount:
        return IntegerCount(self.n + other.n)

    @classmethod
    def from_arrow(cls, values: pa.Array, params: Mapping[str, Any]) -> IntegerCount:
        if not pa.types.is_integer(values.type):
            raise TypeError(f"expected integers, got {values.type}")
        return cls(len(values))

    def value(self, params: Mapping[str, Any]) -> int:
        return self.n


class PlainClass(Aggregation):
    """Everything but bytes: not a dataclass and no payload()/from_payload()."""

    TYPE_TAG = "test.PlainClass"

    def __init__(self, n: int = 0) -> None:
        self.n = n

    @classmethod
    def empty(cls) -> PlainClass:
        return cls()

    def merge(self, other: PlainClass) -> PlainClass:
        return PlainClass(self.n + other.n)

    @classmethod
    def from_arrow(cls, values: pa.Array, params: Mapping[str, Any]) -> PlainClass:
        return cls(len(values))

    def value(self, params: Mapping[str, Any]) -> int:
        return self.n
