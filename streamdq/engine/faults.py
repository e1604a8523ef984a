"""Test-only fault injection: make a microbatch fail deterministically, as a poison record would.

The chaos tests (tests/integration/test_chaos*.py) need a record that makes the handler fail
every time its batch is replayed, in a ``streamdq run`` subprocess. Setting
``STREAMDQ_FAIL_ON_MARKER=<text>`` in the job's environment makes every microbatch holding a row
whose payload contains ``<text>`` raise :class:`InjectedFailure` before the handler computes it.
Unset (the default), :func:`fault_marker` is None and nothing is checked: no job, no cost.

The supervisor treats that failure like any other failure inside a batch (class ``batch``):
after ``supervision.poison_after`` failures of the same batch id it is a poison batch.
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
