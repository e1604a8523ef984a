"""Incident-to-alert latency (issue 4): time from an incident's first record entering the source
topic to its violation alert arriving on the alert topic, median and p95.

Runs everything for real on loopback: an ``EmbeddedBroker``, the streaming job
(``streamdq run``) as a subprocess reading the source topic with a 5 s window, 1 s watermark and
1 s trigger, a paced ``KafkaGeneratorProducer`` at ``--rate`` rows/s with a 5 s null burst every
``--every`` seconds (aligned on window boundaries), and a kafka-python consumer on the alert
topic. An incident "enters" when the producer's clock reaches its first record (records are
produced when due, at most ``tick`` = 0.1 s late); the alert "arrives" when the consumer
receives it. Wall time ~ ``--incidents`` x ``--every`` + ~1 min of start-up.

Last line: ``RESULT detectors_latency incidents=N alerts=M median_s=.. p95_s=.. max_s=..``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml
from streamdq.connectors.broker import EmbeddedBroker
from streamdq.connectors.sources.generator import (
    GENERATOR_REQUIRED,
    GENERATOR_SCHEMA_DDL,
    GeneratorConfig,
    Incident,
    now_ms,
)
from streamdq.connectors.sources.generator_producer import KafkaGeneratorProducer

WINDOW = 5


def _config(tmp: Path, bootstrap: str, src: str, alerts: str) -> Path:
    checks = {
        "checks": [
            {
                "description": "latency",
                "level": "error",
                "constraints": [
                    {"has_completeness": {"column": "amount", "assertion": ">= 0.7", "scope": "window"}}
                ],
            }
        ]
    }
    (tmp / "checks.yaml").write_text(yaml.safe_dump(checks))
    cfg = {
        "dataset": "orders",
        "source": {
            "type": "kafka",
            "bootstrap_servers": bootstrap,
            "topic": src,
            "starting_offsets": "earliest",
            "format": "json",
            "schema": GENERATOR_SCHEMA_DDL,
            "required": list(GENERATOR_REQUIRED),
        },
        "event_time": "ts",
        "window": f"{WINDOW} seconds",
        "watermark": "1 second",
        "trigger": "1 second",
        "checkpoint": str(tmp / "chk"),
        "state": {"path": str(tmp / "state")},
        "checks_file": str(tmp / "checks.yaml"),
        "alerts": {"cooldown_seconds": 0, "min_rows_floor": 10},
        "sinks": [{"type": "kafka", "bootstrap_servers": bootstrap, "topic": alerts}],
    }
    path = tmp / "run.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--incidents", type=int, default=20)
    p.add_argument("--every", type=int, default=15, help="seconds between incident starts (multiple of 5)")
    p.add_argument("--rate", type=float, default=100.0)
    args = p.parse_args()
    from kafka import KafkaConsumer

    tmp = Path(tempfile.mkdtemp(prefix="streamdq-latency-"))
    with EmbeddedBroker() as broker:
        bootstrap = broker.bootstrap_servers
        broker.create_topic("lat-src", partitions=1)
        broker.create_topic("lat-alerts", partitions=1)
        config = _config(tmp, bootstrap, "lat-src", "lat-alerts")
        env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable)
        log = open(tmp / "job.log", "ab")  # noqa: SIM115
        job = subprocess.Popen(
            [sys.executable, "-m", "streamdq.cli", "run", str(config)], stdout=log, stderr=log, env=env
        )
        consumer = KafkaConsumer("lat-alerts", bootstrap_servers=bootstrap, auto_offset_reset="earliest")
        time.sleep(40)  # let Spark start before the clock of the first incident runs
        # first record 2 s after a window boundary: jitter (0-2 s) never opens an earlier window;
        # incidents start on window boundaries (offset = -2 + 5k)
        start_ms = (now_ms() // (WINDOW * 1000) + 1) * WINDOW * 1000 + 2000
        starts = [args.every * (i + 1) - 2 for i in range(args.incidents)]
        gen = GeneratorConfig(
            seed=9,
            rows_per_second=args.rate,
            start_ms=start_ms,
            incidents=tuple(
                Incident(kind="null_burst", start=s, duration=WINDOW, fraction=0.8) for s in starts
            ),
        )
        producer = KafkaGeneratorProducer(bootstrap, "lat-src", gen).start()
        arrivals: list[tuple[int, dict[str, Any]]] = []
        end = time.time() + (starts[-1] + args.every + 30) + (start_ms / 1000 - time.time())
        try:
            while time.time() < end:
                for records in consumer.poll(timeout_ms=500).values():
                    for r in records:
                        arrivals.append((now_ms(), json.loads(r.value)))
                if job.poll() is not None:
                    raise SystemExit(f"the job died; see {tmp / 'job.log'}")
        finally:
            producer.stop()
            job.terminate()
            job.wait(60)
            consumer.close()
            log.close()

    latencies: list[float] = []
    for at, alert in arrivals:
        if alert["kind"] != "violation" or not alert.get("window"):
            continue
        from datetime import datetime

        w_end = datetime.fromisoformat(alert["window"]["end"]).timestamp() * 1000
        # the incident whose first record is the latest one not after the window's end
        begun = [s for s in starts if start_ms + s * 1000 < w_end]
        if not begun:
            continue
        entered = start_ms + begun[-1] * 1000
        latencies.append((at - entered) / 1000)
    violations = len(latencies)
    if not latencies:
        raise SystemExit(f"no violation alert arrived; see {tmp / 'job.log'}")
    latencies.sort()
    p95 = latencies[min(len(latencies) - 1, int(round(0.95 * (len(latencies) - 1))))]
    for v in latencies:
        print(f"latency {v:.2f} s")
    print(
        f"RESULT detectors_latency incidents={args.incidents} alerts={violations} "
        f"median_s={statistics.median(latencies):.2f} p95_s={p95:.2f} max_s={latencies[-1]:.2f}"
    )


if __name__ == "__main__":
    main()
