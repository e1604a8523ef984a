"""JSON-lines sink: one line per report, append-only, idempotent by ``(query_id, batch_id)``.

Runs in the driver. Each line is ``{"query_id", "batch_id", "dataset", "report": {...},
"alerts": [...]}`` where ``report`` is ``BatchReport.to_dict()`` and ``alerts`` are alert
documents (schema ``streamdq.alert/v1``). The file is opened in append mode; every line
is flushed and fsynced before ``emit`` returns (local files do not need a retry thread).

Across restarts: on open, the existing file is scanned for the ``(query_id, batch_id)``
pairs it holds, so a replayed batch is not written twice; a torn last line (crash in the
middle of a write) is cut off. A write error is logged and the line skipped: the stream
goes on.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from streamdq.connectors.sinks.base import SeenBatches
from streamdq.connectors.sinks.local_dir import require_local

from streamdq.alerts.alert import Alert
from streamdq.report import BatchReport

log = logging.getLogger("streamdq.sinks.jsonl")


def read_lines(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """All complete lines of a JSON-lines report file (skips a torn last line)."""
    out = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.endswith("\n"):
                out.append(json.loads(line))
    return out


class JsonLinesSink:
    @classmethod
    def _unit_test_params(cls, targets: Any) -> Iterator[dict[str, Any]]:
        """Specs for the conformance laws (streamdq.testing.sink_checks): files under ``targets.dir``."""
        yield {"type": "jsonl", "path": str(targets.dir / "kit.jsonl")}
        yield {"type": "jsonl", "path": (targets.dir / "uri.jsonl").as_uri(), "name": "by-uri"}

    def __init__(self, path: str | os.PathLike[str], name: str = "jsonl") -> None:
        self.name = name
        self.path = Path(require_local(path, "jsonl sink path"))  # never a folder named 's3a:'
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._seen = SeenBatches(capacity=1_000_000)
        self._lock = threading.Lock()
        self._repair_and_index()
        self._fh = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 - kept open until close()

    def _repair_and_index(self) -> None:
        if not self.path.exists():
            return
        with open(self.path, "rb+") as fh:
            good_end = 0
            for raw in fh:
                if not raw.endswith(b"\n"):
                    break
                good_end += len(raw)
                try:
                    doc = json.loads(raw)
                    self._seen.add(str(doc["query_id"]), int(doc["batch_id"]))
                except (ValueError, KeyError, TypeError):
                    log.warning("%s: skipping an unreadable line at byte %d", self.path, good_end - len(raw))
            fh.seek(0, os.SEEK_END)
            if fh.tell() != good_end:
                log.warning("%s: cutting a torn last line at byte %d", self.path, good_end)
                fh.truncate(good_end)

    def emit(self, report: BatchReport, alerts: list[Alert]) -> None:
        with self._lock:
            if not self._seen.first_time(report.query_id, report.batch_id):
                return
            doc = {
                "query_id": report.query_id,
                "batch_id": report.batch_id,
                "dataset": report.dataset,
                "report": report.to_dict(),
                "alerts": [a.to_dict() for a in alerts],
            }
            try:
                line = json.dumps(doc, sort_keys=True, allow_nan=False, default=str)
                self._fh.write(line + "\n")
                self._fh.flush()
                os.fsync(self._fh.fileno())
            except (OSError, ValueError) as exc:
                log.error("%s: could not write batch %s: %s", self.path, report.batch_id, exc)

    def close(self) -> None:
        with self._lock:
            if not self._fh.closed:
                self._fh.close()
