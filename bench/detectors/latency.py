"""Incident-to-alert latency (issue 4): time from an incident's first record entering the source
topic to its violation alert arriving on the alert topic, median and p95, with every incident
accounted for.

Runs everything for real on loopback: an ``EmbeddedBroker``, the streaming job (``streamdq run``)
as a subprocess reading the source topic with a 5 s window, 1 s watermark and 1 s trigger, a paced
``KafkaGeneratorProducer`` at ``--rate`` rows/s with a 5 s null burst (80% NULL ``amount``) every
``--every`` seconds, and a kafka-python consumer on the alert topic. The check is
``completeness(amount) >= 0.7`` at window scope; each burst makes exactly one window fail (the
burst starts on a window boundary and the 0-2 s event-time jitter moves ~1 s of it into the
previous window, which stays above 0.7).

Phases:

1. Warm-up: a clean generator feeds the topic until the job has committed a batch that read at
   most ``--ready-lag`` seconds of data (Spark started, first jobs compiled, backlog worked off). Start-up time is reported, not mixed into the latencies.
2. Measurement: the incident generator starts on the next window boundary (+2 s, after every
   warm-up record); the consumer listens until every incident's alert has arrived or
   ``--grace`` seconds after the last incident's window ended.
3. Accounting: the job's committed reports (Delta ``reports`` table) say, for each incident
   window, which batch closed it, whether the check failed there, whether the alert policy
   emitted an alert, and whether that alert arrived on the topic. Every incident ends in exactly
   one class: ``alerted``, ``not_delivered`` (emitted, never arrived), ``held_by_policy`` (failed,
   no alert), ``check_passed`` (closed, did not fail) or ``window_not_closed`` (job stopped
   first). Violation alerts for non-incident windows are counted as ``false_alerts``.

``--backlog N`` starts the job only after N incidents have entered the topic (a restart with a
backlog: the first batch closes several incident windows at once); those N incidents are
accounted for but their latencies (start-up included) are reported apart.

An incident "enters" when the producer's clock reaches its first record (records are produced
when due, at most ``tick`` = 0.1 s late); the alert "arrives" when the consumer receives it.

Last line: ``RESULT detectors_latency incidents=N alerted=M median_s=.. p95_s=.. max_s=..
unaccounted=0 ...``.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
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

from streamdq.report import BatchReport

WINDOW = 5
CLASSES = ("alerted", "not_delivered", "held_by_policy", "check_passed", "window_not_closed")


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


def read_reports(state_dir: Path) -> list[BatchReport]:
    """Every committed report of the job, by batch id (empty before the first commit)."""
    from deltalake import DeltaTable

    path = state_dir / "reports"
    if not (path / "_delta_log").exists():
        return []
    try:
        rows = DeltaTable(str(path)).to_pyarrow_table(columns=["report"]).column("report").to_pylist()
    except Exception:  # the table is being created by the job
        return []
    return sorted((BatchReport.from_json(r) for r in rows), key=lambda r: r.batch_id)


def _ms(value: datetime | str) -> int:
    when = datetime.fromisoformat(value) if isinstance(value, str) else value
    return int(round(when.timestamp() * 1000))


@dataclass
class IncidentFate:
    """What happened to one incident, from the topic and the job's reports."""

    window_ms: int  # window start = the time the incident's first record was due
    backlog: bool = False
    closed_batch: int | None = None
    judged_ms: int | None = None  # processing time of the batch that closed the window
    failed: bool = False
    emitted: bool = False
    arrived_ms: int | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def klass(self) -> str:
        if self.arrived_ms is not None:
            return "alerted"
        if self.emitted:
            return "not_delivered"
        if self.failed:
            return "held_by_policy"
        if self.closed_batch is not None:
            return "check_passed"
        return "window_not_closed"

    @property
    def latency_s(self) -> float | None:
        return None if self.arrived_ms is None else (self.arrived_ms - self.window_ms) / 1000


