"""What the supervisor tells the sinks: a frozen snapshot of its state (the hand-off value).

The supervisor (``streamdq.engine.supervisor``) restarts a failed streaming query from its
checkpoint; every change of its state (starting, running, backoff, stopped, failed) is
published as a ``SupervisorStatus`` to the sinks that want it (a sink with a
``supervisor_status(status)`` method, e.g. the Prometheus sink). It lives outside the engine so
that sinks can read it without importing the engine (DESIGN.md section 2).

Failure reason classes (``FAILURE_CLASSES``), the ``reason`` label of the metrics:

* ``worker``: a Python worker did not connect back in time (start-up under load) -> retried
* ``worker_killed``: a Python worker died (killed, crashed, out of memory) -> retried
* ``broker``: the Kafka broker did not answer or the source could not read -> retried
* ``network``: a socket or py4j connection error -> retried
* ``batch``: any other failure inside a microbatch: retried, and counted per batch id; the
  same batch failing ``poison_after`` times is a poison batch (quarantined or stop, by policy)
* ``config``: a deterministic configuration or analysis error -> never retried
* ``interrupted``: the user's Ctrl-C / SIGTERM -> never retried (a clean stop)
"""

from __future__ import annotations

from dataclasses import dataclass

FAILURE_CLASSES = ("worker", "worker_killed", "broker", "network", "batch", "config", "interrupted")
TRANSIENT_CLASSES = frozenset({"worker", "worker_killed", "broker", "network"})
SUPERVISOR_STATES = ("starting", "running", "backoff", "stopped", "failed")


@dataclass(frozen=True)
class SupervisorStatus:
    """The supervisor's state after its latest change.

    ``restarts`` counts restarts per failure class since the supervisor started;
    ``last_failure``/``last_failure_time`` (unix seconds) name the latest failure's class;
    ``poison_batches`` counts batches declared poison, by action (``quarantine`` | ``stop``).
    """

    dataset: str
    state: str
    restarts: tuple[tuple[str, int], ...] = ()
    last_failure: str | None = None
    last_failure_message: str | None = None
    last_failure_time: float | None = None
    poison_batches: tuple[tuple[str, int], ...] = ()
    batch_id: int | None = None

    @property
    def restarts_total(self) -> int:
        return sum(n for _, n in self.restarts)
