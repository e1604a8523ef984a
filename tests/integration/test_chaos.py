"""Chaos: the supervised job survives SIGKILLs, a broker outage, a poison record and CPU load.

A real ``streamdq run`` subprocess reads a topic of a real Kafka-protocol broker (its own
``EmbeddedBroker``) while the generator produces into it:

* ``test_kills_outage_and_poison_record_lose_nothing``: the first run starts against four busy
  processes competing for the cores (until it committed a batch, at most 120 s); the job is SIGKILLed
  three times at random moments after it committed a batch (mid-batch, mid-commit or idle),
  restarted from its checkpoint each time; a record carrying a poison marker (the job runs with
  ``STREAMDQ_FAIL_ON_MARKER``, so any batch holding it fails deterministically) makes its batch
  fail until the supervisor declares it poison and quarantines it; the broker is stopped for
  ``OUTAGE_SECONDS`` and started again while the last run is live. Afterwards: total metrics
  equal a batch analysis of every good record produced except the poison batch's, whose rows
  are all in quarantine with the reason; closed windows' final metrics equal a batch analysis
  of their records; no metric row is duplicated; every bad record and every poison-batch row is
  quarantined exactly once; nothing is lost (every record produced is counted or quarantined);
  the last run stops on SIGTERM with exit code 0, without a JVM stack trace.
* ``test_poison_batch_stop_policy_exits_1_naming_the_batch``: ``supervision.poison: stop``.

This is the suite's one kill harness for metrics (it replaced test_exactly_once.py's three kills
and a separate CPU-load start: the same job lifecycle asserted once). Alerts delivered exactly
once across a SIGKILL and a broker outage are test_alerts_end_to_end.py's ``kill`` and
``broker_outage`` modes.

Figures (kills, restarts, records) are printed for the report (``pytest -s``).
"""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.conftest import require_integration
from tests.integration.conftest import start_streamdq_run

pytestmark = [pytest.mark.integration, pytest.mark.slow]

CHECKS = {
    "checks": [
        {
            "description": "exactly once",
            "level": "error",
            "constraints": [
                {"has_size": {"assertion": ">= 0", "scope": "total"}},
                {"has_completeness": {"column": "amount", "assertion": ">= 0", "scope": "total"}},
                {"has_sum": {"column": "amount", "assertion": ">= 0", "scope": "total"}},
                {"has_min": {"column": "amount", "assertion": ">= -1e300", "scope": "total"}},
                {"has_max": {"column": "amount", "assertion": ">= -1e300", "scope": "total"}},
                {"has_distinctness": {"columns": ["order_id"], "assertion": ">= 0", "scope": "total"}},
                {"has_size": {"assertion": ">= 0", "scope": "window"}},
                {"has_completeness": {"column": "amount", "assertion": ">= 0", "scope": "window"}},
                {"has_sum": {"column": "amount", "assertion": ">= 0", "scope": "window"}},
                {"has_distinctness": {"columns": ["order_id"], "assertion": ">= 0", "scope": "window"}},
            ],
        }
    ]
}
BUSY_PROCESSES = 4  # compete for the 2 cores while the first run starts ...
BUSY_SECONDS = 120  # ... until its first batch, for at most this long (a CI box already loaded
# by other work plus four busy loops may not get a batch through in the test's time at all)

OUTAGE_SECONDS = 12
SUPERVISION = {
    "max_restarts": 20,
    "window": "10 minutes",
    "backoff_initial": "1s",
    "backoff_max": "4s",
    "poison_after": 2,
    "poison": "quarantine",
}
# what a normal stop must never print
JVM_TRACE_MARKERS = (
    "StackOverflowError",
    "\tat org.apache",
    "\tat java.",
    "Traceback (most recent call last)",
)


@pytest.fixture(scope="module")
def broker() -> Iterator[object]:
    """A broker of this module's own: the outage test stops and restarts it."""
    from streamdq.connectors.broker import BrokerUnavailable, EmbeddedBroker

    b = EmbeddedBroker()
    try:
        b.start()
    except (BrokerUnavailable, ValueError) as e:
        b.close()
        require_integration("kafka broker", str(e))
    try:
        yield b
    finally:
        b.close()


