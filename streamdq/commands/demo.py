"""``streamdq demo``: the embedded default (see README)."""

from __future__ import annotations

import argparse
from typing import Any


def register(sub: Any) -> None:
    demo = sub.add_parser("demo", help="run the embedded demo")
    demo.add_argument("--rows", type=int, default=20_000, help="rows in the generated sample table")
    demo.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from streamdq.demo import run_demo

    return run_demo(args)
