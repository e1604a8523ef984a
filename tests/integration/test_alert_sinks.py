"""Alert sinks against real servers on loopback: aiosmtpd (email), http.server (webhook), and the
Kafka-protocol broker (EmbeddedBroker): delivery, broker down then up, restart with a pending journal."""

from __future__ import annotations

import email
import json
import shutil
import threading
import time
from email import policy as email_policy
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import jsonschema
import pytest
from streamdq.connectors.broker import BrokerUnavailable, EmbeddedBroker, free_port
from streamdq.connectors.sinks import build_sinks
from streamdq.connectors.sinks.email import EmailSink
from streamdq.connectors.sinks.kafka_alerts import KafkaAlertSink
from streamdq.connectors.sinks.webhook import WebhookSink

from streamdq.alerts import Alert
from tests.conftest import require_integration
from tests.unit.sinks.conftest import alerts_for, make_report

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "docs" / "alert.schema.json").read_text())
pytestmark = pytest.mark.integration


def wait_for(predicate, timeout: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


# ---------------------------------------------------------------- email (aiosmtpd)


@pytest.fixture
def smtp_server():
    try:
        from aiosmtpd.controller import Controller
    except ImportError as exc:  # pragma: no cover
        require_integration("aiosmtpd", str(exc))

    class Inbox:
        def __init__(self) -> None:
            self.messages: list[tuple[str, list[str], bytes]] = []

        async def handle_DATA(self, server, session, envelope):  # noqa: N802 - aiosmtpd hook name
            self.messages.append((envelope.mail_from, list(envelope.rcpt_tos), envelope.content))
            return "250 Message accepted for delivery"

    inbox = Inbox()
    controller = Controller(inbox, hostname="127.0.0.1", port=free_port())
    controller.start()
    try:
        yield controller, inbox
    finally:
        controller.stop()


def test_email_is_received_with_readable_subject_and_numbers(smtp_server, tmp_path):
    controller, inbox = smtp_server
    (sink,) = build_sinks(
        [
            {
                "type": "email",
                "host": "127.0.0.1",
                "port": controller.port,
                "from": "dq@example.com",
                "to": ["oncall@example.com"],
                "starttls": False,
            }
        ],
        dataset="orders",
        state_dir=str(tmp_path),
    )
    assert isinstance(sink, EmailSink)
    report = make_report(3)
    alerts, _ = alerts_for(report)
    sink.emit(report, alerts)
    sink.emit(report.as_replayed(), alerts)  # replay: no second mail
    sink.emit(make_report(4, failing=False), [])  # no alerts: no mail
    assert sink.flush(20)
    sink.close()
    assert len(inbox.messages) == 1
    mail_from, rcpt, content = inbox.messages[0]
    assert mail_from == "dq@example.com" and rcpt == ["oncall@example.com"]
    msg = email.message_from_bytes(content, policy=email_policy.default)
    assert msg["Subject"] == "[streamdq] orders: 1 violation, 1 anomaly (Error) batch 3"
    body = msg.get_content()
    assert "Completeness(amount) = 0.8" in body and "expected: >= 0.95" in body
    assert "OnlineNormal" in body and "512" in body and alerts[0].alert_id in body


def test_email_retries_until_the_server_appears(tmp_path):
    from aiosmtpd.controller import Controller

    received: list[bytes] = []

    class Inbox:
        async def handle_DATA(self, server, session, envelope):  # noqa: N802
            received.append(envelope.content)
            return "250 OK"

    port = free_port()
    sink = EmailSink(
        "127.0.0.1", port, "dq@example.com", ["a@example.com"], initial_backoff=0.1, max_backoff=0.5
    )
    report = make_report(3)
    start = time.monotonic()
    sink.emit(report, alerts_for(report)[0])
    assert time.monotonic() - start < 0.5  # the stream is not blocked by a dead server
    time.sleep(0.5)
    assert received == [] and sink.retrier.attempts >= 2
    controller = Controller(Inbox(), hostname="127.0.0.1", port=port)
    controller.start()
    try:
        assert sink.flush(20) and len(received) == 1
    finally:
        sink.close()
        controller.stop()


def test_email_over_starttls_with_login(tmp_path, monkeypatch):
    """STARTTLS (certificate verified against a private CA) and AUTH LOGIN/PLAIN with the
    password taken from an environment variable; mail without STARTTLS is refused for good."""
    import ssl
    import subprocess

    from aiosmtpd.controller import Controller
    from aiosmtpd.smtp import AuthResult, LoginPassword

    openssl = shutil.which("openssl")
    if openssl is None:
        require_integration("openssl", "needed to make a test certificate")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [
            openssl,
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            str(key),
            "-out",
            str(cert),
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    server_tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_tls.load_cert_chain(str(cert), str(key))
    logins: list[tuple[bytes, bytes]] = []
    received: list[bytes] = []

    def authenticator(server, session, envelope, mechanism, auth_data):
        ok = isinstance(auth_data, LoginPassword) and auth_data.password == b"s3cret"
        logins.append((auth_data.login, auth_data.password))
        return AuthResult(success=ok)

    class Inbox:
        async def handle_DATA(self, server, session, envelope):  # noqa: N802
            received.append(envelope.content)
            return "250 OK"

    controller = Controller(
        Inbox(),
        hostname="127.0.0.1",
        port=free_port(),
        tls_context=server_tls,
        require_starttls=True,
        authenticator=authenticator,
        auth_required=True,
        auth_require_tls=True,
    )
    controller.start()
    monkeypatch.setenv("STREAMDQ_TEST_SMTP_PASSWORD", "s3cret")
    try:
        (sink,) = build_sinks(
            [
                {
                    "type": "email",
                    "host": "127.0.0.1",
                    "port": controller.port,
                    "from": "dq@example.com",
                    "to": "oncall@example.com",
                    "starttls": True,
                    "username": "dq",
                    "password_env": "STREAMDQ_TEST_SMTP_PASSWORD",
                    "ca_file": str(cert),
                }
            ],
            dataset="orders",
            state_dir=str(tmp_path),
        )
        report = make_report(3)
        sink.emit(report, alerts_for(report)[0])
        assert sink.flush(20)
        sink.close()
        assert logins == [(b"dq", b"s3cret")] and len(received) == 1
        body = email.message_from_bytes(received[0], policy=email_policy.default).get_content()
        assert "Completeness(amount) = 0.8" in body

        plain = EmailSink(
            "127.0.0.1", controller.port, "dq@example.com", ["a@example.com"], initial_backoff=0.1
        )
        plain.emit(make_report(4), alerts_for(make_report(4))[0])
        assert plain.flush(20)
        plain.close()
        # the server demands STARTTLS (5xx): permanent, dropped after one attempt, not retried forever
        assert plain.retrier.failed == 1 and plain.retrier.attempts == 1 and len(received) == 1
    finally:
        controller.stop()


# ---------------------------------------------------------------- webhook (http.server)


@pytest.fixture
def hook_server():
    state = {"fail_first": 0, "bodies": [], "keys": []}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802
            body = self.rfile.read(int(self.headers["Content-Length"]))
            if self.path != "/hook":
                self.send_response(400)
                self.end_headers()
                return
            if state["fail_first"] > 0:
                state["fail_first"] -= 1
                self.send_response(503)
                self.end_headers()
                return
            state["bodies"].append(json.loads(body))
            state["keys"].append(self.headers["Idempotency-Key"])
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/hook", state
    finally:
        server.shutdown()
        server.server_close()


def test_webhook_posts_each_alert_json_with_retries(hook_server):
    url, state = hook_server
    state["fail_first"] = 2  # two 503s: retried with backoff
    sink = WebhookSink(url, initial_backoff=0.05)
    report = make_report(3)
    alerts, _ = alerts_for(report)
    sink.emit(report, alerts)
    sink.emit(report, alerts)  # same batch again: not re-posted
    assert sink.flush(20)
    sink.close()
    assert [b["alert_id"] for b in state["bodies"]] == [a.alert_id for a in alerts]
    assert state["keys"] == [a.alert_id for a in alerts]
    for body in state["bodies"]:
        jsonschema.validate(body, SCHEMA)
    assert sink.retrier.attempts == len(alerts) + 2


def test_webhook_does_not_retry_a_client_error(hook_server):
    url, state = hook_server
    sink = WebhookSink(url.replace("/hook", "/rejects"), initial_backoff=0.05)
    report = make_report(3)
    alerts, _ = alerts_for(report)
    sink.emit(report, alerts)
    assert sink.flush(10)
    sink.close()
    assert state["bodies"] == [] and sink.retrier.failed == len(alerts)
    assert sink.retrier.attempts == len(alerts)  # 400 is permanent: one attempt each


# ---------------------------------------------------------------- Kafka alert topic


def consume_all(bootstrap: str, topic: str, expect: int, timeout: float = 20.0) -> list:
    from kafka import KafkaConsumer

    consumer = KafkaConsumer(
        topic,
        bootstrap_servers=bootstrap,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        group_id=None,
        consumer_timeout_ms=1000,
    )
    records: list = []
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            records.extend(consumer)
            if len(records) >= expect:
                # read a little longer to catch duplicates
                records.extend(consumer)
                break
    finally:
        consumer.close()
    return records


def test_kafka_delivers_alert_json_keyed_by_dataset_constraint(kafka_broker, topic_name, tmp_path):
    kafka_broker.create_topic(topic_name, partitions=2)
    (sink,) = build_sinks(
        [{"type": "kafka", "bootstrap_servers": kafka_broker.bootstrap_servers, "topic": topic_name}],
        dataset="orders",
        state_dir=str(tmp_path),
    )
    report = make_report(3)
    alerts, _ = alerts_for(report)
    sink.emit(report, alerts)
    sink.emit(report.as_replayed(), alerts)  # replayed batch: journal de-duplicates
    assert sink.flush(30), f"pending={sink.pending} error={sink.last_error}"
    sink.close()
    records = consume_all(kafka_broker.bootstrap_servers, topic_name, expect=len(alerts))
    assert sorted(r.value.decode() for r in records) == sorted(a.to_json() for a in alerts)
    for r in records:
        doc = json.loads(r.value)
        jsonschema.validate(doc, SCHEMA)
        assert r.key.decode() == f"orders/{doc['constraint_id']}"
        assert Alert.from_dict(doc).alert_id == doc["alert_id"]


def test_kafka_sink_survives_broker_down_then_delivers_once(tmp_path, topic_name):
    broker = EmbeddedBroker()
    try:
        broker.start()
    except (BrokerUnavailable, ValueError) as exc:
        broker.close()
        require_integration("kafka broker", str(exc))
    try:
        broker.create_topic(topic_name)
        sink = KafkaAlertSink(
            broker.bootstrap_servers,
            topic_name,
            state_dir=tmp_path,
            initial_backoff=0.2,
            max_backoff=1.0,
            send_timeout_seconds=3.0,
        )
        first = make_report(1)
        a1, state = alerts_for(first)
        sink.emit(first, a1)
        assert sink.flush(30), sink.last_error
        broker.stop()
        outage_start = time.monotonic()
        second = make_report(2, failing=False)
        a2, state = alerts_for(second, state)
        third = make_report(3)  # fails again during the outage
        # the policy steps through closed windows (the anomaly's) before the batch scope (docs/alerts.md)
        a3, state = alerts_for(third, state)
        assert [a.kind for a in a2] == ["resolved"] and [a.kind for a in a3] == ["anomaly", "violation"]
        for report, alerts in ((second, a2), (third, a3)):
            start = time.monotonic()
            sink.emit(report, alerts)
            assert time.monotonic() - start < 0.5  # never blocks the stream
        assert wait_for(lambda: sink.last_error is not None, 20)  # it tried and failed
        time.sleep(max(0.0, 30 - (time.monotonic() - outage_start)))  # the broker is away for 30 s
        assert sink.pending == 3 and sink.sent == len(a1)
        broker.start()
        assert sink.flush(60), f"pending={sink.pending} error={sink.last_error}"
        sink.close()
        expected = a1 + a2 + a3
        records = consume_all(broker.bootstrap_servers, topic_name, expect=len(expected))
        ids = [json.loads(r.value)["alert_id"] for r in records]
        assert sorted(ids) == sorted(a.alert_id for a in expected)  # each exactly once
        # one constraint's alerts keep their order (same key, same partition)
        keyed = [json.loads(r.value)["kind"] for r in records if r.key == b"orders/c-compl-amount"]
        assert keyed == ["violation", "resolved", "violation"]
    finally:
        broker.close()


def test_kafka_sink_resends_an_alert_the_broker_acknowledged_then_lost(tmp_path, topic_name):
    """The broker acknowledges an alert, then loses it (here: its log is restored to a copy taken
    before the alert, as a broker stopped while acknowledging loses its newest records,
    docs/kafka.md); the next alert is acknowledged at the same offset, so the sink sends the lost
    one again: each alert reaches the topic exactly once, with no batch after the next emit."""
    broker = EmbeddedBroker(data_dir=tmp_path / "broker")
    try:
        broker.start()
    except (BrokerUnavailable, ValueError) as exc:
        broker.close()
        require_integration("kafka broker", str(exc))
    try:
        broker.create_topic(topic_name)
        sink = KafkaAlertSink(
            broker.bootstrap_servers,
            topic_name,
            state_dir=tmp_path / "state",
            initial_backoff=0.2,
            max_backoff=1.0,
            send_timeout_seconds=3.0,
        )
        first = make_report(1)
        a1, state = alerts_for(first)
        sink.emit(first, a1)
        assert sink.flush(30), sink.last_error
        broker.stop()
        shutil.copytree(tmp_path / "broker", tmp_path / "before")  # the log before the next alert
        broker.start()
        second = make_report(2, failing=False)
        a2, state = alerts_for(second, state)
        sink.emit(second, a2)
        assert sink.flush(30), sink.last_error  # acknowledged ...
        broker.stop()
        shutil.rmtree(tmp_path / "broker")
        shutil.copytree(tmp_path / "before", tmp_path / "broker")  # ... and lost
        broker.start()
        third = make_report(3)
        a3, state = alerts_for(third, state)
        sink.emit(third, a3)
        # the lost alert goes out again on the sink's own thread: no further emit, no flush call
        assert wait_for(lambda: sink.pending == 0 and sink.journal.lost == len(a2), 30), (
            f"pending={sink.pending} lost={sink.journal.lost} error={sink.last_error}"
        )
        sink.close()
        expected = a1 + a2 + a3
        records = consume_all(broker.bootstrap_servers, topic_name, expect=len(expected))
        assert sorted(json.loads(r.value)["alert_id"] for r in records) == sorted(
            a.alert_id for a in expected
        )
    finally:
        broker.close()


def test_restarted_sink_delivers_journaled_alerts_exactly_once(kafka_broker, topic_name, tmp_path):
    kafka_broker.create_topic(topic_name)
    dead = f"127.0.0.1:{free_port()}"
    report = make_report(5)
    alerts, _ = alerts_for(report)
    down = KafkaAlertSink(
        dead,
        topic_name,
        state_dir=tmp_path,
        initial_backoff=0.1,
        max_backoff=0.5,
        send_timeout_seconds=1.0,
        close_timeout_seconds=0.5,
    )
    down.emit(report, alerts)
    time.sleep(0.5)
    down.close()  # the job stops with undelivered alerts in its journal
    assert down.sent == 0

    up = KafkaAlertSink(kafka_broker.bootstrap_servers, topic_name, state_dir=tmp_path)
    assert up.flush(30), f"pending={up.pending} error={up.last_error}"
    up.emit(report.as_replayed(), alerts)  # Spark replays the batch after the restart
    assert up.flush(10)
    up.close()
    again = KafkaAlertSink(kafka_broker.bootstrap_servers, topic_name, state_dir=tmp_path)
    again.emit(report.as_replayed(), alerts)
    assert again.pending == 0  # acknowledged alerts are never resent
    again.close()
    records = consume_all(kafka_broker.bootstrap_servers, topic_name, expect=len(alerts))
    assert sorted(json.loads(r.value)["alert_id"] for r in records) == sorted(a.alert_id for a in alerts)
