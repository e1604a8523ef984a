"""Test-only fault injection: make a microbatch fail deterministically, as a poison record would.

The chaos tests (tests/integration/test_chaos*.py) need a record that makes the handler fail
every time its batch is replayed, in a ``streamdq run`` subprocess. Setting
``STREAMDQ_FAIL_ON_MARKER=<text>`` in the job's environment makes every microbatch holding a row
whose payload contains ``<text>`` raise :class:`InjectedFailure` before the handler computes it.
Unset (the default), :func:`fault_marker` is None and nothing is checked: no job, no cost.

The supervisor treats that failure like any other failure inside a batch (class ``batch``):
after ``supervision.poison_after`` failures of the same batch id it is a poison batch.

``STREAMDQ_HOLD_TAIL_OF_BATCH=<id>`` makes the pipelined tail (judge, commit, emit) of batch
``<id>`` wait until the process is killed: Spark's commit log then holds the batch and the state
store does not, which the runner's checkpoint rewind must repair at the next start
(tests/integration/test_pipelined_commit.py).
"""

from __future__ import annotations

import os

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from streamdq.errors import StreamdqError

FAIL_ON_MARKER_ENV = "STREAMDQ_FAIL_ON_MARKER"


class InjectedFailure(StreamdqError, RuntimeError):
    """Raised for a microbatch holding the fault marker (tests only)."""


def fault_marker() -> str | None:
    """The marker of ``$STREAMDQ_FAIL_ON_MARKER`` (None when unset or empty)."""
    marker = os.environ.get(FAIL_ON_MARKER_ENV, "")
    return marker or None


def raise_if_marked(df: DataFrame, batch_id: int, marker: str) -> None:
    """Raise InjectedFailure if a row of ``df`` (any column, as JSON) contains ``marker``."""
    payload = F.to_json(F.struct(*[F.col(f"`{c}`") for c in df.columns]))
    if df.filter(payload.contains(marker)).limit(1).count():
        raise InjectedFailure(f"injected failure: batch {batch_id} holds a record marked {marker!r}")


HOLD_TAIL_ENV = "STREAMDQ_HOLD_TAIL_OF_BATCH"


def tail_hold_batch() -> int | None:
    """The batch id of ``$STREAMDQ_HOLD_TAIL_OF_BATCH`` (None when unset): the pipelined tail of
    that batch never commits (it waits for the process to be killed), so that a test can kill
    the job while Spark's commit log holds a batch the state store does not (tests only)."""
    value = os.environ.get(HOLD_TAIL_ENV, "")
    return int(value) if value.strip().isdigit() else None


def hold_forever() -> None:
    """Block the calling thread until the process is killed (``tail_hold_batch``)."""
    import threading

    threading.Event().wait()
