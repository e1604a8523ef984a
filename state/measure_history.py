"""Stored SQL measures read back by name: the history functions' source.

Measures are committed with each batch into the ``metrics`` table (``records.measure_records``:
entity ``Measure``, name = the measure's name, instance = its result type, the exact JSON value
in ``value_json``, scalars also in ``value``). A query by (dataset, measure name) prunes the
table's ``dataset`` partition and, through file statistics, the ``name`` column; it reads only
committed batches (``store.history``).

* ``measure_series(store, dataset, name, scope=...)``: every stored point, oldest first
  (``MeasurePoint``: time, batch id, window, value, failure);
* ``measure_history(store, dataset, name, n, scope=...)``: the values of the last ``n`` points
  that succeeded, oldest first (what ``previous_values(name, n)`` returns); a failed point
  has no value and is skipped; no stored point gives ``[]``.

Scopes: ``batch`` (one point per microbatch with good rows, and per ``verify --state`` run),
``window`` (one per closed window, latest value, compiled measures only), ``total``.
Works with any store that has ``history`` (``DeltaStateStore``, ``InMemoryStateStore``).

>>> from streamdq.state.memory_store import InMemoryStateStore
>>> measure_history(InMemoryStateStore(), "orders", "Null Count", 30)
[]
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from streamdq.state.records import MEASURE_ENTITY, join_value


@dataclass(frozen=True)
class MeasurePoint:
    """One stored value of a measure: when (window start, else processing time), which batch."""

    time: datetime
    batch_id: int
    scope: str
    value: Any
    failure: str | None = None
    window_start: datetime | None = None
    window_end: datetime | None = None
    result_type: str = ""


def measure_rows(
    store: Any,
    dataset: str,
    name: str,
    *,
    scope: str | None = "batch",
    start: datetime | None = None,
    end: datetime | None = None,
) -> pa.Table:
    """The committed metric rows of measure ``name`` (``store.history`` columns), oldest first."""
    rows: pa.Table = store.history(dataset, name, scope=scope, start=start, end=end)
    if rows.num_rows == 0:
        return rows
    return rows.filter(pc.fill_null(pc.equal(rows.column("entity"), MEASURE_ENTITY), False))


def measure_series(
    store: Any,
    dataset: str,
    name: str,
    *,
    scope: str | None = "batch",
    start: datetime | None = None,
    end: datetime | None = None,
) -> list[MeasurePoint]:
    """Every stored point of measure ``name`` in ``[start, end)``, oldest first."""
    return [
        MeasurePoint(
            time=r["time"],
            batch_id=int(r["batch_id"]),
            scope=r["scope"],
            value=join_value(r["value"], r["value_json"]),
            failure=r["failure"],
            window_start=r["window_start"],
            window_end=r["window_end"],
            result_type=r["instance"] or "",
        )
        for r in measure_rows(store, dataset, name, scope=scope, start=start, end=end).to_pylist()
    ]


def measure_history(store: Any, dataset: str, name: str, n: int, *, scope: str = "batch") -> list[Any]:
    """The values of the last ``n`` successful points of measure ``name``, oldest first."""
    if n <= 0:
        return []
    values = [p.value for p in measure_series(store, dataset, name, scope=scope) if p.failure is None]
    return values[-n:]
