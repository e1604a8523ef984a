"""Email sink: one SMTP message per batch that has alerts, sent in the background.

Runs in the driver; ``emit`` only queues (``BackgroundRetrier``, exponential backoff), so a
dead mail server never blocks the stream. Connection: plain SMTP, ``starttls: true``
(upgrade after EHLO) or ``ssl: true`` (SMTPS), certificates verified against the system CAs
or ``ca_file``; ``username`` with ``password`` or ``password_env`` (the name of an
environment variable, read at send time) logs in.

Subject: ``[streamdq] orders: 2 violations, 1 resolved (Error) batch 12``. The body lists
each alert with its numbers (metric, value, expected bound, scope/window, times, alert
id), one block per alert. A batch without (selected) alerts sends nothing. Permanent SMTP
errors (5xx, e.g. a rejected recipient or bad credentials) drop the message with an error
log; others are retried. Idempotent per ``(query_id, batch_id)`` within the process.
``cooldown_seconds`` and ``rate_limit_per_minute`` throttle this sink only (``AlertThrottle``).
"""

from __future__ import annotations

import os
import smtplib
import ssl as ssl_lib
from collections.abc import Iterator
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
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


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 and not word.endswith('d') else ''}"


def subject_for(report: BatchReport, alerts: list[Alert], prefix: str = "[streamdq]") -> str:
    counts: dict[str, int] = {}
    for a in alerts:
        counts[a.kind] = counts.get(a.kind, 0) + 1
    parts = [_plural(counts[k], k) for k in ("violation", "anomaly", "resolved") if counts.get(k)]
    severity = "Error" if any(a.severity == "Error" and a.kind != "resolved" for a in alerts) else "Warning"
    if not any(a.kind != "resolved" for a in alerts):
        severity = "resolved"
    return f"{prefix} {report.dataset}: {', '.join(parts)} ({severity}) batch {report.batch_id}"


def body_for(report: BatchReport, alerts: list[Alert]) -> str:
    lines = [
        f"streamdq data-quality alerts for dataset '{report.dataset}'",
        f"query {report.query_id}, batch {report.batch_id}, processed {report.processing_time.isoformat()}",
    ]
    rows = report.counters.get("input_rows")
    if rows is not None:
        lines.append(f"rows in batch: {rows}")
    lines.append("")
    for a in alerts:
        window = f" window {a.window['start']} .. {a.window['end']}" if a.window else ""
        lines += [
            f"[{a.severity}] {a.kind.upper()}: {a.check} / {a.constraint}",
            f"  {a.message}",
            f"  metric:   {a.metric_name}({a.metric_instance}) = {a.metric_value}",
            f"  expected: {a.expected}",
            f"  scope:    {a.scope}{window}",
            f"  event time: {a.event_time.isoformat() if a.event_time else 'n/a'}",
            f"  alert id: {a.alert_id}",
            "",
        ]
    return "\n".join(lines)


class EmailSink:
    @classmethod
    def _unit_test_params(cls, targets: Any) -> Iterator[dict[str, Any]]:
        """Specs for the conformance laws (streamdq.testing.sink_checks): the SMTP server of ``targets``."""
        base = {
            "type": "email",
            "host": targets.smtp_host,
            "port": targets.smtp_port,
            "from": "dq@example.com",
        }
        yield {**base, "to": ["oncall@example.com"]}
        yield {
            **base,
            "to": "team@example.com",
            "starttls": False,
            "subject_prefix": "[kit]",
            "timeout_seconds": 5,
            "min_severity": "Error",
            "kinds": ["violation"],
            "cooldown_seconds": 1,
            "rate_limit_per_minute": 10,
            "name": "mail",
        }

    def __init__(
        self,
        host: str,
        port: int,
        sender: str,
        to: list[str],
        name: str = "email",
        *,
        starttls: bool = False,
        use_ssl: bool = False,
        username: str | None = None,
        password: str | None = None,
        password_env: str | None = None,
        subject_prefix: str = "[streamdq]",
        timeout_seconds: float = 15.0,
        min_severity: str | None = None,
        kinds: list[str] | None = None,
        initial_backoff: float = 1.0,
        max_backoff: float = 300.0,
        max_attempts: int | None = None,
        cooldown_seconds: float = 0.0,
        rate_limit_per_minute: int | None = None,
        ca_file: str | None = None,
    ) -> None:
        self.name = name
        self.ca_file = ca_file
        self.throttle = AlertThrottle(cooldown_seconds, rate_limit_per_minute)
        self.host, self.port = host, port
        self.sender, self.to = sender, list(to)
        self.starttls, self.use_ssl = starttls, use_ssl
        self.username, self._password, self.password_env = username, password, password_env
        self.subject_prefix = subject_prefix
        self.timeout = timeout_seconds
        self.min_severity, self.kinds = min_severity, kinds
        self._seen = SeenBatches()
        self.retrier: BackgroundRetrier[EmailMessage] = BackgroundRetrier(
            name,
            self._send,
            initial_backoff=initial_backoff,
            max_backoff=max_backoff,
            max_attempts=max_attempts,
        )

    def build_message(self, report: BatchReport, alerts: list[Alert]) -> EmailMessage:
        msg = EmailMessage()
        msg["Subject"] = subject_for(report, alerts, self.subject_prefix)
        msg["From"] = self.sender
        msg["To"] = ", ".join(self.to)
        msg["Date"] = formatdate(report.processing_time.timestamp(), usegmt=True)
        msg["Message-ID"] = make_msgid(idstring=f"{report.query_id}.{report.batch_id}", domain="streamdq")
        msg.set_content(body_for(report, alerts))
        return msg

    def emit(self, report: BatchReport, alerts: list[Alert]) -> None:
        if not self._seen.first_time(report.query_id, report.batch_id):
            return
        chosen = self.throttle.admit(filter_alerts(alerts, min_severity=self.min_severity, kinds=self.kinds))
        if chosen:
            self.retrier.submit(self.build_message(report, chosen))

    def _send(self, msg: EmailMessage) -> None:
        smtp: smtplib.SMTP
        try:
            if self.use_ssl:
                smtp = smtplib.SMTP_SSL(self.host, self.port, timeout=self.timeout, context=self._tls())
            else:
                smtp = smtplib.SMTP(self.host, self.port, timeout=self.timeout)
            with smtp:
                smtp.ehlo()
                if self.starttls:
                    smtp.starttls(context=self._tls())
                    smtp.ehlo()
                if self.username:
                    smtp.login(self.username, self._secret() or "")
                smtp.send_message(msg)
        except (
            smtplib.SMTPAuthenticationError,
            smtplib.SMTPRecipientsRefused,
            smtplib.SMTPSenderRefused,
        ) as exc:
            raise PermanentDeliveryError(f"SMTP {self.host}:{self.port}: {exc}") from exc
        except smtplib.SMTPResponseException as exc:
            if 500 <= exc.smtp_code < 600:
                raise PermanentDeliveryError(f"SMTP {self.host}:{self.port}: {exc}") from exc
            raise

    def _tls(self) -> ssl_lib.SSLContext:
        """Certificate-verifying TLS context (system CAs, or ``ca_file`` for a private CA)."""
        return ssl_lib.create_default_context(cafile=self.ca_file)

    def _secret(self) -> str | None:
        if self.password_env:
            return os.environ.get(self.password_env)
        return self._password

    def flush(self, timeout: float = 10.0) -> bool:
        return self.retrier.flush(timeout)

    def close(self) -> None:
        self.retrier.close(timeout=5.0)
