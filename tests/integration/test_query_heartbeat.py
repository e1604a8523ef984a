"""The engine's heartbeat tells an idle file feed from a stalled job: a real streaming query over
a folder reads one file, then waits for data; the exporter's scrape says the query is alive
(``streamdq_query_heartbeat_timestamp_seconds`` moves on without batches) and waiting for data
(``streamdq_query_waiting_for_data`` 1). Stopped, the heartbeat says so (not active)."""

from __future__ import annotations

import json
import time
import urllib.request

import pytest
from prometheus_client.parser import text_string_to_metric_families
from streamdq.connectors.broker import free_port

pytestmark = [pytest.mark.integration]


def scrape(url: str) -> dict[str, float]:
    with urllib.request.urlopen(url, timeout=5) as resp:
        text = resp.read().decode()
    return {
        s.name: s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
        if s.labels.get("dataset") == "orders" and len(s.labels) == 1
    }


def test_an_idle_feed_keeps_its_heartbeat_and_says_it_waits_for_data(tmp_path, spark):
    from streamdq.engine.streaming import stream

    inbox = tmp_path / "in"
    inbox.mkdir()
    (tmp_path / "x.json").write_text("\n".join(json.dumps({"order_id": str(i)}) for i in range(5)) + "\n")
    (tmp_path / "x.json").rename(inbox / "x.json")
    cfg = {
        "dataset": "orders",
        "source": {"type": "files", "path": str(inbox), "format": "json", "schema": "order_id STRING"},
        "trigger": "1 second",
        "checkpoint": str(tmp_path / "chk"),
        "state": {"path": str(tmp_path / "state")},
        "checks": [
            {"description": "orders", "level": "error", "constraints": [{"has_size": {"assertion": "> 0"}}]}
        ],
        "sinks": [{"type": "prometheus", "host": "127.0.0.1", "port": free_port()}],
    }
    runner = stream(spark, cfg)
    (sink,) = runner.sinks
    runner._heartbeat().interval = 0.5
    try:
        runner.start()
        deadline = time.monotonic() + 90
        seen: dict[str, float] = {}
        while time.monotonic() < deadline:
            seen = scrape(sink.url)
            if seen.get("streamdq_last_batch_id") == 0 and seen.get("streamdq_query_waiting_for_data") == 1.0:
                break
            time.sleep(0.5)
        assert seen.get("streamdq_last_batch_id") == 0, seen  # the one file, one batch
        assert seen.get("streamdq_query_waiting_for_data") == 1.0, seen  # idle, not stalled
        first = seen["streamdq_query_heartbeat_timestamp_seconds"]
        time.sleep(2.0)
        later = scrape(sink.url)
        assert later["streamdq_query_heartbeat_timestamp_seconds"] > first  # alive without batches
        assert later["streamdq_last_batch_timestamp_seconds"] == seen["streamdq_last_batch_timestamp_seconds"]
        runner.stop_query() if hasattr(runner, "stop_query") else runner.query.stop()
        status = runner._heartbeat().poll()
        assert not status.active and not status.waiting_for_data
    finally:
        runner.stop()
