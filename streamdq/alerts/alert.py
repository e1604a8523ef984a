"""The alert: one versioned JSON document per violation, anomaly or resolution.

Schema ``streamdq.alert/v1`` (documented in docs/alerts.md, JSON Schema in
docs/alert.schema.json). An alert is built on the driver from a ``BatchReport`` by
``streamdq.alerts.policy``; sinks only serialize and deliver it.

``alert_id`` is deterministic: the SHA-256 of (query id, batch id, check, constraint id,
kind, and the window start at window scope), so a replayed batch yields the same ids and
every consumer can de-duplicate on it (DESIGN.md section 5: at least once delivery,
exactly once effect).
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from streamdq.errors import InvalidArgument

SCHEMA = "streamdq.alert/v1"
SCHEMA_VERSION = 1
KINDS = ("violation", "anomaly", "resolved")


def alert_id_for(
    query_id: str,
    batch_id: int,
    check: str,
    constraint_id: str,
    kind: str,
    window_start: datetime | None = None,
) -> str:
    """Deterministic alert id: hex SHA-256 (first 32 chars) of the identifying tuple.

    ``window_start`` (window scope) joins the tuple: one batch can close several windows,
    and each window's violation or resolution is its own alert. Without it the tuple (and
    so the id) is the same as before windows took part.
    """
    parts: list[Any] = [query_id, int(batch_id), check, constraint_id, kind]
    if window_start is not None:
        parts.append(_iso(window_start))
    raw = json.dumps(parts, separators=(",", ":"))
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()[:32]


def _iso(value: datetime | None) -> str | None:
    return value.astimezone(UTC).isoformat() if value is not None else None


def _json_value(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    return value


@dataclass(frozen=True)
class Alert:
    """One alert (schema ``streamdq.alert/v1``); immutable and JSON round-trippable.

    ``severity`` is the check level (``Error``/``Warning``); ``expected`` is the
    constraint's bound (a string such as ``">= 0.95"``, a number, or
    ``{"lower": x, "upper": y}`` for a detector's interval); ``window`` is
    ``{"start", "end"}`` for the window scope, else None; ``event_time`` is the
    latest event time seen (or the window end), ``processing_time`` the batch's.
    """

    alert_id: str
    kind: str
    dataset: str
    severity: str
    check: str
    constraint: str
    constraint_id: str
    metric_name: str | None
    metric_entity: str | None
    metric_instance: str | None
    metric_value: Any
    expected: Any
    scope: str
    window: dict[str, str | None] | None
    query_id: str
    batch_id: int
    event_time: datetime | None
    processing_time: datetime
    message: str

    @property
    def key(self) -> str:
        """Partition/de-duplication key: ``dataset/constraint_id``."""
        return f"{self.dataset}/{self.constraint_id}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "schema_version": SCHEMA_VERSION,
            "alert_id": self.alert_id,
            "kind": self.kind,
            "dataset": self.dataset,
            "severity": self.severity,
            "check": self.check,
            "constraint": self.constraint,
            "constraint_id": self.constraint_id,
            "metric": {
                "name": self.metric_name,
                "entity": self.metric_entity,
                "instance": self.metric_instance,
                "value": _json_value(self.metric_value),
            },
            "expected": _json_value(self.expected),
            "scope": self.scope,
            "window": self.window,
            "query_id": self.query_id,
            "batch_id": self.batch_id,
            "event_time": _iso(self.event_time),
            "processing_time": _iso(self.processing_time),
            "message": self.message,
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True, allow_nan=False, default=str)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Alert:
        version = data.get("schema_version")
        if version != SCHEMA_VERSION:
            raise InvalidArgument(f"alert {data.get('alert_id')!r}: unsupported schema_version {version!r}")
        metric = data.get("metric") or {}
        value = metric.get("value")
        if isinstance(value, str) and value in ("nan", "inf", "-inf"):
            value = float(value)
        processing_time = datetime.fromisoformat(data["processing_time"])
        event_time = data.get("event_time")
        return cls(
            alert_id=data["alert_id"],
            kind=data["kind"],
            dataset=data["dataset"],
            severity=data["severity"],
            check=data["check"],
            constraint=data["constraint"],
            constraint_id=data["constraint_id"],
            metric_name=metric.get("name"),
            metric_entity=metric.get("entity"),
            metric_instance=metric.get("instance"),
            metric_value=value,
            expected=data.get("expected"),
            scope=data["scope"],
            window=data.get("window"),
            query_id=data["query_id"],
            batch_id=int(data["batch_id"]),
            event_time=datetime.fromisoformat(event_time) if event_time else None,
            processing_time=processing_time,
            message=data["message"],
        )

    @classmethod
    def from_json(cls, text: str) -> Alert:
        return cls.from_dict(json.loads(text))

    def summary(self) -> str:
        """One human line: ``[Error] orders violation: <message>``."""
        return f"[{self.severity}] {self.dataset} {self.kind}: {self.message}"
