"""Aggregation functions users plug in (CDAP's Data Quality Application), and their library.

* ``Aggregation`` (defined in ``streamdq/analyzers/aggregation.py``, beside the State contract
  it extends): the class a user subclasses: a mergeable, serializable state of one column with
  a metric value and a ``combinable`` flag.
* ``registry()`` (``streamdq/analyzers/aggregation_registry.py``): names to classes: the
  built-ins, the entry points of group ``streamdq.aggregations``, and ``module:Class``
  references, resolved when a config loads.
* The built-ins (``builtins.py``): ``discreteValuesHistogram``, ``uniqueValues``,
  ``numericHistogram``, ``average``, ``standardDeviation``, ``median``.

A check file uses one with the constraint kind ``aggregation`` (docs/aggregations.md)::

    - aggregation: {function: discreteValuesHistogram, column: status}
    - aggregation: {function: "mypkg.aggs:LongValues", column: path, params: {limit: 40}}

Importing this package registers nothing (``registry()`` fills the process-wide registry).
"""

from streamdq.analyzers.aggregation import Aggregation, EmptyInput
from streamdq.analyzers.aggregation_registry import (
    ENTRY_POINT_GROUP,
    AggregationLoadError,
    AggregationRegistry,
    registry,
    resolve,
)

__all__ = [
    "ENTRY_POINT_GROUP",
    "Aggregation",
    "AggregationLoadError",
    "AggregationRegistry",
    "EmptyInput",
    "registry",
    "resolve",
]
