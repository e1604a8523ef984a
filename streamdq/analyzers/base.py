"""Analyzer contracts: what the engine's fused passes need from each analyzer.

An analyzer is a frozen, hashable dataclass named as in Deequ. Its fields are its
parameters; ``where`` (a Spark SQL predicate, optional) is always the last field.

* ``ScanShareableAnalyzer`` declares Spark aggregate expressions (``aggregations``); the
  plan concatenates those of every analyzer into ONE ``agg`` and hands each analyzer its
  slice of the result row (``state_from(row, offset)``).
* ``GroupingAnalyzer`` declares a ``FrequencySpec`` (grouping columns + filter); the plan
  runs one grouped aggregation per distinct spec and every analyzer on that spec computes
  its metric from the shared ``FrequencyState``.

``preconditions(schema)`` runs on the driver before any Spark job: a violated
precondition (missing column, wrong type, bad parameter) turns into a failed metric for
that analyzer alone and its aggregations are left out of the pass.
"""

from __future__ import annotations

import dataclasses
import json
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar

from pyspark.sql import Column
from pyspark.sql.types import (
    BooleanType,
    ByteType,
    DataType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    NumericType,
    ShortType,
    StringType,
    StructType,
)

from streamdq.analyzers.columns import col as col  # re-exported: analyzers import it from here
from streamdq.analyzers.columns import conditional as conditional
from streamdq.analyzers.columns import in_scope
from streamdq.analyzers.frequency import FrequencySpec, FrequencyState
from streamdq.analyzers.metric import COLUMN, DATASET, MULTICOLUMN, Metric, failure
from streamdq.analyzers.row_aggregate import RowAggregate
from streamdq.analyzers.state import State
from streamdq.class_registry import ClassRegistry
from streamdq.errors import StreamdqError

INTEGRAL_TYPES = (ByteType, ShortType, IntegerType, LongType)
FRACTIONAL_TYPES = (FloatType, DoubleType, DecimalType)


class AnalyzerNameTaken(StreamdqError, ValueError):
    """``register_analyzer`` of a class under a name another class already holds."""


ANALYZER_CLASSES: ClassRegistry[Analyzer] = ClassRegistry(
    "analyzer name", lambda c: c.NAME, AnalyzerNameTaken
)


def register_analyzer(cls: type[Analyzer]) -> type[Analyzer]:
    """Make ``cls`` constructible by its ``NAME`` from a spec dict (returns ``cls``).

    Idempotent and thread-safe: the same class again does nothing; another class under a name
    already taken raises ``AnalyzerNameTaken``. Importing an analyzer module registers nothing:
    ``streamdq.analyzers.register.register_builtins()`` registers the built-ins.
    """
    return ANALYZER_CLASSES.register(cls)


def unregister_analyzer(cls: type[Analyzer]) -> bool:
    """Forget ``cls`` under its ``NAME``, the undo of ``register_analyzer`` for a class registered
    for a while (a test fixture); True when it was the registered class, else False and nothing
    changes (another class holding the name keeps it). Thread-safe. A built-in removed stays
    removed for the process (the built-ins are registered once) until registered again.
    """
    return ANALYZER_CLASSES.unregister(cls)


def analyzer_types() -> dict[str, type[Analyzer]]:
    """The analyzer classes registered so far, by name (no built-ins unless registered:
    ``streamdq.analyzers.register.registered_analyzers()`` registers them first)."""
    return ANALYZER_CLASSES.snapshot()


def rows_in_scope(where: str | None) -> RowAggregate:
    """The number of rows in scope, as a row aggregate (``rows`` when there is no filter)."""
    if where is None:
        return RowAggregate("rows")
    return RowAggregate("count_if", (in_scope(where),))


def field_type(schema: StructType, name: str) -> DataType | None:
    for f in schema.fields:
        if f.name == name:
            return f.dataType
    return None


def is_numeric(dtype: DataType | None) -> bool:
    return isinstance(dtype, NumericType)


def is_string(dtype: DataType | None) -> bool:
    return isinstance(dtype, StringType)


def is_boolean(dtype: DataType | None) -> bool:
    return isinstance(dtype, BooleanType)


