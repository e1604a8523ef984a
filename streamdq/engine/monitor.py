"""The engine's side of window monitors: build the ones a run config asks for.

The contract (``WindowMonitor``, ``MonitorOutput``, ``MONITOR_KEY_PREFIX``) and the registry
live in the neutral module :mod:`streamdq.monitors`; they are re-exported here for the imports
that name ``streamdq.engine.monitor``. The engine finds monitors by run-config key through the
registry, as it finds sinks by ``type``, so it never names the packages that implement them.
A monitor that computes states of frames of its own (``streamdq.monitors.UsesAnalysis``) is handed
``analyze_segments``, the plan's segmented run, so the dependency points from the engine down.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from streamdq.analyzers.base import Analyzer
from streamdq.analyzers.state import State
from streamdq.engine.plan import DEFAULT_MAX_GROUPS, AnalysisPlan
from streamdq.monitors import MONITOR_KEY_PREFIX, MonitorOutput, MonitorRegistry, WindowMonitor
from streamdq.register import monitor_registry

if TYPE_CHECKING:
    from streamdq.engine.config import RunConfig


def build_monitors(
    config: RunConfig, checks: Sequence[Any] = (), registry: MonitorRegistry | None = None
) -> list[WindowMonitor]:
    """The monitors a run config asks for (``auto_validate:``, ``quality_score:``, any key
    registered in ``registry``), built once each from the sections its parse holds
    (``RunConfig.monitor_specs``), in registration order; nothing is validated again.
    """
    reg = monitor_registry() if registry is None else registry
    return reg.build(config.monitor_specs, config.dataset, analysis=analyze_segments)


def analyze_segments(
    analyzers: Sequence[Analyzer], df: Any, segment: Any, *, max_groups: int = DEFAULT_MAX_GROUPS
) -> tuple[dict[Any, dict[Analyzer, State]], dict[Analyzer, str]]:
    """The engine's ``streamdq.monitors.SegmentedAnalysis``: ``analyzers`` over the Spark frame
    ``df`` in ONE segmented run of the analysis plan (a scan-shareable pass grouped by the Spark
    column ``segment``, plus one grouped pass per grouping set), as ``(states, failures)``:
    ``states[value]`` per segment value present in ``df``, ``failures`` per analyzer that could
    not be computed.

    >>> from pyspark.sql import functions as F
    >>> from streamdq.analyzers import Size
    >>> from streamdq.spark import get_spark
    >>> df = get_spark().createDataFrame([(1,), (1,), (2,)], "g INT")
    >>> states, failures = analyze_segments([Size()], df, F.col("g"))
    >>> sorted((g, Size().metric(st[Size()]).value) for g, st in states.items()), failures
    ([(1, 2.0), (2, 1.0)], {})
    """
    result = AnalysisPlan(analyzers, max_groups=max_groups).run_segmented(df, [segment])
    states = {key[0]: dict(row.states) for key, row in result.segments.items()}
    return states, dict(result.failures)


__all__ = [
    "MONITOR_KEY_PREFIX",
    "MonitorOutput",
    "MonitorRegistry",
    "WindowMonitor",
    "analyze_segments",
    "build_monitors",
    "monitor_registry",
]
