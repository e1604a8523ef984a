"""AggregationAnalyzer: an aggregation function (``streamdq.aggregations``) on one column.

The analyzer the check-file kind ``aggregation`` builds (docs/aggregations.md): ``function``
names the aggregation (a registered name such as ``discreteValuesHistogram``, an entry point
of group ``streamdq.aggregations``, or ``module:Class``), ``column`` its input, ``params`` its
parameters (a mapping, kept as canonical JSON so the analyzer is hashable and its key
stable), ``where`` the usual filter. Its state IS the aggregation's state, so it is stored in
Delta (``to_bytes``) and merged like every built-in state.

Both engine paths, from one declaration:

* small-batch Arrow path: one row aggregate ``values`` (the column, NULL outside ``where``)
  is projected in the batch's one Spark job; ``from_arrow`` gets the non-NULL values as a
  pyarrow Array. A class without an Arrow form has no Arrow form here either, so a plan
  holding it runs the fused path;
* fused Spark path: the class's ``spark_aggregations`` join the ONE fused ``agg`` and
  ``from_spark`` reads their values; a class without a Spark form ships its values with
  ``collect_list`` in the same ``agg`` and ``from_arrow`` builds the state.

The metric is named after the aggregation (``metric_name()``, e.g. ``discreteValuesHistogram``)
on the column; ``EmptyInput`` from ``value`` is an empty failure, any other exception a
failure with its message. A reference that does not resolve, params the class rejects, or a
column of the wrong type fail this analyzer alone (a precondition), never the stream; the
config check reports them before Spark starts.

>>> import pyarrow as pa
>>> a = AggregationAnalyzer("discreteValuesHistogram", "status")
>>> a.key()
'{"analyzer":"Aggregation","column":"status","function":"discreteValuesHistogram"}'
>>> state = a.state_from([pa.array([200, 404, 200])], 0)  # what the Arrow path hands it
>>> m = a.metric(state.merge(a.empty_state()))
>>> m.name, m.instance, m.value
('discreteValuesHistogram', 'status', {'200': 2, '404': 1})
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from streamdq.analyzers.aggregation import Aggregation, EmptyInput
from streamdq.analyzers.aggregation_registry import AggregationLoadError, resolve
from streamdq.analyzers.base import (
    Analyzer,
    ScanShareableAnalyzer,
    col,
    conditional,
    field_type,
    is_numeric,
    is_string,
)
from streamdq.analyzers.metric import Metric, failure
from streamdq.analyzers.row_aggregate import RowAggregate
from streamdq.analyzers.state import State
from streamdq.errors import ConfigError

_SPARK_ARITY: dict[tuple[type[Aggregation], str], int] = {}
_ARITY_LOCK = threading.Lock()


def canonical_params(params: Any) -> str:
    """Params (a mapping, or its JSON text) as canonical JSON text; ``ConfigError`` (key
    ``params``) otherwise.

    >>> canonical_params({"limit": 40, "bins": 2})
    '{"bins":2,"limit":40}'
    >>> try:
    ...     canonical_params([1, 2])
    ... except ConfigError as exc:
    ...     print(exc.key, "|", exc.problem)
    params | must be a mapping, got [1, 2]
    """
    data = json.loads(params) if isinstance(params, str) else params
    if isinstance(data, tuple | list) and all(isinstance(p, tuple | list) and len(p) == 2 for p in data):
        data = dict(data)
    if not isinstance(data, Mapping):
        raise ConfigError(
            "params", f"must be a mapping, got {params!r}", "give params as a mapping, e.g. {limit: 40}"
        )
    try:
        return json.dumps(dict(data), sort_keys=True, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ConfigError(
            "params",
            f"must be plain JSON values: {exc}",
            "use numbers, strings, booleans, lists and mappings",
        ) from None


@dataclass(frozen=True)
class AggregationAnalyzer(ScanShareableAnalyzer):
    """An aggregation function on one column (see the module docstring).

    Examples
    --------
    A built-in aggregation on one column, its params kept as canonical JSON; two batches:

    >>> import pyarrow as pa
    >>> a = AggregationAnalyzer("average", "latency", where="status = 200")
    >>> a.to_spec()
    {'analyzer': 'Aggregation', 'function': 'average', 'column': 'latency', 'where': 'status = 200'}
    >>> batches = [a.state_from([pa.array([1.0, 2.0])], 0), a.state_from([pa.array([6.0])], 0)]
    >>> a.metric(batches[0].merge(batches[1])).value
    3.0
    >>> a.metric(a.empty_state()).empty
    True
    """

    NAME = "Aggregation"
    function: str
    column: str
    params: Any = "{}"
    where: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "params", canonical_params(self.params))

    @property
    def parameters(self) -> dict[str, Any]:
        """The params as a mapping (a fresh copy)."""
        loaded: dict[str, Any] = json.loads(self.params)
        return loaded

    def aggregation(self) -> type[Aggregation]:
        """The aggregation class ``function`` names (``AggregationLoadError`` if none)."""
        return resolve(self.function)

    def _class_or_none(self) -> type[Aggregation] | None:
        try:
            return self.aggregation()
        except AggregationLoadError:
            return None

    @property
    def metric_name(self) -> str:
        cls = self._class_or_none()
        return cls.metric_name() if cls is not None else self.function

    @property
    def combinable(self) -> bool:
        cls = self._class_or_none()
        return bool(cls.combinable) if cls is not None else False

    def failed(self, reason: str, *, empty: bool = False) -> Metric:
        return failure(self.entity, self.metric_name, self.instance, reason, empty=empty)

    def ok(self, value: Any, **kwargs: Any) -> Metric:
        return Metric(self.entity, self.metric_name, self.instance, value=value, **kwargs)

    def to_spec(self) -> dict[str, Any]:
        spec = super().to_spec()
        params = self.parameters
        if params:
            spec["params"] = params
        else:
            spec.pop("params", None)
        return spec

    # -- running --------------------------------------------------------------------
    def preconditions(self, schema: StructType) -> str | None:
        try:
            cls = self.aggregation()
        except AggregationLoadError as exc:
            return str(exc)
        problem = cls.validate_params(self.parameters)
        if problem is not None:
            return f"aggregation {self.function!r}: {problem}"
        missing = super().preconditions(schema)
        if missing is not None:
            return missing
        return type_problem(cls, self.column, field_type(schema, self.column))

    def _input(self) -> Column:
        return conditional(col(self.column), self.where)

    def has_arrow_form(self) -> bool:
        cls = self._class_or_none()
        return cls is not None and cls.has_arrow_form()

    def row_aggregations(self, schema: StructType) -> list[RowAggregate]:
        if not self.aggregation().has_arrow_form():
            raise NotImplementedError(f"aggregation {self.function!r} has no Arrow form (from_arrow)")
        return [RowAggregate("values", (self._input(),))]

    def aggregations(self, schema: StructType) -> list[Column]:
        cls = self.aggregation()
        if cls.has_spark_form():
            exprs = list(cls.spark_aggregations(self._input(), self.parameters))
            with _ARITY_LOCK:
                _SPARK_ARITY[(cls, self.params)] = len(exprs)
            return exprs
        return [F.collect_list(self._input())]

    def state_from(self, row: Sequence[Any], offset: int) -> State:
        cls = self.aggregation()
        params = self.parameters
        first = row[offset]
        if isinstance(first, pa.Array | pa.ChunkedArray):  # the Arrow path's ``values``
            values = first.combine_chunks() if isinstance(first, pa.ChunkedArray) else first
            # zero values in scope: the empty state (from_arrow of nothing must be it: the kit's law)
            return cls.from_arrow(values, params) if len(values) else cls.empty()
        if cls.has_spark_form():
            n = _SPARK_ARITY.get((cls, self.params))
            if n is None:
                n = len(cls.spark_aggregations(self._input(), params))
            return cls.from_spark(list(row[offset : offset + n]), params)
        return cls.from_arrow(pa.array(first), params) if first else cls.empty()

    def empty_state(self) -> State:
        cls = self._class_or_none()
        return cls.empty() if cls is not None else _Unresolved.empty()

    def metric(self, state: State) -> Metric:
        cls = self._class_or_none()
        if cls is None or not isinstance(state, cls):
            try:
                self.aggregation()
            except AggregationLoadError as exc:
                return self.failed(str(exc))
            return self.failed(f"aggregation {self.function!r}: got a {type(state).__name__} state")
        params = self.parameters
        try:
            value = state.value(params)
        except EmptyInput:
            return self.empty_failure()
        except Exception as exc:  # a user's value() must not stop the other metrics
            return self.failed(f"aggregation {self.function!r}: {type(exc).__name__}: {exc}"[:500])
        if not cls.approximate:
            return self.ok(value)
        try:
            bound = state.error_bound(params)
        except Exception:
            bound = None
        return self.ok(value, approximate=True, error_bound=bound)


def combinable(analyzer: Analyzer) -> bool:
    """False for an aggregation declared ``combinable = False`` (served as a time series only);
    True for every other analyzer: their window states merge over any range."""
    return not isinstance(analyzer, AggregationAnalyzer) or analyzer.combinable


def metric_name(analyzer: Analyzer) -> str:
    """The name of ``analyzer``'s metrics: the aggregation's own name, else the analyzer's NAME."""
    return analyzer.metric_name if isinstance(analyzer, AggregationAnalyzer) else analyzer.NAME


def type_problem(cls: type[Aggregation], column: str, dtype: Any) -> str | None:
    """None when a column of ``dtype`` suits the class's ``input_type``, else why not."""
    shown = dtype.simpleString().upper() if hasattr(dtype, "simpleString") else dtype
    if cls.input_type == "numeric" and not is_numeric(dtype):
        return f"column {column!r} is {shown}, aggregation {cls.metric_name()} needs a numeric type"
    if cls.input_type == "string" and not is_string(dtype):
        return f"column {column!r} is {shown}, aggregation {cls.metric_name()} needs a string type"
    return None


@dataclass(frozen=True)
class _Unresolved(Aggregation):
    """The empty state of an aggregation whose class does not resolve (its metric fails)."""

    TYPE_TAG = "agg.Unresolved"

    @classmethod
    def empty(cls) -> _Unresolved:
        return cls()

    def merge(self, other: Any) -> _Unresolved:
        return self


__all__ = ["AggregationAnalyzer", "canonical_params", "combinable", "metric_name", "type_problem"]
