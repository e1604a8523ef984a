"""Analyzers: one per file, each a frozen dataclass named as in Deequ.

Importing this package registers every analyzer and state type.
"""

from streamdq.analyzers.base import Analyzer, GroupingAnalyzer, ScanShareableAnalyzer
from streamdq.analyzers.completeness import Completeness
from streamdq.analyzers.mean import Mean
from streamdq.analyzers.metric import Metric
from streamdq.analyzers.size import Size
from streamdq.analyzers.state import State, state_from_bytes

__all__ = [
    "Analyzer",
    "Completeness",
    "GroupingAnalyzer",
    "Mean",
    "Metric",
    "ScanShareableAnalyzer",
    "Size",
    "State",
    "state_from_bytes",
]
