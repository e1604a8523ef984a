"""The library of built-in aggregations (CDAP's), added by ``AggregationRegistry.register_builtins``.

=========================  ===================================  ==========  ===========
name                       what                                 state       combinable
=========================  ===================================  ==========  ===========
``discreteValuesHistogram``  count per distinct value             exact map   yes
``uniqueValues``           the distinct values (string column)  exact set   yes
``numericHistogram``       equal-width buckets from a KLL sketch  KLL sketch  yes (approx.)
``average``                mean                                 moments     yes
``standardDeviation``      population standard deviation        moments     yes
``median``                 median                               KLL sketch  yes (approx.)
=========================  ===================================  ==========  ===========
"""

from __future__ import annotations

from streamdq.aggregations.discrete_histogram import DiscreteValuesHistogram
from streamdq.aggregations.kll import Median, NumericHistogram
from streamdq.aggregations.moments import Average, StandardDeviation
from streamdq.aggregations.unique_values import UniqueValues
from streamdq.analyzers.aggregation import Aggregation

BUILTINS: tuple[type[Aggregation], ...] = (
    DiscreteValuesHistogram,
    UniqueValues,
    NumericHistogram,
    Average,
    StandardDeviation,
    Median,
)

__all__ = ["BUILTINS"]
