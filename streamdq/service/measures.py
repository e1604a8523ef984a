"""The query service's view of SQL measures and measure/check/pass documents (issue 18).

Read-only, over what the streaming job committed; nothing is re-read by hand: the values come
from ``state.measure_history`` (the ``metrics`` table, entity ``Measure``) and the documents
from ``state.pass_history`` (the ``reports`` table's report JSON). Runs in the service process
under the reader's lock (``StateReader.locked``); every function raises ``NotFound`` for a
dataset without a committed batch, and answers plain JSON values (times as epoch seconds).

* ``measure_catalog(reader, dataset, rng, scope)``: the measures stored in the range, each with
  its result type, scope and number of points; none gives ``[]``.
* ``measure_points(reader, dataset, name, rng, scope)``: the measure's stored values, oldest
  first: one per batch (``batch``, ``total``) or per window (``window``: the latest value, at
  the window start). A name the dataset never stored is ``NotFound`` naming the measures it has;
  a known measure with no point in the range gives ``[]``.
* ``pass_records(reader, dataset, rng, scope, limit)``: the documents of the batches processed
  in the range, oldest first (the newest ``limit``): ``{"timestamp", "queryId", "batchId",
  "scope", "windowStart", "windowEnd", "measure", "check", "pass"}``. None gives ``[]``.

Example (a store without batches knows no dataset)::

    >>> import tempfile
    >>> from streamdq.service.reader import StateReader
    >>> from streamdq.service.times import time_range
    >>> try:
    ...     measure_points(StateReader(tempfile.mkdtemp()), "orders", "Null Count", time_range(None, None))
    ... except NotFound as e:
    ...     print(e.message.split(";")[0])
    unknown dataset 'orders'
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from streamdq.service.errors import NotFound
from streamdq.service.reader import StateReader, plain
from streamdq.service.times import EARLIEST, LATEST, TimeRange
from streamdq.state.measure_history import measure_series
from streamdq.state.pass_history import pass_documents
from streamdq.state.records import MEASURE_ENTITY


def _bound(ts: datetime, default: datetime) -> datetime | None:
    """A range end as the state readers take it: the whole-history default is no bound."""
    return None if ts == default else ts


def _iso_seconds(text: Any) -> float | None:
    """Epoch seconds of a stored ISO time (a document's window bound); None when absent."""
    if text in (None, ""):
        return None
    ts = datetime.fromisoformat(str(text))
    return (ts if ts.tzinfo is not None else ts.replace(tzinfo=UTC)).timestamp()


def measure_catalog(
    reader: StateReader, dataset: str, rng: TimeRange, scope: str | None = None
) -> list[dict[str, Any]]:
    """The measures of ``dataset`` stored in ``rng`` (name, result type, scope, points)."""
    return [
        {"name": m["name"], "resultType": m["instance"], "scope": m["scope"], "points": m["points"]}
        for m in reader.metric_catalog(dataset, rng, scope)
        if m["entity"] == MEASURE_ENTITY
    ]


def measure_points(
    reader: StateReader, dataset: str, name: str, rng: TimeRange, scope: str | None = None
) -> list[dict[str, Any]]:
    """The stored values of measure ``name`` in ``rng`` (see the module docstring)."""
    reader.require(dataset)
    points = measure_series(
        reader.store,
        dataset,
        name,
        scope=scope,
        start=_bound(rng.start, EARLIEST),
        end=_bound(rng.end, LATEST),
    )
    if not points:
        known = sorted({m["name"] for m in measure_catalog(reader, dataset, TimeRange(EARLIEST, LATEST))})
        if name not in known:
            listed = ", ".join(repr(k) for k in known) if known else "none"
            raise NotFound(f"dataset {dataset!r} has no measure {name!r}; its measures: {listed}")
    return [
        {
            "timestamp": plain(p.time),
            "batchId": p.batch_id,
            "scope": p.scope,
            "resultType": p.result_type,
            "value": plain(p.value),
            "failure": p.failure,
            "windowStart": plain(p.window_start),
            "windowEnd": plain(p.window_end),
        }
        for p in points
    ]


def pass_records(
    reader: StateReader,
    dataset: str,
    rng: TimeRange,
    scope: str | None = None,
    limit: int | None = None,
) -> list[dict[str, Any]]:
    """The measure/check/pass documents of the batches processed in ``rng`` (module docstring)."""
    reader.require(dataset)
    records = pass_documents(
        reader.store,
        dataset,
        scope=scope,
        since=_bound(rng.start, EARLIEST),
        until=_bound(rng.end, LATEST),
        limit=limit,
    )
    out = []
    for r in records:
        doc = r["measure_check_pass"] or {}
        window = r["window"] or (None, None)
        out.append(
            {
                "timestamp": _iso_seconds(r["time"]),
                "queryId": r["query_id"],
                "batchId": r["batch_id"],
                "scope": r["scope"],
                "windowStart": _iso_seconds(window[0]),
                "windowEnd": _iso_seconds(window[1]),
                "measure": plain(doc.get("measure") or {}),
                "check": plain(doc.get("check") or {}),
                "pass": bool(doc.get("pass", True)),
            }
        )
    return out
