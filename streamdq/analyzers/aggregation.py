"""``Aggregation``: the base class of aggregation functions users plug in (CDAP's library).

An aggregation is a ``State`` (DESIGN.md section 3) of ONE column, plus how to build it from a
batch, its metric value and a ``combinable`` flag. Its instances are the states: immutable,
merged by the engine across microbatches, windows and stored history, and stored in Delta as
``to_bytes()`` (type tag + format version + payload; never pickled).

A subclass is a frozen dataclass (or an immutable class with its own ``payload``/``from_payload``)
that defines:

* ``TYPE_TAG`` (unique; the tag in its bytes) and ``FORMAT_VERSION`` (bump it when the payload
  changes, and read older versions in ``from_payload``);
* ``empty()`` (the state of zero values, the identity of ``merge``) and ``merge(other)``
  (associative and commutative);
* how to build a state from a batch, at least one of:

  - ``from_arrow(values, params)``: ``values`` is a pyarrow Array of the column's non-NULL
    values on rows in scope (the ``where`` filter). The small-batch Arrow path calls it with the
    projected column; the fused Spark path, when the class has no Spark form, ships the same
    values with ``collect_list`` in the fused ``agg`` (so the driver holds them, as on the
    Arrow path) and calls it on ``pa.array(list)``;
  - ``spark_aggregations(column, params)`` + ``from_spark(row, params)``: Spark aggregate
    expressions over ``column`` (the input column, NULL on rows outside the ``where`` filter)
    that join the fused ``agg``, and the state from their values (``row`` holds exactly them,
    in order). A class with only this form makes the engine run the fused path for the
    microbatches that hold it;

* ``value(params)``: the metric value of a (merged) state, a JSON-able value (a number, a
  string, a list, a mapping with string keys). Raise ``EmptyInput`` when the state of zero
  values has no value (the metric then fails as "empty", like Deequ's empty states); any
  other exception fails the metric with its message, never the stream;
* the payload: the default is canonical JSON of the dataclass fields (numbers, strings,
  lists, dicts with string keys; equal states give equal bytes); override ``payload`` /
  ``from_payload`` for binary sketches.

Optional class attributes: ``NAME`` (the metric name; default the class name),
``combinable`` (default True: a merge of states of different windows means something, so
``streamdq query merge`` and the service fold any range of windows; False: the merge is only
used among the microbatches of one window and the metric is served as a per-window time
series), ``approximate`` (sketch-based; then ``error_bound(params)`` says how far off a value
can be, in the aggregation's own terms), ``input_type`` (``"numeric"``, ``"string"`` or
``"any"``: checked against the column type before Spark starts) and ``validate_params``.

``params`` is the mapping given in the check file (``params: {bins: 10}``), the same on every
call; it is part of the analyzer key, so states of different params never merge.

Contract kit: ``from streamdq.testing import check_aggregation`` runs the merge laws,
serialization round trips and bounds on a class, from its ``_unit_test_params()``.

Example (a count of values longer than a limit; runs as a doctest):

>>> from dataclasses import dataclass
>>> import pyarrow as pa
>>> import pyarrow.compute as pc
>>> @dataclass(frozen=True)
... class LongValues(Aggregation):
...     TYPE_TAG = "example.LongValues"
...     input_type = "string"
...     count: int = 0
...
...     @classmethod
...     def empty(cls):
...         return cls()
...
...     def merge(self, other):
...         return LongValues(self.count + other.count)
...
...     @classmethod
...     def from_arrow(cls, values, params):
...         return cls(int(pc.sum(pc.greater(pc.utf8_length(values), params["limit"])).as_py() or 0))
...
...     def value(self, params):
...         return self.count
...
...     @classmethod
...     def _unit_test_params(cls):
...         yield {"limit": 2}
>>> a = LongValues.from_arrow(pa.array(["a", "abcd", "xyz"]), {"limit": 2})
>>> b = LongValues.from_arrow(pa.array(["hello"]), {"limit": 2})
>>> a.merge(b).value({"limit": 2})
3
>>> LongValues.from_bytes(a.to_bytes()) == a
True
>>> from streamdq.testing import check_aggregation
>>> check_aggregation(LongValues).laws > 0
True
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Self

from streamdq.analyzers.state import JsonState, StateFormatError, split_header
from streamdq.errors import StreamdqError

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import Column

INPUT_TYPES = ("numeric", "string", "any")


class EmptyInput(StreamdqError, ValueError):
    """Raised by ``Aggregation.value`` when the state of zero values has no value."""


class Aggregation(JsonState):
    """Base class of aggregation functions (see the module docstring for the contract)."""

    NAME: ClassVar[str] = ""
    combinable: ClassVar[bool] = True
    approximate: ClassVar[bool] = False
    input_type: ClassVar[str] = "any"

    # -- building a state from a batch (implement one form, or both) ---------------------
    @classmethod
    def from_arrow(cls, values: pa.Array, params: Mapping[str, Any]) -> Self:
        """The state of ``values`` (the non-NULL values in scope), on the small-batch path."""
        raise NotImplementedError(f"{cls.__name__} has no Arrow form (from_arrow)")

    @classmethod
    def spark_aggregations(cls, column: Column, params: Mapping[str, Any]) -> list[Column]:
        """Spark aggregate expressions over ``column`` for the fused ``agg`` (large batches)."""
        raise NotImplementedError(f"{cls.__name__} has no Spark form (spark_aggregations)")

    @classmethod
    def from_spark(cls, row: Sequence[Any], params: Mapping[str, Any]) -> Self:
        """The state from the values of ``spark_aggregations`` (in order)."""
        raise NotImplementedError(f"{cls.__name__} has no Spark form (from_spark)")

    @classmethod
    def has_arrow_form(cls) -> bool:
        return cls.from_arrow.__func__ is not Aggregation.from_arrow.__func__  # type: ignore[attr-defined]

    @classmethod
    def has_spark_form(cls) -> bool:
        own = cls.spark_aggregations.__func__ is not Aggregation.spark_aggregations.__func__  # type: ignore[attr-defined]
        built = cls.from_spark.__func__ is not Aggregation.from_spark.__func__  # type: ignore[attr-defined]
        return own and built

    # -- the metric ----------------------------------------------------------------------
    def value(self, params: Mapping[str, Any]) -> Any:
        """The metric value of this state (JSON-able); ``EmptyInput`` when it has none."""
        raise NotImplementedError(f"{type(self).__name__} defines no value()")

    def error_bound(self, params: Mapping[str, Any]) -> float | None:
        """How far an approximate value can be off (None for exact aggregations)."""
        return None

    @classmethod
    def metric_name(cls) -> str:
        """The name of the metric (and of the aggregation in the query service)."""
        return cls.NAME or cls.__name__

    @classmethod
    def validate_params(cls, params: Mapping[str, Any]) -> str | None:
        """None when ``params`` are fine, else what is expected (a load-time config error)."""
        return None

    # -- bytes ---------------------------------------------------------------------------
    @classmethod
    def from_bytes(cls, data: bytes) -> Self:
        """Inverse of ``to_bytes``: checks the tag is this class's and the version is readable."""
        tag, version, payload = split_header(bytes(data))
        if tag != cls.TYPE_TAG:
            raise StateFormatError(f"bytes of state {tag!r}, not of {cls.__name__} ({cls.TYPE_TAG!r})")
        if version > cls.FORMAT_VERSION:
            raise StateFormatError(
                f"state {tag!r} has format version {version}, {cls.__name__} reads up to {cls.FORMAT_VERSION}"
            )
        return cls.from_payload(payload, version)

    # -- the contract kit (streamdq.testing) ---------------------------------------------
    @classmethod
    def _unit_test_params(cls) -> Iterable[Mapping[str, Any]]:
        """The params the contract kit runs the laws with (every class must define it)."""
        raise NotImplementedError(
            f"{cls.__name__} defines no _unit_test_params(): the contract kit needs the params to test it with"
        )

    def _unit_test_bounds(self, values: pa.Array, params: Mapping[str, Any]) -> str | None:
        """Approximate aggregations: None when this state (built from ``values``, possibly
        through merges) has a value inside its error bound of the exact answer over ``values``,
        else what is off. The contract kit calls it; exact aggregations need not define it."""
        raise NotImplementedError(
            f"{type(self).__name__} is approximate but defines no _unit_test_bounds(): the contract kit "
            "needs it to check the value against the exact answer"
        )


__all__ = ["Aggregation", "EmptyInput", "INPUT_TYPES"]
