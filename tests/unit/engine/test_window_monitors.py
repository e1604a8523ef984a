"""Window monitors in the handler: analyzers fused into the plan, closed windows observed once,
output published, state persisted with the batch commit and restored after a restart."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime

from streamdq.analyzers import Mean, Size
from streamdq.analyzers.base import Analyzer
from streamdq.analyzers.metric import DATASET, Metric
from streamdq.analyzers.state import State
from streamdq.engine.handler import BatchHandler
from streamdq.engine.judge import BatchJudge
from streamdq.engine.monitor import MonitorOutput
from streamdq.report import Anomaly, Window

SCHEMA = "ts timestamp, x double"


def _t(minute: int, second: int = 0) -> datetime:
    return datetime(2026, 1, 1, 12, minute, second)


class CountingMonitor:
    """Publishes the running number of windows seen and flags a window mean above 10."""

    key = "counting"

    def __init__(self) -> None:
        self.seen: list[int] = []

    def analyzers(self) -> Sequence[Analyzer]:
        return [Mean("x")]

    def observe(
        self, window: Window, seq: int, metrics: Mapping[Analyzer, Metric], states: Mapping[str, State]
    ) -> MonitorOutput:
        if self.seen and seq <= self.seen[-1]:
            return MonitorOutput()
        self.seen.append(seq)
        mean = metrics[Mean("x")]
        assert Mean("x").state_key() in states
        out = Metric(DATASET, "WindowsSeen", "*", value=float(len(self.seen)))
        anomalies = ()
        if mean.scalar is not None and mean.scalar > 10:
            anomalies = (Anomaly("counting", mean, "window", mean.scalar, upper=10.0, window=window),)
        return MonitorOutput(metrics=(out,), anomalies=anomalies)

    def dump_state(self) -> bytes:
        return json.dumps(self.seen).encode()

    def load_state(self, blob: bytes) -> None:
        self.seen = list(json.loads(blob))


def _handler(monitor, store=None):
    return BatchHandler(
        dataset="orders",
        query_id="q-monitor",
        judge=BatchJudge([]),
        window_seconds=60,
        watermark_seconds=0,
        event_time="ts",
        store=store,
        monitors=[monitor],
    )


def test_monitor_sees_each_closed_window_once_with_its_metrics(spark):
    monitor = CountingMonitor()
    handler = _handler(monitor)
    assert Mean("x") in handler.analyzers  # fused into the same plan as the checks' analyzers
    r0 = handler.handle(spark.createDataFrame([(_t(0, 5), 1.0), (_t(0, 9), 3.0)], SCHEMA), 0)
    assert not r0.closed_windows and monitor.seen == []
    r1 = handler.handle(spark.createDataFrame([(_t(1, 5), 50.0), (_t(2, 1), 1.0)], SCHEMA), 1)
    assert len(r1.closed_windows) == 2 and len(monitor.seen) == 2
    seen = [m for m in r1.metrics if m.metric.name == "WindowsSeen"]
    assert [m.metric.value for m in seen] == [1.0, 2.0]
    assert all(m.scope == "window" and m.metric.extra.get("final") for m in seen)
    assert [a.window.start.replace(tzinfo=None) for a in r1.anomalies] == [_t(1)]
    assert Size() not in handler.analyzers


def test_monitor_state_survives_a_restart(spark, tmp_path):
    from streamdq.state.delta_store import DeltaStateStore

    store = DeltaStateStore(str(tmp_path / "state"))
    first = CountingMonitor()
    handler = _handler(first, store)
    handler.handle(spark.createDataFrame([(_t(0, 5), 1.0)], SCHEMA), 0)
    handler.handle(spark.createDataFrame([(_t(1, 5), 2.0)], SCHEMA), 1)
    assert len(first.seen) == 1
    restarted = CountingMonitor()
    again = _handler(restarted, DeltaStateStore(str(tmp_path / "state")))
    # a replayed batch is re-emitted from the store and does not reach the monitor again
    again.handle(spark.createDataFrame([(_t(1, 5), 2.0)], SCHEMA), 1)
    assert restarted.seen == first.seen
    report = again.handle(spark.createDataFrame([(_t(2, 5), 2.0)], SCHEMA), 2)
    assert restarted.seen == [*first.seen, restarted.seen[-1]] and len(restarted.seen) == 2
    assert [m.metric.value for m in report.metrics if m.metric.name == "WindowsSeen"] == [2.0]
