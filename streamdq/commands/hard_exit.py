"""End a read-only command's process without running native destructors.

The commands that only read the Delta tables (``query``, ``quarantine``, ``results``,
``alerts``) scan them through pyarrow datasets over delta-rs. Both keep native thread pools
(Arrow's CPU and I/O pools, delta-rs's tokio runtime: ~80 threads after one scan) that are
still alive when the interpreter finalizes; tearing them down in C++ static destructors
aborted up to 12 runs in 30 with ``terminate called without an active exception`` (exit
134) after the command had printed its answer (apache/arrow#34314, delta-io/delta-rs#2184).
These commands hold nothing that needs a clean shutdown (no Spark, no open writers), so the
console script ends them with ``os._exit`` once stdout and stderr are flushed.

A command opts in with ``mark(parser)``; ``streamdq.cli.main`` calls ``finish`` only when it
runs as the console script (``argv`` not given), so in-process callers (tests, notebooks)
get the exit code back as before.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys


def mark(parser: argparse.ArgumentParser) -> None:
    """Declare that ``parser``'s command may end its process with ``finish``."""
    parser.set_defaults(hard_exit=True)


def wanted(args: argparse.Namespace) -> bool:
    return bool(getattr(args, "hard_exit", False))


def finish(code: int) -> None:
    """Flush stdout and stderr, then leave the process with ``code`` at once."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)
