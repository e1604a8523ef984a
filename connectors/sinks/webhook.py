"""Webhook sink: one JSON POST per alert, retried with exponential backoff in the background.

Runs in the driver; ``emit`` only queues (``BackgroundRetrier``), so a slow or dead
endpoint never blocks the stream. The body is the alert document (schema
``streamdq.alert/v1``); headers carry ``Idempotency-Key: <alert_id>`` so the receiver
can de-duplicate retries. With ``send: reports`` the body is instead the whole
``BatchReport`` plus its alerts, one POST per batch.

Responses 2xx are delivered; 408, 429 and 5xx and network errors are retried; other 4xx
are permanent (the payload or URL is wrong) and the item is dropped with an error log.
Idempotent per ``(query_id, batch_id)`` within the process. ``cooldown_seconds`` and
``rate_limit_per_minute`` throttle this sink only (``AlertThrottle``).
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

from streamdq.connectors.sinks.base import (
    AlertThrottle,
    BackgroundRetrier,
    PermanentDeliveryError,
    SeenBatches,
    filter_alerts,
)

from streamdq.alerts.alert import Alert
from streamdq.report import BatchReport

RETRYABLE_STATUS = {408, 425, 429}


class WebhookSink:
    @classmethod
    def _unit_test_params(cls, targets: Any) -> Iterator[dict[str, Any]]:
        """Specs for the conformance laws (streamdq.testing.sink_checks): the HTTP server of ``targets``."""
        yield {"type": "webhook", "url": targets.http_url}
        yield {
            "type": "webhook",
            "url": targets.http_url,
            "send": "reports",
            "headers": {"X-Kit": "1"},
            "timeout_seconds": 5,
            "max_attempts": 3,
            "cooldown_seconds": 0,
            "rate_limit_per_minute": 100,
            "min_severity": "Warning",
            "kinds": ["violation", "resolved"],
            "name": "reports",
        }

    def __init__(
        self,
        url: str,
        name: str = "webhook",
        *,
        headers: dict[str, str] | None = None,
        timeout_seconds: float = 10.0,
        send: str = "alerts",
        min_severity: str | None = None,
        kinds: list[str] | None = None,
        max_queue: int = 1000,
        initial_backoff: float = 0.5,
        max_backoff: float = 60.0,
        max_attempts: int | None = None,
        cooldown_seconds: float = 0.0,
        rate_limit_per_minute: int | None = None,
    ) -> None:
        self.name = name
        self.url = url
        self.throttle = AlertThrottle(cooldown_seconds, rate_limit_per_minute)
        self.headers = dict(headers or {})
        self.timeout = timeout_seconds
        self.send = send
        self.min_severity = min_severity
        self.kinds = kinds
        self._seen = SeenBatches()
        self.retrier: BackgroundRetrier[tuple[str, bytes]] = BackgroundRetrier(
            name,
            self._post,
            max_queue=max_queue,
            initial_backoff=initial_backoff,
            max_backoff=max_backoff,
            max_attempts=max_attempts,
        )

    def emit(self, report: BatchReport, alerts: list[Alert]) -> None:
        if not self._seen.first_time(report.query_id, report.batch_id):
            return
        chosen = self.throttle.admit(filter_alerts(alerts, min_severity=self.min_severity, kinds=self.kinds))
        if self.send == "reports":
            body: dict[str, Any] = {"report": report.to_dict(), "alerts": [a.to_dict() for a in chosen]}
            key = f"{report.query_id}/{report.batch_id}"
            self.retrier.submit((key, json.dumps(body, allow_nan=False, default=str).encode()))
            return
        for alert in chosen:
            self.retrier.submit((alert.alert_id, alert.to_json().encode()))

    def _post(self, item: tuple[str, bytes]) -> None:
        key, body = item
        headers = {"Content-Type": "application/json", "Idempotency-Key": key, **self.headers}
        request = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                response.read()
        except urllib.error.HTTPError as exc:
            if exc.code < 500 and exc.code not in RETRYABLE_STATUS:
                raise PermanentDeliveryError(f"POST {self.url} -> HTTP {exc.code} {exc.reason}") from exc
            raise

    def flush(self, timeout: float = 10.0) -> bool:
        return self.retrier.flush(timeout)

    def close(self) -> None:
        self.retrier.close(timeout=5.0)
