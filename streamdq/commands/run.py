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
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from streamdq.engine.streaming import stream
    from streamdq.spark import get_spark

    try:
        from streamdq.engine.config import load_run_config

        config = load_run_config(args.config)
    except ConfigError as exc:
        print(f"streamdq: configuration error: {exc}", file=sys.stderr)
        return 2
    spark = get_spark()
    try:
        runner = stream(spark, config)
    except ConfigError as exc:
        print(f"streamdq: configuration error: {exc}", file=sys.stderr)
        return 2
    query = runner.start()
    stopping = {"flag": False}

    def _stop(signum: int, frame: Any) -> None:
        stopping["flag"] = True

    previous = signal.signal(signal.SIGINT, _stop)
    signal.signal(signal.SIGTERM, _stop)
    deadline = time.monotonic() + args.duration if args.duration else None
    try:
        while query.isActive and not stopping["flag"]:
            if deadline is not None and time.monotonic() >= deadline:
                stopping["flag"] = True
                break
            query.awaitTermination(1)
    finally:
        signal.signal(signal.SIGINT, previous)
        runner.stop()
    failure = query.exception()
    if failure is not None and not stopping["flag"]:
        # a failure while we were stopping is the interrupted in-flight batch: it was not
        # committed and Spark replays it at the next start
        print(f"streamdq: the query failed: {failure}", file=sys.stderr)
        return 1
    return 0