def _config(tmp: Path, bootstrap: str, topic: str) -> Path:
    from streamdq.connectors.sources.generator import GENERATOR_REQUIRED, GENERATOR_SCHEMA_DDL

    (tmp / "checks.yaml").write_text(yaml.safe_dump(CHECKS))
    cfg = {
        "dataset": "orders",
        "source": {
            "type": "kafka",
            "bootstrap_servers": bootstrap,
            "topic": topic,
            "starting_offsets": "earliest",
            "max_records_per_trigger": 2000,
            "format": "json",
            "schema": GENERATOR_SCHEMA_DDL,
            "required": list(GENERATOR_REQUIRED),
        },
        "event_time": "ts",
        "window": "20 seconds",
        "watermark": "5 seconds",
        "trigger": "2 seconds",
        "checkpoint": str(tmp / "chk"),
        "state": {"path": str(tmp / "state")},
        "checks_file": str(tmp / "checks.yaml"),
        "sinks": [{"type": "jsonl", "path": str(tmp / "reports.jsonl")}],
        "supervision": SUPERVISION,
    }
    path = tmp / "run.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def _start_job(config: Path, log: Path, marker: str | None = None) -> subprocess.Popen[bytes]:
    env: dict[str, str | None] = {"STREAMDQ_SPARK_LOG_LEVEL": None}
    if marker:
        env["STREAMDQ_FAIL_ON_MARKER"] = marker
    return start_streamdq_run(config, log, env)


def topic_records(bootstrap: str, topic: str) -> list[bytes]:
    """Every record value of ``topic``, read from the beginning to its current end."""
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, consumer_timeout_ms=5000)
    parts = [TopicPartition(topic, p) for p in consumer.partitions_for_topic(topic) or []]
    consumer.assign(parts)
    consumer.seek_to_beginning(*parts)
    end = consumer.end_offsets(parts)
    values: list[bytes] = []
    while any(consumer.position(p) < end[p] for p in parts):
        for records in consumer.poll(timeout_ms=2000).values():
            values.extend(r.value for r in records)
    consumer.close()
    return values


def _reports(tmp: Path) -> int:
    path = tmp / "reports.jsonl"
    return sum(1 for _ in path.open()) if path.exists() else 0