@dataclasses.dataclass(frozen=True)
class Analyzer(ABC):
    """Base of all analyzers. Subclasses are frozen dataclasses with ``where`` last."""

    NAME: ClassVar[str]

    # -- identity -------------------------------------------------------------------
    def input_columns(self) -> tuple[str, ...]:
        """The input columns this analyzer reads (checked for existence before running).

        Named ``input_columns`` (not ``columns``) because analyzers such as Compliance and
        Uniqueness have a dataclass FIELD called ``columns``, which would shadow a method.
        """
        out: list[str] = []
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if f.name == "column" and isinstance(v, str):
                out.append(v)
            elif f.name in ("columns",) and isinstance(v, tuple | list):
                out.extend(v)
            elif f.name in ("first_column", "second_column", "numerator", "denominator"):
                out.append(v)
        return tuple(out)

    @property
    def entity(self) -> str:
        cols = self.input_columns()
        if not cols:
            return DATASET
        return COLUMN if len(cols) == 1 else MULTICOLUMN

    @property
    def instance(self) -> str:
        cols = self.input_columns()
        return ",".join(cols) if cols else "*"

    def to_spec(self) -> dict[str, Any]:
        """A plain dict naming the analyzer and its parameters (round-trips via
        ``streamdq.analyzers.register.analyzer_from_spec``)."""
        spec: dict[str, Any] = {"analyzer": self.NAME}
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if isinstance(v, tuple):
                v = list(v)
            if v is None and f.name == "where":
                continue
            spec[f.name] = v
        return spec

    def key(self) -> str:
        """A stable textual key (canonical JSON of ``to_spec``), used by the state store.

        Computed once per instance (an analyzer is frozen; the streaming handler asks for the
        keys of every analyzer on every microbatch) and kept outside the dataclass fields, so
        equality, hashing and ``to_spec`` do not see it."""
        kept = self.__dict__.get("_key")
        if kept is None:
            kept = json.dumps(self.to_spec(), sort_keys=True, separators=(",", ":"))
            object.__setattr__(self, "_key", kept)
        return kept

    def state_key(self) -> str:
        """Key of this analyzer's state in a states map / the state store.

        Analyzers that share a state (grouping analyzers on one ``FrequencySpec``) share
        this key, so the state is stored once.
        """
        return self.key()

    # -- running --------------------------------------------------------------------
    def preconditions(self, schema: StructType) -> str | None:
        """None when the analyzer can run on ``schema``, else the reason it cannot."""
        for c in self.input_columns():
            if field_type(schema, c) is None:
                return f"column {c!r} does not exist (columns: {', '.join(schema.fieldNames())})"
        return None

    @abstractmethod
    def empty_state(self) -> State:
        """The state of zero rows (the merge identity for this analyzer)."""

    @abstractmethod
    def metric(self, state: State) -> Metric:
        """The metric of a (possibly merged) state; a failure rather than an exception."""

    # -- helpers for subclasses -----------------------------------------------------
    def failed(self, reason: str, *, empty: bool = False) -> Metric:
        return failure(self.entity, self.NAME, self.instance, reason, empty=empty)

    def ok(self, value: Any, **kwargs: Any) -> Metric:
        return Metric(self.entity, self.NAME, self.instance, value=value, **kwargs)

    def empty_failure(self) -> Metric:
        return self.failed("Empty state for analyzer: no non-null input in scope", empty=True)


@dataclasses.dataclass(frozen=True)
class ScanShareableAnalyzer(Analyzer):
    """An analyzer computed from a few aggregate expressions in the shared scan.

    Declare the aggregates once, as ``row_aggregations`` (``RowAggregate``: a kind over
    per-row Spark expressions): the fused Spark path runs ``aggregations`` (derived from
    them) and the small-batch Arrow path projects their inputs in one Spark job and
    reduces them on the driver; ``state_from`` reads both results alike. An analyzer that
    overrides ``aggregations`` only (opaque Spark aggregates) has no Arrow form: a plan
    holding one runs the fused path.
    """

    def row_aggregations(self, schema: StructType) -> list[RowAggregate]:
        """The aggregates as kinds over per-row expressions (see ``row_aggregate``)."""
        raise NotImplementedError(f"{type(self).__name__} declares no row aggregations")

    def has_arrow_form(self) -> bool:
        """True when the aggregates are declared as row aggregations."""
        return type(self).row_aggregations is not ScanShareableAnalyzer.row_aggregations

    def aggregations(self, schema: StructType) -> list[Column]:
        """Aggregate expressions over the input DataFrame (may reference ``where``)."""
        return [r.to_spark() for r in self.row_aggregations(schema)]

    @abstractmethod
    def state_from(self, row: Sequence[Any], offset: int) -> State:
        """Build the state from ``row[offset : offset + len(aggregations)]``."""


@dataclasses.dataclass(frozen=True)
class GroupingAnalyzer(Analyzer):
    """An analyzer computed from the exact (or bounded-sketch) frequencies of a grouping."""

    # True for the analyzers that ask whether keys are distinct (Uniqueness, Distinctness,
    # UniqueValueRatio): users point them at key columns, so a large grouping serving one of
    # them first groups the rows with the smallest key hashes (frequency.query, the prefilter)
    KEYS_EXPECTED_DISTINCT: ClassVar[bool] = False

    @abstractmethod
    def frequency_spec(self) -> FrequencySpec:
        """The grouping this analyzer needs; analyzers with equal specs share one pass."""

    @abstractmethod
    def metric_from_frequencies(self, state: FrequencyState) -> Metric:
        """Compute the metric from the shared frequency state."""

    def state_key(self) -> str:
        return "frequency:" + self.frequency_spec().key()

    def empty_state(self) -> State:
        return FrequencyState.empty()

    def metric(self, state: State) -> Metric:
        assert isinstance(state, FrequencyState)
        return self.metric_from_frequencies(state)


@dataclasses.dataclass(frozen=True)
class ColumnsGroupingAnalyzer(GroupingAnalyzer):
    """A grouping analyzer over the keys of one or more columns: Uniqueness, Distinctness,
    UniqueValueRatio, CountDistinct.

    Rows outside ``where`` are dropped, then the rows whose grouping columns are all NULL,
    then the rest is grouped by ``columns`` (SEMANTICS.md, frequency-based family). Every
    such analyzer on equal ``(columns, where)`` shares one pass and one stored state; each
    says only how its metric reads the frequencies (``metric_from_frequencies``).
    """

    columns: tuple[str, ...]
    where: str | None = None

    def preconditions(self, schema: StructType) -> str | None:
        if not self.columns:
            return f"{self.NAME} needs at least one column"
        return super().preconditions(schema)

    def frequency_spec(self) -> FrequencySpec:
        return FrequencySpec(tuple(self.columns), self.where)
