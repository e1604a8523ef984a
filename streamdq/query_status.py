"""QueryStatus: the streaming query's liveness, handed from the engine's heartbeat to the sinks.

A microbatch report says what the data looked like; it does not come when there is no data
(a file feed with nothing new runs no batch). The heartbeat (``streamdq.engine.heartbeat``)
polls the running query every few seconds and hands every sink that has a
``query_status(status)`` method one of these, so a monitor can tell a job that is idle (alive,
waiting for input) from one that is stalled (a batch running for ever, data waiting but no
batch, or no query at all).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class QueryStatus:
    """``at``: unix seconds of the poll; ``active``: the query is running; ``waiting_for_data``:
    no trigger is running and the source reported no new data (idle, not stalled);
    ``message``: Spark's own status message (e.g. ``Waiting for data to arrive``)."""

    dataset: str
    at: float
    active: bool
    waiting_for_data: bool
    message: str = ""
