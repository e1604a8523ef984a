"""Object-store paths: the sinks' driver-local files never become a local folder named ``s3a:``."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamdq.connectors.sinks import build_sinks
from streamdq.connectors.sinks.journal import AlertJournal
from streamdq.connectors.sinks.jsonl import JsonLinesSink
from streamdq.connectors.sinks.kafka_alerts import journal_path
from streamdq.connectors.sinks.local_dir import ENV, is_uri, local_path, local_state_dir

from streamdq.errors import ConfigError

CHECKPOINT = "s3a://dq-bucket/streamdq/orders/checkpoint"


def test_paths_and_uris_are_told_apart():
    assert is_uri(CHECKPOINT) and is_uri("gs://b/x") and is_uri("file:///tmp/x")
    assert is_uri(str(Path(CHECKPOINT)))  # pathlib folds s3a:// into s3a:/ ; still not local
    assert not is_uri("/tmp/x") and not is_uri("relative/dir") and not is_uri("C:/x")
    assert local_path("/tmp/x") == "/tmp/x"
    assert local_path("file:///tmp/a%20b") == "/tmp/a b"
    assert local_path(CHECKPOINT) is None and local_path("s3://b/state") is None


def test_local_state_dir_with_object_store_checkpoint_and_state(tmp_path, monkeypatch):
    monkeypatch.delenv(ENV, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    got = local_state_dir("s3://dq-bucket/streamdq/orders/state", CHECKPOINT, "orders")
    assert Path(got).parent == tmp_path / "home" / ".streamdq" and Path(got).name.startswith("orders-")
    assert got == local_state_dir("s3://other", CHECKPOINT, "orders")  # stable per checkpoint
    assert got != local_state_dir(None, CHECKPOINT + "2", "orders")
    # local state or checkpoint: as before; the environment variable wins
    assert local_state_dir(str(tmp_path / "state"), CHECKPOINT, "orders") == str(tmp_path / "state")
    assert local_state_dir("s3://b/s", str(tmp_path / "ck"), "orders") == str(tmp_path / "ck" / "streamdq")
    monkeypatch.setenv(ENV, str(tmp_path / "volume"))
    assert local_state_dir("s3://b/s", CHECKPOINT, "orders") == str(tmp_path / "volume")


def test_kafka_outbox_is_local_never_an_s3a_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(ENV, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    state_dir = local_state_dir("s3://dq-bucket/state", CHECKPOINT, "orders")
    spec = [{"type": "kafka", "bootstrap_servers": "127.0.0.1:1", "topic": "streamdq-alerts"}]
    (sink,) = build_sinks(spec, dataset="orders", state_dir=state_dir)
    try:
        assert Path(sink.journal.path).is_relative_to(tmp_path / "home" / ".streamdq")
        assert Path(sink.journal.path).exists()
    finally:
        sink.close()
    assert not any(p.name.startswith("s3a:") for p in tmp_path.rglob("*"))
    # handed an object-store URI anyway, the sinks refuse it instead of making 's3a:/...'
    with pytest.raises(ConfigError, match="outbox"):
        build_sinks(spec, dataset="orders", state_dir=CHECKPOINT)
    with pytest.raises(ValueError, match="object-store URI"):
        journal_path(CHECKPOINT, "t")
    with pytest.raises(ValueError, match="object-store URI"):
        AlertJournal(Path(CHECKPOINT) / "x.sqlite")
    with pytest.raises(ValueError, match="object-store URI"):
        JsonLinesSink("s3a://b/reports.jsonl")
    with pytest.raises(ConfigError, match=r"sinks\[0\]\.path.*object-store"):
        build_sinks([{"type": "jsonl", "path": "s3a://b/reports.jsonl"}], dataset="orders", state_dir=".")
    assert not any(p.name.startswith("s3a:") for p in tmp_path.rglob("*"))


def test_stream_runner_with_s3a_checkpoint_keeps_its_outbox_local(tmp_path, monkeypatch):
    """The job's own wiring (StreamRunner._state_dir -> build_sinks): s3a:// checkpoint and s3://
    state, a Kafka alert sink; no Spark is needed to build the runner's sinks."""
    from streamdq.engine.streaming import StreamRunner

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(ENV, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "in").mkdir()
    cfg = {
        "dataset": "orders",
        "source": {"type": "files", "path": str(tmp_path / "in"), "format": "json", "schema": "a STRING"},
        "checkpoint": CHECKPOINT,
        "state": {"path": "s3://dq-bucket/streamdq/orders/state"},
        "sinks": [{"type": "kafka", "bootstrap_servers": "127.0.0.1:1", "topic": "streamdq-alerts"}],
    }
    runner = StreamRunner(None, cfg)  # type: ignore[arg-type]
    try:
        (sink,) = runner.sinks
        assert Path(sink.journal.path).is_relative_to(tmp_path / "home" / ".streamdq")
    finally:
        runner.stop()
    assert not [p for p in tmp_path.rglob("*") if p.name.startswith("s3")]
