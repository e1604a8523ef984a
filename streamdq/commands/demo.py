"""``streamdq demo``: the embedded default (see README and streamdq/live_demo.py).

By default the live streaming demo: embedded Kafka-protocol broker, generator with incidents,
the streaming job with Delta state, console summary, Prometheus endpoint and Kafka alert topic.
``--batch`` runs the batch verification of a generated sample table instead.
"""

from __future__ import annotations

import argparse
from typing import Any


def register(sub: Any) -> None:
    demo = sub.add_parser("demo", help="run the embedded demo (streaming; --batch for batch verification)")
    demo.add_argument("--batch", action="store_true", help="batch verification of a generated table instead")
    demo.add_argument("--rows", type=int, default=20_000, help="--batch: rows in the generated sample table")
    demo.add_argument("--duration", type=float, default=150.0, help="seconds to run before stopping cleanly")
    demo.add_argument("--rate", type=float, default=100.0, help="generated events per second")
    demo.add_argument("--incident-every", type=float, default=60.0, help="seconds between injected incidents")
    demo.add_argument("--window", type=int, default=20, help="event-time window length in seconds")
    demo.add_argument("--trigger", type=int, default=5, help="trigger interval in seconds")
    demo.add_argument("--seed", type=int, default=1, help="generator seed")
    demo.add_argument(
        "--workdir", default=".demo", help="where the demo keeps broker data, checkpoint and state"
    )
    demo.add_argument("--keep", action="store_true", help="keep state from a previous demo run")
    demo.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.batch:
        from streamdq.demo import run_demo

        return run_demo(args)
    from streamdq.live_demo import run_live_demo

    return run_live_demo(args)
