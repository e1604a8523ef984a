"""The arguments and output helpers the table-reading commands share (``streamdq quarantine``,
``streamdq results``, ``streamdq alerts``).

Each takes ``--state PATH`` (the state root of a run config), optional ``--dataset``,
``--since``/``--until`` (ISO-8601; without a zone UTC; ``since <= time < until``),
``--limit N`` (the newest N, default 50, printed oldest first), ``--format text|json`` (JSON:
one array of objects) and ``--storage-option KEY=VALUE`` for object stores. Exit codes: 0 ok
(also when nothing matched), 2 bad arguments or no streamdq state under ``--state``.
"""

from __future__ import annotations

import argparse
import json
from datetime import UTC, datetime
from typing import Any

from streamdq.commands import hard_exit
from streamdq.commands.query import iso_time, plain, storage_option

DEFAULT_LIMIT = 50


def positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}")
    return value


def add_common(p: argparse.ArgumentParser) -> None:
    """The shared options; marks the command as read-only (see ``hard_exit``)."""
    p.add_argument("--state", required=True, help="state root (directory or URI) of the Delta tables")
    p.add_argument("--dataset", help="only this dataset (default: all)")
    p.add_argument("--since", type=iso_time, help="from this time, inclusive (ISO-8601; UTC if no zone)")
    p.add_argument("--until", type=iso_time, help="up to this time, exclusive")
    p.add_argument(
        "--limit", type=positive, default=DEFAULT_LIMIT, help=f"the newest N rows (default {DEFAULT_LIMIT})"
    )
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument(
        "--storage-option",
        type=storage_option,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="delta-rs storage option (repeatable), e.g. AWS_ENDPOINT_URL=http://127.0.0.1:9000",
    )
    hard_exit.mark(p)


def print_json(rows: list[dict[str, Any]]) -> None:
    print(json.dumps([{k: plain(v) for k, v in r.items()} for r in rows], default=str))


def short_time(value: Any) -> str:
    """``2026-01-01 10:00:00`` (UTC) for a datetime or an ISO-8601 string, else ``-``."""
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            return value
    if isinstance(value, datetime):
        return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")
    return "-"


def clip(text: Any, width: int) -> str:
    """One line of at most ``width`` characters (newlines shown as spaces, ``...`` when cut)."""
    s = " ".join(str("" if text is None else text).split())
    return s if len(s) <= width else s[: width - 3] + "..."