def account(
    windows_ms: list[int],
    backlog: int,
    reports: list[BatchReport],
    arrivals: list[tuple[int, dict[str, Any]]],
) -> tuple[list[IncidentFate], int]:
    """Classify every incident window (see the module docstring); also count false alerts."""
    incidents = {w: IncidentFate(w, backlog=i < backlog) for i, w in enumerate(windows_ms)}
    for report in reports:
        for window in report.closed_windows:
            inc = incidents.get(_ms(window.start))
            if inc is not None and inc.closed_batch is None:
                inc.closed_batch = report.batch_id
                inc.judged_ms = _ms(report.processing_time)
        for check in report.check_results:
            for result in check.constraint_results:
                if result.scope == "window" and result.window is not None and result.failed:
                    inc = incidents.get(_ms(result.window.start))
                    if inc is not None:
                        inc.failed = True
        for alert in report.alerts:
            if alert.get("kind") == "violation" and alert.get("window"):
                inc = incidents.get(_ms(alert["window"]["start"]))
                if inc is not None:
                    inc.emitted = True
    false_alerts = 0
    seen: set[str] = set()
    for at, alert in arrivals:
        if alert.get("kind") != "violation" or alert.get("alert_id") in seen:
            continue
        seen.add(alert["alert_id"])
        inc = incidents.get(_ms(alert["window"]["start"])) if alert.get("window") else None
        if inc is None:
            false_alerts += 1
        elif inc.arrived_ms is None:
            inc.arrived_ms = at
        else:
            inc.notes.append("second alert")
    return [incidents[w] for w in windows_ms], false_alerts


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--incidents", type=int, default=20)
    p.add_argument("--every", type=int, default=15, help="seconds between incident starts (multiple of 5)")
    p.add_argument("--rate", type=float, default=100.0)
    p.add_argument("--grace", type=float, default=240.0, help="seconds to wait after the last window ends")
    p.add_argument(
        "--ready-lag",
        type=float,
        default=10.0,
        help="warm-up ends when a batch reads <= this many seconds of data",
    )
    p.add_argument("--startup-timeout", type=float, default=900.0)
    p.add_argument("--backlog", type=int, default=0, help="start the job after this many incidents")
    args = p.parse_args()
    # a terminated bench still stops its producer, job and broker (the finally blocks below)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if args.every % WINDOW or args.every < 3 * WINDOW:
        raise SystemExit(f"--every must be a multiple of {WINDOW} and >= {3 * WINDOW}")
    from kafka import KafkaConsumer

    tmp = Path(tempfile.mkdtemp(prefix="streamdq-latency-"))
    print(f"work dir {tmp}", flush=True)
    arrivals: list[tuple[int, dict[str, Any]]] = []
    starts = [args.every * (i + 1) - 2 for i in range(args.incidents)]
    startup_s: float | None = None
    with EmbeddedBroker() as broker:
        bootstrap = broker.bootstrap_servers
        broker.create_topic("lat-src", partitions=1)
        broker.create_topic("lat-alerts", partitions=1)
        config = _config(tmp, bootstrap, "lat-src", "lat-alerts")
        env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable)
        log = open(tmp / "job.log", "ab")  # noqa: SIM115
        consumer = KafkaConsumer("lat-alerts", bootstrap_servers=bootstrap, auto_offset_reset="earliest")

        def launch() -> subprocess.Popen[bytes]:
            return subprocess.Popen(
                [sys.executable, "-m", "streamdq.cli", "run", str(config)], stdout=log, stderr=log, env=env
            )

        def listen(job: subprocess.Popen[bytes] | None, seconds: float) -> None:
            until = time.time() + seconds
            while True:
                for records in consumer.poll(timeout_ms=200).values():
                    for r in records:
                        arrivals.append((now_ms(), json.loads(r.value)))
                if job is not None and job.poll() is not None:
                    raise SystemExit(f"the job died; see {tmp / 'job.log'}")
                if time.time() >= until:
                    return

        job: subprocess.Popen[bytes] | None = None
        producer: KafkaGeneratorProducer | None = None
        try:
            launched = time.time()
            if args.backlog == 0:
                job = launch()
                warm = KafkaGeneratorProducer(
                    bootstrap, "lat-src", GeneratorConfig(seed=3, rows_per_second=args.rate)
                ).start()
                try:
                    while True:
                        listen(job, 1.0)
                        reports = read_reports(tmp / "state")
                        # caught up: the latest batch read at most --ready-lag seconds of data
                        if (
                            len(reports) >= 2
                            and reports[-1].counters.get("input_rows", 0) <= args.rate * args.ready_lag
                        ):
                            startup_s = time.time() - launched
                            break
                        if time.time() - launched > args.startup_timeout:
                            raise SystemExit(f"the job did not catch up; see {tmp / 'job.log'}")
                finally:
                    warm.stop()
            # first record 2 s after a window boundary: jitter (0-2 s) never opens an earlier window
            # (nor reaches back into the warm-up's); incidents start on window boundaries
            start_ms = (now_ms() // (WINDOW * 1000) + 1) * WINDOW * 1000 + 2000
            gen = GeneratorConfig(
                seed=9,
                rows_per_second=args.rate,
                start_ms=start_ms,
                incidents=tuple(
                    Incident(kind="null_burst", start=s, duration=WINDOW, fraction=0.8) for s in starts
                ),
            )
            producer = KafkaGeneratorProducer(bootstrap, "lat-src", gen).start()
            windows_ms = [start_ms + s * 1000 for s in starts]
            if job is None:
                listen(None, (windows_ms[args.backlog - 1] + args.every * 1000 - now_ms()) / 1000)
                launched = time.time()
                job = launch()
            last_end = windows_ms[-1] + WINDOW * 1000
            while True:
                listen(job, 2.0)
                received = {
                    _ms(a["window"]["start"])
                    for _, a in arrivals
                    if a.get("kind") == "violation" and a.get("window")
                }
                if all(w in received for w in windows_ms):
                    listen(job, 5.0)  # a second alert for one incident would show up here
                    break
                if now_ms() > last_end + args.grace * 1000:
                    break
        finally:
            if producer is not None:
                producer.stop()
            if job is not None:
                job.terminate()
                job.wait(60)
            consumer.close()
            log.close()

    incidents, false_alerts = account(windows_ms, args.backlog, read_reports(tmp / "state"), arrivals)
    counts = Counter(i.klass for i in incidents)
    for n, inc in enumerate(incidents):
        judged = f"{(inc.judged_ms - inc.window_ms) / 1000:6.2f}" if inc.judged_ms is not None else "     -"
        latency = f"{inc.latency_s:6.2f}" if inc.latency_s is not None else "     -"
        print(
            f"incident {n:2d} window +{(inc.window_ms - windows_ms[0]) / 1000:4.0f} s  batch {inc.closed_batch!s:>5}  "
            f"judged_s {judged}  latency_s {latency}  {inc.klass}{' (backlog)' if inc.backlog else ''}"
            + (f"  [{', '.join(inc.notes)}]" if inc.notes else "")
        )
    steady = [i.latency_s for i in incidents if not i.backlog and i.latency_s is not None]
    backlog = [i.latency_s for i in incidents if i.backlog and i.latency_s is not None]
    unaccounted = len(incidents) - sum(counts.values())
    summary = " ".join(f"{k}={counts.get(k, 0)}" for k in CLASSES)
    figures = (
        f"median_s={statistics.median(steady):.2f} p95_s={_p95(steady):.2f} max_s={max(steady):.2f}"
        if steady
        else "median_s=nan p95_s=nan max_s=nan"
    )
    extra = f" backlog={args.backlog} backlog_max_s={max(backlog):.2f}" if backlog else ""
    startup = f" startup_s={startup_s:.1f}" if startup_s is not None else ""
    print(
        f"RESULT detectors_latency incidents={len(incidents)} {summary} false_alerts={false_alerts} "
        f"measured={len(steady)} {figures}{extra}{startup} unaccounted={unaccounted}"
    )


if __name__ == "__main__":
    main()
