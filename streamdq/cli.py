"""The ``streamdq`` command line: verify | run | demo | suggest | profile | query | backtest | autovalidate
| quarantine | results | alerts.

Each sub-command lives in its own module under ``streamdq.commands`` and exposes
``register(subparsers)``, which adds its parser and sets ``func`` (returning the exit code).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version

from streamdq.commands import hard_exit

# One module per sub-command; add a line here when adding a command.
COMMAND_MODULES = [
    "streamdq.commands.demo",
    "streamdq.commands.run",
    "streamdq.commands.verify",
    "streamdq.commands.profile",
    "streamdq.commands.suggest",
    "streamdq.commands.query",
    "streamdq.commands.backtest",
    "streamdq.commands.autovalidate",
    "streamdq.commands.serve",
    "streamdq.commands.quarantine",
    "streamdq.commands.results",
    "streamdq.commands.alerts",
]


def package_version() -> str:
    """The installed distribution's version (package metadata), else the source tree's."""
    try:
        return version("streamdq")
    except PackageNotFoundError:
        from streamdq import __version__

        return f"{__version__} (not installed)"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="streamdq", description="Always-on data-quality validation on Spark"
    )
    parser.add_argument("--version", action="version", version=f"streamdq {package_version()}")
    sub = parser.add_subparsers(dest="command", required=True)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    code = int(args.func(args))
    if argv is None and hard_exit.wanted(args):  # the console script of a read-only command
        hard_exit.finish(code)
    return code


if __name__ == "__main__":
    sys.exit(main())
