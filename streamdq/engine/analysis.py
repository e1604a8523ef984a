"""analyze(): Deequ's AnalysisRunner. Runs a plan and turns states into metrics.

``analyze(df, analyzers)`` triggers one Spark job for all scan-shareable analyzers and one
per grouping set (see ``AnalysisPlan``). ``AnalyzerContext`` keeps the states too, so the
streaming engine can merge them into window and total scopes; ``metrics_from_states``
computes metrics of merged states without touching Spark.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from pyspark.sql import DataFrame

from streamdq.analyzers.base import Analyzer
from streamdq.analyzers.metric import Metric
from streamdq.analyzers.state import State
from streamdq.engine.plan import DEFAULT_MAX_GROUPS, AnalysisPlan


@dataclass
class AnalyzerContext:
    """Metrics (and the states they came from) of one analysis run."""

    metrics: dict[Analyzer, Metric] = field(default_factory=dict)
    states: dict[Analyzer, State] = field(default_factory=dict)
    jobs: int = 0

    def metric(self, analyzer: Analyzer) -> Metric:
        return self.metrics[analyzer]

    def all_metrics(self) -> list[Metric]:
        return list(self.metrics.values())

    def to_rows(self) -> list[dict[str, object]]:
        return [m.to_dict() for m in self.metrics.values()]


def metrics_from_states(
    analyzers: Iterable[Analyzer],
    states: Mapping[Analyzer, State],
    failures: Mapping[Analyzer, str] | None = None,
) -> dict[Analyzer, Metric]:
    """Metric of each analyzer from its state; a failure or missing state gives a failed metric."""
    out: dict[Analyzer, Metric] = {}
    failures = failures or {}
    for a in analyzers:
        if a in failures:
            out[a] = a.failed(failures[a])
            continue
        state = states.get(a)
        if state is None:
            state = a.empty_state()
        try:
            out[a] = a.metric(state)
        except Exception as exc:  # a metric computation must never stop the others
            out[a] = a.failed(f"{type(exc).__name__}: {exc}")
    return out


def analyze(
    df: DataFrame, analyzers: Iterable[Analyzer], *, max_groups: int = DEFAULT_MAX_GROUPS
) -> AnalyzerContext:
    """Compute the metric of every analyzer over ``df`` in fused passes."""
    plan = AnalysisPlan(analyzers, max_groups=max_groups)
    result = plan.run(df)
    metrics = metrics_from_states(plan.analyzers, result.states, result.failures)
    return AnalyzerContext(metrics=metrics, states=dict(result.states), jobs=result.jobs)
