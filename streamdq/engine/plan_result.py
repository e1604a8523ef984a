"""What a run of the analysis plan returns: states and failures per analyzer, per segment.

Plain values handed from the plan (either path: fused Spark passes or the small-batch Arrow
path) to its callers (``analyze``, ``verify``, the streaming handler).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from streamdq.analyzers.base import Analyzer
from streamdq.analyzers.state import State


@dataclass
class PlanResult:
    """States computed by one run of a plan, failures by analyzer, and Spark job count."""

    states: dict[Analyzer, State] = field(default_factory=dict)
    failures: dict[Analyzer, str] = field(default_factory=dict)
    jobs: int = 0


@dataclass
class SegmentRow:
    """States (and extra aggregate values) of one segment of a segmented run."""

    segment: Any
    states: dict[Analyzer, State] = field(default_factory=dict)
    extra: list[Any] = field(default_factory=list)


@dataclass
class SegmentedResult:
    """``run_segmented`` output: one ``SegmentRow`` per segment value present in the data."""

    segments: dict[Any, SegmentRow] = field(default_factory=dict)
    failures: dict[Analyzer, str] = field(default_factory=dict)
    jobs: int = 0
    path: str = "fused"  # which path computed it: "fused" (Spark passes) or "arrow" (one job)
    side: Any = None  # the arrow path's side rows (a pyarrow Table), when side columns were asked for
