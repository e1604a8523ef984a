"""``streamdq quarantine --state PATH [--dataset D] [--since ISO] [--until ISO] [--limit N]
[--reason TEXT] [--format text|json]``: the records set aside (bad, late, poison), newest
``--limit`` in time order, with the reason and where each came from (``file:line`` for file
sources, ``topic[partition]@offset`` for Kafka) and its raw payload.

Text: one line per record, then the count per reason of the records shown (a reason with its
offending value cut off: ``field amount: expected DOUBLE got 'x'`` counts as ``field amount:
expected DOUBLE``). JSON: one array of
the ``quarantine`` table's rows (docs/state.md). See ``table_args`` for the shared options.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from typing import Any

from streamdq.commands.query import open_store
from streamdq.commands.table_args import add_common, clip, print_json, short_time
from streamdq.display import reason_kind


def register(sub: Any) -> None:
    p = sub.add_parser("quarantine", help="read the quarantined records of a state path")
    add_common(p)
    p.add_argument("--reason", help="only records whose reason contains this text (e.g. missing_field)")
    p.set_defaults(func=run)


def where(row: dict[str, Any]) -> str:
    """Where a record came from: ``file:line``, ``file``, ``topic[partition]@offset`` or ``-``."""
    if row.get("file"):
        name = str(row["file"]).rsplit("/", 1)[-1]
        return f"{name}:{row['line']}" if row.get("line") is not None else name
    if row.get("topic") is not None or row.get("offset") is not None:
        return f"{row.get('topic') or '?'}[{row.get('partition')}]@{row.get('offset')}"
    return "-"


def run(args: argparse.Namespace) -> int:
    from streamdq.state import schemas as S
    from streamdq.state.table_reads import read_rows

    store = open_store(args, "quarantine")
    if store is None:
        return 2
    try:
        table = read_rows(
            store,
            S.QUARANTINE,
            dataset=args.dataset,
            since=args.since,
            until=args.until,
            limit=None if args.reason else args.limit,
        )
    except ValueError as exc:
        print(f"streamdq quarantine: {exc}", file=sys.stderr)
        return 2
    rows = [r for r in table.drop_columns(["date"]).to_pylist() if _matches(r, args.reason)]
    rows = rows[-args.limit :]
    if args.format == "json":
        print_json(rows)
        return 0
    if not rows:
        print("no quarantined records" + (f" in dataset {args.dataset}" if args.dataset else ""))
        return 0
    for r in rows:
        print(
            f"{short_time(r['ingested_at'])} {r['dataset']} batch {r['batch_id']} {where(r)} "
            f"{clip(r['reason'], 60)} | {clip(r['raw'], 100)}"
        )
    reasons = Counter(reason_kind(part) for r in rows for part in _parts(r["reason"]))
    summary = ", ".join(f"{reason} {n}" for reason, n in reasons.most_common(8))
    print(f"{len(rows)} record(s): {summary}")
    return 0


def _matches(row: dict[str, Any], text: str | None) -> bool:
    return text is None or text.lower() in str(row.get("reason") or "").lower()


def _parts(reason: Any) -> list[str]:
    """The reasons of a record (the decoders join several with ``"; "``), each once."""
    return list(dict.fromkeys(str(reason or "unknown").split("; ")))
