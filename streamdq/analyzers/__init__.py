"""Analyzers: one per file, each a frozen dataclass named as in Deequ.

Importing this package (or any module in it) registers nothing: ``register_builtins()``
(``streamdq.analyzers.register``) adds every built-in analyzer and state type, and the look-ups
re-exported here (``analyzer_from_spec``, ``state_from_bytes``) call it first.

>>> analyzer_from_spec({"analyzer": "Size"})
Size(where=None)
"""

from streamdq.analyzers.approx_count_distinct import ApproxCountDistinct
from streamdq.analyzers.approx_quantile import ApproxQuantile, ApproxQuantiles
from streamdq.analyzers.base import Analyzer, GroupingAnalyzer, ScanShareableAnalyzer
from streamdq.analyzers.column_count import ColumnCount, ColumnCountState
from streamdq.analyzers.completeness import Completeness
from streamdq.analyzers.compliance import Compliance
from streamdq.analyzers.correlation import Correlation
from streamdq.analyzers.count_distinct import CountDistinct
from streamdq.analyzers.data_type import DataType, DataTypeState
from streamdq.analyzers.distinctness import Distinctness
from streamdq.analyzers.duplicate_row_count import DuplicateRowCount
from streamdq.analyzers.entropy import Entropy
from streamdq.analyzers.exact_quantile import ExactQuantile, ExactQuantileState
from streamdq.analyzers.frequency import FrequencySpec, FrequencyState
from streamdq.analyzers.histogram import Histogram
from streamdq.analyzers.interquartile_range import InterquartileRange
from streamdq.analyzers.kurtosis import Kurtosis
from streamdq.analyzers.max_length import MaxLength
from streamdq.analyzers.maximum import Maximum
from streamdq.analyzers.mean import Mean
from streamdq.analyzers.metric import Metric
from streamdq.analyzers.min_length import MinLength
from streamdq.analyzers.minimum import Minimum
from streamdq.analyzers.mutual_information import MutualInformation
from streamdq.analyzers.non_finite import NonFinite
from streamdq.analyzers.pattern_match import PATTERNS, PatternMatch
from streamdq.analyzers.range import Range, RangeState
from streamdq.analyzers.ratio_of_sums import RatioOfSums, RatioOfSumsState
from streamdq.analyzers.register import (
    analyzer_from_spec,
    register_analyzer,
    register_builtins,
    register_state,
    registered_analyzers,
    registered_states,
    state_from_bytes,
)
from streamdq.analyzers.size import Size
from streamdq.analyzers.sketch_states import HllState, KllState
from streamdq.analyzers.skewness import Skewness
from streamdq.analyzers.standard_deviation import StandardDeviation
from streamdq.analyzers.state import State
from streamdq.analyzers.sum import Sum
from streamdq.analyzers.unique_value_ratio import UniqueValueRatio
from streamdq.analyzers.uniqueness import Uniqueness
from streamdq.analyzers.user_aggregation import AggregationAnalyzer
from streamdq.analyzers.variance import Variance
from streamdq.analyzers.zeros_count import ZerosCount

__all__ = [
    "AggregationAnalyzer",
    "ColumnCount",
    "ColumnCountState",
    "ExactQuantile",
    "ExactQuantileState",
    "InterquartileRange",
    "Range",
    "RangeState",
    "CountDistinct",
    "Distinctness",
    "DuplicateRowCount",
    "Entropy",
    "FrequencySpec",
    "FrequencyState",
    "Histogram",
    "MutualInformation",
    "NonFinite",
    "UniqueValueRatio",
    "Uniqueness",
    "ApproxCountDistinct",
    "ApproxQuantile",
    "ApproxQuantiles",
    "Compliance",
    "Correlation",
    "DataType",
    "DataTypeState",
    "HllState",
    "KllState",
    "Kurtosis",
    "MaxLength",
    "Maximum",
    "MinLength",
    "Minimum",
    "PATTERNS",
    "PatternMatch",
    "RatioOfSums",
    "RatioOfSumsState",
    "Skewness",
    "StandardDeviation",
    "Sum",
    "Variance",
    "ZerosCount",
    "Analyzer",
    "Completeness",
    "GroupingAnalyzer",
    "Mean",
    "Metric",
    "ScanShareableAnalyzer",
    "Size",
    "State",
    "analyzer_from_spec",
    "register_analyzer",
    "register_builtins",
    "register_state",
    "registered_analyzers",
    "registered_states",
    "state_from_bytes",
]
