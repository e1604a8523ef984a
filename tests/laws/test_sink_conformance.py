"""Every sink class of streamdq.connectors.sinks through the sink laws (streamdq.testing.sink_checks):
table-driven config validation (a bad key gives a ConfigError whose key is its path), an empty
alert list delivers no alert, a replayed batch is not delivered twice, and alerts do arrive.

The targets are real servers on loopback, started here: an HTTP server (webhook), aiosmtpd
(email) and the in-repo Kafka-protocol broker (``EmbeddedBroker``), each counting what it
received; the jsonl sink writes files under ``tmp_path``. Nothing the sinks name is mocked. The
console prints and Prometheus is scraped, so the kit cannot count their alerts at a target: their
delivery laws are the empty list and the replay (stdout/stderr captured)."""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from streamdq.connectors.broker import BrokerUnavailable, EmbeddedBroker, free_port
from streamdq.connectors.sinks.config import SCHEMAS

from streamdq.testing import ContractViolation
from streamdq.testing.sink_checks import SinkTargets, check_sink, sink_classes, uncovered_types
from tests.conftest import require_integration

NOT_OBSERVED = {"ConsoleSink": "prints to stdout/stderr", "PrometheusSink": "is scraped, delivers nothing"}


class _Http:
    """A loopback HTTP server that answers 200 and keeps every JSON body posted to it."""

    def __init__(self) -> None:
        self.bodies: list[Any] = []
        bodies = self.bodies

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's hook name
                length = int(self.headers.get("Content-Length", 0))
                bodies.append(json.loads(self.rfile.read(length)))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/alerts"

    def alerts(self) -> int:
        return sum(len(b["alerts"]) if "report" in b else 1 for b in self.bodies)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class _Smtp:
    def __init__(self) -> None:
        from aiosmtpd.controller import Controller

        self.messages: list[bytes] = []
        messages = self.messages

        class Inbox:
            async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802
                messages.append(envelope.content)
                return "250 OK"

        self.controller = Controller(Inbox(), hostname="127.0.0.1", port=free_port())
        self.controller.start()
        self.port = self.controller.port

    def close(self) -> None:
        self.controller.stop()


class _Kafka:
    """The records on the kit's topic, read with a consumer that keeps its position."""

    def __init__(self, broker: EmbeddedBroker, topic: str) -> None:
        from kafka import KafkaConsumer

        broker.create_topic(topic)
        self.consumer = KafkaConsumer(
            topic,
            bootstrap_servers=broker.bootstrap_servers,
            auto_offset_reset="earliest",
            enable_auto_commit=False,
            group_id=None,
        )
        self.records = 0

    def count(self) -> int:
        for batch in self.consumer.poll(timeout_ms=300).values():
            self.records += len(batch)
        return self.records

    def close(self) -> None:
        self.consumer.close()


@pytest.fixture(scope="module")
def targets(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SinkTargets]:
    try:
        import aiosmtpd  # noqa: F401
    except ImportError as exc:
        require_integration("aiosmtpd", str(exc))
    broker = EmbeddedBroker()
    try:
        broker.start()
    except (BrokerUnavailable, ValueError) as exc:
        broker.close()
        require_integration("kafka broker", str(exc))
    root = tmp_path_factory.mktemp("sinks")
    http, smtp = _Http(), _Smtp()
    topic = f"kit-{uuid.uuid4().hex[:8]}"
    kafka = _Kafka(broker, topic)

    def lines() -> list[dict[str, Any]]:
        return [json.loads(line) for f in sorted(root.glob("*.jsonl")) for line in f.read_text().splitlines()]

    def deliveries() -> int:
        return len(http.bodies) + len(smtp.messages) + kafka.count() + len(lines())

    def alerts() -> int:
        return http.alerts() + len(smtp.messages) + kafka.count() + sum(len(d["alerts"]) for d in lines())

    try:
        yield SinkTargets(
            dir=root,
            http_url=http.url,
            smtp_host="127.0.0.1",
            smtp_port=smtp.port,
            kafka_bootstrap=broker.bootstrap_servers,
            kafka_topic=topic,
            deliveries=deliveries,
            alerts=alerts,
        )
    finally:
        kafka.close()
        http.close()
        smtp.close()
        broker.close()


def _marks(name: str) -> list[pytest.MarkDecorator]:
    return [pytest.mark.integration] if any(k in name for k in ("kafka", "email", "webhook")) else []


@pytest.mark.parametrize("name", [pytest.param(n, marks=_marks(n)) for n in sorted(sink_classes())])
def test_every_sink_keeps_the_laws(name: str, targets: SinkTargets) -> None:
    cls = sink_classes()[name]
    report = check_sink(cls, targets)
    assert report.params and report.laws >= 5 * len(report.params)
    assert report.observed or cls.__name__ in NOT_OBSERVED, f"no alert of {cls.__name__} reached its target"


def test_every_sink_type_of_the_run_config_is_built_by_some_class(tmp_path: Path) -> None:
    assert set(SCHEMAS) == {"console", "jsonl", "prometheus", "kafka", "webhook", "email"}
    assert uncovered_types(sink_classes().values(), SinkTargets(dir=tmp_path)) == []


def test_a_sink_without_unit_test_params_fails(tmp_path: Path) -> None:
    from streamdq.connectors.sinks.console import ConsoleSink

    class Bare(ConsoleSink):
        pass

    with pytest.raises(ContractViolation, match="defines no _unit_test_params"):
        check_sink(Bare, SinkTargets(dir=tmp_path))
    assert uncovered_types([Bare], SinkTargets(dir=tmp_path)) == sorted(SCHEMAS)


def test_a_sink_that_delivers_a_replayed_batch_again_fails(tmp_path: Path) -> None:
    from streamdq.connectors.sinks.console import ConsoleSink

    class Chatty(ConsoleSink):
        """Prints every emit, replays included."""

        @classmethod
        def _unit_test_params(cls, targets: Any) -> Any:
            yield {"type": "console"}

        def emit(self, report: Any, alerts: Any) -> None:
            print(f"batch {report.batch_id}")

    with pytest.raises(ContractViolation, match="delivered it again"):
        check_sink(Chatty, SinkTargets(dir=tmp_path), build=lambda spec: Chatty("console"))


def test_the_config_laws_name_the_key(tmp_path: Path) -> None:
    """The ConfigError of a bad value carries the key path (not only in its text)."""
    from streamdq.connectors.sinks.config import validate_sink_spec

    from streamdq.errors import ConfigError

    with pytest.raises(ConfigError) as caught:
        validate_sink_spec(
            {"type": "webhook", "url": "http://x", "timeout_seconds": float("nan")}, "sinks[0]"
        )
    assert caught.value.key == "sinks[0].timeout_seconds"


def test_the_kit_examples_run() -> None:
    import doctest

    import streamdq.testing.sink_checks as kit

    assert doctest.testmod(kit).failed == 0
