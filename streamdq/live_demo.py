"""The embedded streaming demo behind ``make demo`` / ``streamdq demo``.

Starts, on loopback and with nothing to install by hand:

1. a Kafka-protocol broker on a free port (``EmbeddedBroker``), topics ``orders`` (3
   partitions) and ``streamdq-alerts``;
2. the generator producing order events into ``orders`` in real time, with an incident
   (null burst, unit change x100, volume drop, new categories, duplicate ids, schema drift,
   late data) injected every ``--incident-every`` seconds;
3. the streaming job over the topic with the packaged ``demo_stream_checks.yaml``, Delta
   state under ``--workdir``, a console summary per batch and closed window, a Prometheus
   endpoint and the Kafka alert topic.

It stops cleanly on Ctrl-C or after ``--duration`` seconds and prints where everything is.
The same run config works against a real cluster: see docs/streaming.md.
"""

from __future__ import annotations

import argparse
import shutil
import signal
import sys
import time
from importlib import resources
from pathlib import Path
from typing import Any

DEMO_TOPIC = "orders"
ALERT_TOPIC = "streamdq-alerts"


def demo_checks_path() -> str:
    return str(resources.files("streamdq.examples").joinpath("demo_stream_checks.yaml"))


def demo_config(
    workdir: Path, bootstrap: str, prometheus_port: int, args: argparse.Namespace
) -> dict[str, Any]:
    """The run config of the demo (a plain dict, validated like any YAML run config)."""
    from streamdq.connectors.sources.generator import GENERATOR_REQUIRED, GENERATOR_SCHEMA_DDL

    return {
        "dataset": "orders",
        "source": {
            "type": "kafka",
            "bootstrap_servers": bootstrap,
            "topic": DEMO_TOPIC,
            "starting_offsets": "earliest",
            "max_records_per_trigger": 20_000,
            "format": "json",
            "schema": GENERATOR_SCHEMA_DDL,
            "required": list(GENERATOR_REQUIRED),
        },
        "event_time": "ts",
        "window": f"{args.window} seconds",
        "watermark": "10 seconds",
        "trigger": f"{args.trigger} seconds",
        "checkpoint": str(workdir / "checkpoint"),
        "state": {"path": str(workdir / "state")},
        "quarantine": True,
        "checks_file": demo_checks_path(),
        "alerts": {"cooldown_seconds": 0},
        "sinks": [
            {"type": "console"},
            {"type": "jsonl", "path": str(workdir / "reports.jsonl")},
            {"type": "prometheus", "host": "127.0.0.1", "port": prometheus_port},
            {"type": "kafka", "bootstrap_servers": bootstrap, "topic": ALERT_TOPIC},
        ],
    }


def run_live_demo(args: argparse.Namespace) -> int:
    from pyspark.sql import SparkSession

    from streamdq.connectors.broker import BrokerUnavailable, EmbeddedBroker, free_port
    from streamdq.connectors.sources.generator import GeneratorConfig, rolling_incidents
    from streamdq.connectors.sources.generator_producer import KafkaGeneratorProducer
    from streamdq.engine.config import load_run_config
    from streamdq.engine.streaming import stream
    from streamdq.spark import get_spark, stop_spark

    workdir = Path(args.workdir).resolve()
    if workdir.exists() and not args.keep:
        shutil.rmtree(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        broker = EmbeddedBroker(data_dir=str(workdir / "broker")).start()
    except BrokerUnavailable as exc:
        print(f"streamdq demo: could not start the embedded Kafka broker: {exc}", file=sys.stderr)
        return 1
    producer = None
    runner = None
    spark = None
    owned = False
    console = None
    try:
        broker.create_topic(DEMO_TOPIC, partitions=3)
        broker.create_topic(ALERT_TOPIC, partitions=1)
        incidents = rolling_incidents(every=args.incident_every, duration=args.incident_every / 2)
        gen = GeneratorConfig(seed=args.seed, rows_per_second=args.rate, incidents=incidents)
        producer = KafkaGeneratorProducer(broker.bootstrap_servers, DEMO_TOPIC, gen).start()
        port = free_port()
        config = load_run_config(
            demo_config(workdir, broker.bootstrap_servers, port, args), base_dir=str(workdir)
        )
        print(f"streamdq demo: broker {broker.bootstrap_servers} ({broker.kind}), topic '{DEMO_TOPIC}'")
        print(
            f"streamdq demo: {args.rate:g} events/s, an incident every {args.incident_every:g} s: "
            + ", ".join(i.kind for i in incidents[:7])
        )
        print(f"streamdq demo: Prometheus metrics at http://127.0.0.1:{port}/metrics")
        from streamdq.service.process import start_console  # the web console beside the job

        console = start_console(workdir / "state")
        if console is not None:
            print(f"streamdq demo: web console at {console.url}")
        print(f"streamdq demo: alerts on Kafka topic '{ALERT_TOPIC}'; state (Delta) in {workdir / 'state'}")
        print(f"streamdq demo: running for {args.duration:g} s (Ctrl-C stops earlier)\n", flush=True)
        owned = SparkSession.getActiveSession() is None
        spark = get_spark()
        runner = stream(spark, config)
        stop = {"flag": False}

        def _stop(signum: int, frame: Any) -> None:
            stop["flag"] = True

        previous = signal.signal(signal.SIGINT, _stop)
        try:
            # under the supervisor: a worker that did not connect back in time (a loaded
            # machine), a broker hiccup, are restarted from the checkpoint (docs/streaming.md)
            outcome = runner.run_supervised(lambda: stop["flag"], time.monotonic() + args.duration)
        finally:
            signal.signal(signal.SIGINT, previous)
        if outcome.exit_code != 0:
            print(f"streamdq demo: the query failed: {outcome.message}", file=sys.stderr)
            return outcome.exit_code
        handler = runner.handler
        batches = handler.batches_committed if handler else 0
        print(f"\nstreamdq demo: stopped after {batches} committed batches; produced {producer.sent} events.")
        print(
            f"streamdq demo: query the history with: streamdq query history --state {workdir / 'state'} "
            "--dataset orders --metric Size --scope window"
        )
        return 0
    finally:
        if console is not None:
            console.stop()
        if runner is not None:
            runner.stop()
        if spark is not None and owned:
            stop_spark(spark)  # not left to the JVM's shutdown hook (stack traces after a stop)
        if producer is not None:
            producer.stop()
        broker.stop()
