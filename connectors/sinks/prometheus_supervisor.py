"""The supervisor's series of the Prometheus sink: restarts, the last failure, its state.

``SupervisorCollector`` keeps the latest ``SupervisorStatus`` per dataset (the supervisor
publishes one on every change of state, see ``streamdq.engine.supervisor``) and yields, from
the same private registry as the report series (``PrometheusSink``):

  streamdq_supervisor_state{dataset,state}              1 for the current state, 0 for the others
                                                       (starting, running, backoff, stopped, failed)
  streamdq_supervisor_restarts_total{dataset,reason}    restarts from the checkpoint, per failure class
  streamdq_supervisor_last_failure_timestamp_seconds{dataset,reason}
                                                       unix time of the latest failure (one series:
                                                       its class as ``reason``)
  streamdq_supervisor_poison_batches_total{dataset,action}  poison batches, by policy action
                                                       (quarantine | stop)

Labels are bounded by the fixed failure classes, states and actions (``streamdq.supervision``).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from streamdq.supervision import FAILURE_CLASSES, SUPERVISOR_STATES, SupervisorStatus


class SupervisorCollector(Collector):
    """Yields the latest supervisor status of each dataset as the series above."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._status: dict[str, SupervisorStatus] = {}

    def update(self, status: SupervisorStatus) -> None:
        with self._lock:
            self._status[status.dataset] = status

    def collect(self) -> Iterator[Metric]:
        with self._lock:
            statuses = list(self._status.values())
        state = GaugeMetricFamily(
            "streamdq_supervisor_state",
            "The supervisor's state: 1 for the current one (starting, running, backoff, stopped, failed).",
            labels=["dataset", "state"],
        )
        restarts = CounterMetricFamily(
            "streamdq_supervisor_restarts",
            "Restarts of the streaming query from its checkpoint, per failure class.",
            labels=["dataset", "reason"],
        )
        last = GaugeMetricFamily(
            "streamdq_supervisor_last_failure_timestamp_seconds",
            "Unix time of the latest failure of the query; reason: its failure class.",
            labels=["dataset", "reason"],
        )
        poison = CounterMetricFamily(
            "streamdq_supervisor_poison_batches",
            "Batches that failed supervision.poison_after times, by the policy's action.",
            labels=["dataset", "action"],
        )
        for s in statuses:
            for name in SUPERVISOR_STATES:
                state.add_metric([s.dataset, name], 1.0 if s.state == name else 0.0)
            counts = dict(s.restarts)
            for reason in FAILURE_CLASSES:
                if reason in counts or reason not in ("config", "interrupted"):
                    restarts.add_metric([s.dataset, reason], float(counts.get(reason, 0)))
            if s.last_failure is not None and s.last_failure_time is not None:
                last.add_metric([s.dataset, s.last_failure], s.last_failure_time)
            actions = dict(s.poison_batches)
            for action in ("quarantine", "stop"):
                poison.add_metric([s.dataset, action], float(actions.get(action, 0)))
        yield from (state, restarts, last, poison)
