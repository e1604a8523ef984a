"""Stored measure/check/pass documents read back over time (``streamdq query pass``).

Each committed batch's report (the ``reports`` Delta table, one row per batch, written in the
batch's atomic commit) carries its documents (``BatchReport.measure_check_pass``: the batch
scope, each window it closed, the total scope). ``pass_documents(store, dataset, ...)``
prunes the table by dataset and UTC date partition, keeps committed batches processed in
``[since, until)`` (``table_reads.read_rows``), and returns one record per document, oldest
first (the newest ``limit``)::

    {"time": <processing time>, "query_id": ..., "batch_id": 7, "scope": "window",
     "window": [start, end] | None,
     "measure_check_pass": {"measure": {...}, "check": {...}, "pass": true}}

``scope`` keeps one scope only. No stored report gives ``[]``. Works on ``DeltaStateStore``
(``read_rows`` reads Delta tables), e.g.
``pass_documents(DeltaStateStore("./state"), "orders", scope="batch", limit=30)``.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from streamdq.state import schemas as S
from streamdq.state.table_reads import read_rows

from streamdq.errors import InvalidArgument


def pass_documents(
    store: Any,
    dataset: str,
    *,
    scope: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    limit: int | None = None,
) -> list[dict[str, Any]]:
    """The documents of the committed batches of ``dataset`` processed in ``[since, until)``."""
    if limit is not None and limit < 1:
        raise InvalidArgument(f"limit must be >= 1, got {limit}")
    rows = read_rows(store, S.REPORTS, dataset=dataset, since=since, until=until)
    out: list[dict[str, Any]] = []
    for row in rows.select(["processing_time", "query_id", "batch_id", "report"]).to_pylist():
        for record in json.loads(row["report"]).get("measure_check_pass") or ():
            if scope is not None and record.get("scope") != scope:
                continue
            time: datetime = row["processing_time"]
            out.append(
                {
                    "time": time.astimezone(UTC).isoformat(),
                    "query_id": row["query_id"],
                    "batch_id": int(row["batch_id"]),
                    "scope": record.get("scope"),
                    "window": record.get("window"),
                    "measure_check_pass": record.get("measure_check_pass"),
                }
            )
    if limit is not None and len(out) > limit:
        out = out[len(out) - limit :]
    return out