def _wait_for_batch(tmp: Path, job: subprocess.Popen[bytes], before: int, timeout: float) -> None:
    """Wait until the job emitted a report beyond ``before`` (a batch committed)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if _reports(tmp) > before:
            return
        assert job.poll() is None, f"the job exited with {job.returncode} before committing a batch"
        time.sleep(0.5)
    raise AssertionError(f"no batch committed within {timeout} s")


def _accounted(store) -> int:
    """Records the job has accounted for: input rows of its batches plus poison-batch rows."""
    seen = store.history("orders", "InputRows", scope="batch")
    rows = sum(v for v in seen.column("value").to_pylist() if v) if seen.num_rows else 0
    quarantine = store.table("quarantine")
    if quarantine is not None:
        reasons = quarantine.to_pyarrow_table().column("reason").to_pylist()
        rows += sum(1 for r in reasons if r and r.startswith("poison batch: "))
    return int(rows)


def _wait_accounted(store, total: int, job: subprocess.Popen[bytes], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if _accounted(store) >= total:
            return
        assert job.poll() is None, f"the job exited with {job.returncode} before draining the topic"
        time.sleep(2)
    raise AssertionError(f"the job accounted for {_accounted(store)} of {total} records in time")


def _query_id(tmp: Path) -> str:
    meta = (tmp / "chk" / "metadata").read_text().splitlines()[0]
    return str(json.loads(meta)["id"])


def _stop(job: subprocess.Popen[bytes], log: Path) -> tuple[int, str]:
    """SIGTERM the job: (its exit code, what it printed from the signal on)."""
    before = log.stat().st_size
    job.send_signal(signal.SIGTERM)
    code = job.wait(180)
    return code, log.read_bytes()[before:].decode(errors="replace")


def test_kills_outage_and_poison_record_lose_nothing(tmp_path, broker, spark):
    from kafka import KafkaProducer
    from streamdq.connectors.sources.decode import decode_json
    from streamdq.connectors.sources.generator import (
        GENERATOR_REQUIRED,
        GENERATOR_SCHEMA_DDL,
        GeneratorConfig,
        Incident,
    )
    from streamdq.connectors.sources.generator_producer import KafkaGeneratorProducer
    from streamdq.state.delta_store import DeltaStateStore

    from streamdq.analyzers import Completeness, Distinctness, Maximum, Minimum, Size, Sum
    from streamdq.engine.analysis import analyze

    topic = f"chaos-{uuid.uuid4().hex[:8]}"
    broker.create_topic(topic, partitions=2)
    config = _config(tmp_path, broker.bootstrap_servers, topic)
    log = tmp_path / "job.log"
    marker = f"POISON-{uuid.uuid4().hex[:8]}"
    gen = GeneratorConfig(
        seed=16,
        rows_per_second=20,
        incidents=(
            Incident(kind="null_burst", start=2, duration=7),  # NULLs for the completeness states
            Incident(kind="schema_drift", start=10, duration=8, drift="type_change"),  # bad records
        ),
    )
    producer = KafkaGeneratorProducer(broker.bootstrap_servers, topic, gen).start()
    rng = random.Random(20261125)
    kills = 0
    job = None
    busy: list[subprocess.Popen[bytes]] = []
    try:
        for i in range(3):
            if i == 0:  # the first start-up competes with busy processes for the cores
                loop = f"import time; t = time.monotonic() + {BUSY_SECONDS}\nwhile time.monotonic() < t: pass"
                busy = [subprocess.Popen([sys.executable, "-c", loop]) for _ in range(BUSY_PROCESSES)]
            job = _start_job(config, log, marker)
            _wait_for_batch(tmp_path, job, _reports(tmp_path), timeout=600)
            _end(busy)
            time.sleep(rng.uniform(0, 5))  # mid-batch, mid-commit or between batches
            job.send_signal(signal.SIGKILL)
            job.wait(30)
            kills += 1
            if i == 1:  # the poison record, between the generator's records
                poison = dict(json.loads(topic_records(broker.bootstrap_servers, topic)[-1]))
                poison["order_id"] = marker
                kp = KafkaProducer(bootstrap_servers=broker.bootstrap_servers)
                kp.send(topic, json.dumps(poison).encode(), partition=0).get(timeout=30)
                kp.close()
        last_log_start = log.stat().st_size
        job = _start_job(config, log, marker)
        _wait_for_batch(tmp_path, job, _reports(tmp_path), timeout=600)
        # the broker goes away and comes back while the job runs
        broker.stop()
        time.sleep(OUTAGE_SECONDS)
        broker.start()
        time.sleep(4)
        producer.stop()
        values = topic_records(broker.bootstrap_servers, topic)
        store = DeltaStateStore(str(tmp_path / "state"))
        _wait_accounted(store, len(values), job, timeout=900)
        time.sleep(2)
        code, stop_output = _stop(job, log)
    finally:
        producer.stop()
        _end(busy)
        if job is not None and job.poll() is None:
            job.kill()
            job.wait(30)
    first_run = log.read_bytes()[:last_log_start].decode(errors="replace")
    output = log.read_bytes()[last_log_start:].decode(errors="replace")
    restarts = output.count("streamdq: supervisor: restart ")
    print(
        f"\nchaos: {kills} kills survived (the first start against {BUSY_PROCESSES} busy processes, "
        f"{first_run.count('streamdq: supervisor: restart ')} supervised restarts before the last run), "
        f"{restarts} supervised restarts in the last run, {len(values)} records"
    )
    assert kills == 3
    assert code == 0, output[-3000:]
    assert "streamdq: the query failed" not in output
    for trace in JVM_TRACE_MARKERS:  # the stop is clean
        assert trace not in stop_output, (
            f"{trace!r} in the job's output after SIGTERM:\n{stop_output[-3000:]}"
        )
    assert "poison batch" in log.read_text(errors="replace"), (
        "the poison record's batch was not declared poison"
    )

    # the poison batch: every one of its rows in quarantine, with the reason
    quarantine = store.table("quarantine").to_pyarrow_table().to_pylist()
    poisoned = [r for r in quarantine if r["reason"].startswith("poison batch: ")]
    assert any(marker in r["raw"] for r in poisoned)
    assert all("injected failure" in r["reason"] for r in poisoned)
    assert len({r["batch_id"] for r in poisoned}) == 1
    poison_raw = {r["raw"] for r in poisoned}

    # the same records, decoded by the same decoder, analysed in one batch, minus the poison batch
    raw = spark.createDataFrame([(v,) for v in values], "value binary")
    decoded = decode_json(raw, GENERATOR_SCHEMA_DDL, required=list(GENERATOR_REQUIRED)).cache()
    kept = decoded.filter(~decoded["_streamdq_raw"].isin(list(poison_raw))) if poison_raw else decoded
    good = kept.filter("_streamdq_error IS NULL")
    bad_raw = {r["_streamdq_raw"] for r in kept.filter("_streamdq_error IS NOT NULL").collect()}
    analyzers = [
        Size(),
        Completeness("amount"),
        Sum("amount"),
        Minimum("amount"),
        Maximum("amount"),
        Distinctness(("order_id",)),
    ]
    expected = analyze(good, analyzers)
    qid = _query_id(tmp_path)
    last = store.last_committed_batch(qid)
    assert last is not None
    report = store.report(qid, last)
    assert report is not None
    total = {(m.metric.name, m.metric.instance): m.metric for m in report.metrics if m.scope == "total"}
    for a in analyzers:
        got, want = total[(a.NAME, a.instance)], expected.metric(a)
        assert got.value == pytest.approx(want.value, rel=1e-9), (a, got, want)

    # every batch id committed once; closed windows' final metrics equal a batch analysis of
    # their records (the first four closed windows: each costs a Spark job here)
    closed = 0
    for batch_id in range(last + 1):
        rep = store.report(qid, batch_id)
        assert rep is not None, f"batch {batch_id} has no committed report"
        for window in rep.closed_windows if closed < 4 else ():
            finals = {
                (m.metric.name, m.metric.instance): m.metric
                for m in rep.metrics
                if m.scope == "window" and m.window == window
            }
            lo, hi = window.start.replace(tzinfo=None), window.end.replace(tzinfo=None)
            want = analyze(good.filter((good.ts >= lo) & (good.ts < hi)), [Size(), Sum("amount")])
            assert finals[("Size", "*")].value == want.metric(Size()).value, window
            assert finals[("Sum", "amount")].value == pytest.approx(
                want.metric(Sum("amount")).value, rel=1e-9
            )
            closed += 1
    assert closed > 0, "no window was closed"
    metrics = store.table("metrics").to_pyarrow_table().to_pylist()
    keys = [
        (m["batch_id"], m["scope"], m["window_start"], m["name"], m["instance"], m["analyzer_key"])
        for m in metrics
    ]
    assert len(keys) == len(set(keys))

    # quarantine: each bad record and each poison-batch row exactly once; nothing lost
    assert len(quarantine) == len({r["raw"] for r in quarantine})
    assert {r["raw"] for r in quarantine} == bad_raw | poison_raw
    assert good.count() + len(bad_raw) + len(poison_raw) == len(values)


def _end(procs: list[subprocess.Popen[bytes]]) -> None:
    for p in procs:
        if p.poll() is None:
            p.kill()
            p.wait(10)


def test_poison_batch_stop_policy_exits_1_naming_the_batch(tmp_path):
    """``supervision.poison: stop``: the job ends with exit code 1 and one line naming the batch,
    its offsets and the error; no traceback, no JVM stack trace."""
    marker = f"POISON-{uuid.uuid4().hex[:8]}"
    data = tmp_path / "in"
    data.mkdir()
    rows = [{"order_id": f"o{i}", "ts": "2026-11-25T10:00:00Z", "amount": float(i)} for i in range(5)]
    rows.append({"order_id": marker, "ts": "2026-11-25T10:00:01Z", "amount": 1.0})
    (data / "part-0.json").write_text("".join(json.dumps(r) + "\n" for r in rows))
    cfg = {
        "dataset": "orders",
        "source": {
            "type": "files",
            "path": str(data),
            "format": "json",
            "schema": "order_id STRING, ts TIMESTAMP, amount DOUBLE",
        },
        "event_time": "ts",
        "trigger": "1 second",
        "checkpoint": str(tmp_path / "chk"),
        "state": {"path": str(tmp_path / "state")},
        "checks": [
            {"description": "c", "level": "error", "constraints": [{"has_size": {"assertion": ">= 0"}}]}
        ],
        "sinks": [{"type": "jsonl", "path": str(tmp_path / "reports.jsonl")}],
        "supervision": {
            "poison": "stop",
            "poison_after": 2,
            "backoff_initial": "0.2s",
            "backoff_max": "0.5s",
        },
    }
    config = tmp_path / "run.yaml"
    config.write_text(yaml.safe_dump(cfg))
    log = tmp_path / "job.log"
    job = _start_job(config, log, marker)
    try:
        code = job.wait(300)
    finally:
        if job.poll() is None:
            job.kill()
            job.wait(30)
    output = log.read_text(errors="replace")
    assert code == 1, output[-3000:]
    failed = [ln for ln in output.splitlines() if ln.startswith("streamdq: the query failed: ")]
    assert len(failed) == 1, output[-3000:]
    assert "poison batch 0 (offsets " in failed[0] and "logOffset" in failed[0]
    assert "failed 2 times: InjectedFailure: injected failure" in failed[0]
    assert output.count("streamdq: supervisor: restart ") == 1
    for trace in JVM_TRACE_MARKERS:
        assert trace not in output, f"{trace!r} in the job's output:\n{output[-3000:]}"
