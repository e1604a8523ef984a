"""A relearned auto-validation program replaces its series in the Prometheus exporter: the learned
constraints keep their ids across relearning while their bounds (and so their text) change; the
exporter keeps one ``streamdq_constraint_status`` series per id, with the latest program's text."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families
from streamdq.connectors.sinks.prometheus import ReportCollector

from streamdq.autovalidate.avh.monitor import auto_validate_monitor_from_config
from streamdq.engine.monitor import analyze_segments
from tests.unit.autovalidate.test_autovalidate_monitor import SCHEMA, _handler, _rows

CHECK = "auto-validated amount"


def status_series(collector: ReportCollector) -> list[dict[str, str]]:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(collector)
    return [
        s.labels
        for family in text_string_to_metric_families(generate_latest(registry).decode())
        for s in family.samples
        if s.name == "streamdq_constraint_status" and s.labels["check"] == CHECK
    ]


def test_relearning_replaces_the_learned_constraints_series(spark):
    from streamdq.state.memory_store import InMemoryStateStore

    monitor = auto_validate_monitor_from_config(
        {"columns": {"amount": "numeric"}, "history": 6, "min_history": 4, "relearn_every": 2, "fpr": 0.01},
        "orders",
        analysis=analyze_segments,
    )
    handler = _handler(InMemoryStateStore(), monitor)
    collector = ReportCollector()
    rng = np.random.default_rng(5)
    texts: dict[str, set[str]] = defaultdict(set)
    last: dict[str, str] = {}
    for minute in range(10):  # the values drift upwards: each relearned program has new bounds
        report = handler.handle(
            spark.createDataFrame(_rows(rng, minute, unit=1.0 + 0.02 * minute), SCHEMA), minute
        )
        collector.update(report, [])
        for check in report.check_results:
            if check.check == CHECK:
                last = {r.constraint_id: r.constraint for r in check.constraint_results}
                for r in check.constraint_results:
                    texts[r.constraint_id].add(r.constraint)
    assert last, "the program judged no window"
    assert any(len(t) > 1 for t in texts.values())  # relearned: one id, several bounds over time
    series = status_series(collector)
    ids = [s["constraint_id"] for s in series]
    assert len(ids) == len(set(ids))  # one series per constraint id, not one per bound
    assert {s["constraint_id"]: s["constraint"] for s in series} == last
