"""``streamdq run config.yaml [--duration SECONDS]``: the always-on streaming job."""

from __future__ import annotations

import argparse
import signal
import sys
import time
from typing import Any

from streamdq.errors import ConfigError


def register(sub: Any) -> None:
    p = sub.add_parser("run", help="run the streaming validator for a run config")
    p.add_argument("config", help="run config YAML (see docs/streaming.md)")
    p.add_argument("--duration", type=float, default=None, help="stop cleanly after this many seconds")
    p.add_argument(
        "--check-config",
        action="store_true",
        help="check the whole config without starting Spark: exit 0 with a summary, or 2 with every error",
    )
    p.add_argument(
        "--heartbeat",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="print an idle line every SECONDS while no batch arrives (default 60)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # the whole config, every mistake at once, before Spark starts (streamdq/engine/config_check.py)
    from streamdq.engine.config_check import check_run_config, format_errors

    try:
        checked = check_run_config(args.config)
    except ConfigError as exc:
        print(format_errors(exc), file=sys.stderr)
        return 2
    if getattr(args, "check_config", False):
        print(checked.summary())
        return 0
    config = checked.config

    from pyspark.sql import SparkSession

    from streamdq.engine.streaming import stream
    from streamdq.spark import get_spark, stop_spark

    owned = SparkSession.getActiveSession() is None  # a session made here is stopped here
    spark = None
    try:
        spark = get_spark()
        try:
            runner = stream(spark, config)
        except ConfigError as exc:
            print(f"streamdq: configuration error: {exc}", file=sys.stderr)
            return 2
        # start banner, idle heartbeat, summary on stop (streamdq/engine/progress.py)
        from streamdq.engine.progress import attach

        progress = attach(runner, heartbeat_seconds=getattr(args, "heartbeat", 60.0))
        try:
            return _supervise(runner, args, progress.tick)
        finally:
            progress.print_summary()
    except KeyboardInterrupt:  # Ctrl-C before the loop took over the signals
        print("streamdq: interrupted", file=sys.stderr)
        return 130
    finally:
        if spark is not None and owned:
            stop_spark(spark)


def _supervise(runner: Any, args: argparse.Namespace, tick: Any = lambda: False) -> int:
    """Run the query under the supervisor until Ctrl-C/SIGTERM, ``--duration`` or a failure
    that is not retried; the exit code tells which (0 stopped, 1 failed)."""
    stopping = {"flag": False}

    def _stop(signum: int, frame: Any) -> None:
        stopping["flag"] = True

    previous = signal.signal(signal.SIGINT, _stop)
    previous_term = signal.signal(signal.SIGTERM, _stop)
    deadline = time.monotonic() + args.duration if args.duration else None
    try:
        # the supervisor restarts the query from its checkpoint on transient failures and
        # handles poison batches (docs/streaming.md, "Supervision"); it stops the query and
        # closes the sinks before it returns
        outcome = runner.run_supervised(lambda: tick() or stopping["flag"], deadline)
    finally:
        signal.signal(signal.SIGINT, previous)
        signal.signal(signal.SIGTERM, previous_term)
    if outcome.exit_code != 0:
        print(f"streamdq: the query failed: {outcome.message}", file=sys.stderr)
        return outcome.exit_code
    return 0
