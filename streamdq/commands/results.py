"""``streamdq results --state PATH [--dataset D] [--since ISO] [--until ISO] [--limit N]
[--failed] [--format text|json]``: the constraint outcomes of committed batches, newest
``--limit`` in time order (``time`` is the window start for window-scope results, else the
batch's processing time).

Text: ``time dataset scope status [level] check: constraint -> value (bound) message``.
JSON: one array of the ``results`` table's rows (docs/state.md). ``--failed`` keeps failures
only. See ``table_args`` for the shared options.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from streamdq.commands.query import open_store
from streamdq.commands.table_args import add_common, clip, print_json, short_time


def register(sub: Any) -> None:
    p = sub.add_parser("results", help="read the constraint results of a state path")
    add_common(p)
    p.add_argument("--failed", action="store_true", help="only failed constraints")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import pyarrow.dataset as pads

    from streamdq.state import schemas as S
    from streamdq.state.table_reads import read_rows

    store = open_store(args, "results")
    if store is None:
        return 2
    try:
        table = read_rows(
            store,
            S.RESULTS,
            dataset=args.dataset,
            since=args.since,
            until=args.until,
            limit=args.limit,
            where=(pads.field("status") != "Success") if args.failed else None,
        )
    except ValueError as exc:
        print(f"streamdq results: {exc}", file=sys.stderr)
        return 2
    rows = table.drop_columns(["date"]).to_pylist()
    if args.format == "json":
        print_json(rows)
        return 0
    if not rows:
        print("no constraint results" + (f" in dataset {args.dataset}" if args.dataset else ""))
        return 0
    for r in rows:
        value = r["metric_value"] if r["metric_value"] is not None else r["metric_value_json"]
        shown = f"{value:.6g}" if isinstance(value, float) else str(value if value is not None else "n/a")
        line = (
            f"{short_time(r['time'])} {r['dataset']} {r['scope']:<6} {r['status']:<7} [{r['level']}] "
            f"{r['check']}: {clip(r['constraint'], 70)} -> {shown}"
        )
        if r["bound"]:
            line += f" (expected {clip(r['bound'], 40)})"
        if r["message"] and r["status"] != "Success":
            line += f" {clip(r['message'], 100)}"
        print(line)
    return 0
