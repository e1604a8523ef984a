"""``streamdq alerts --state PATH [--dataset D] [--since ISO] [--until ISO] [--limit N]
[--kind violation|anomaly|resolved] [--format text|json]``: the alerts the alert policy
raised and resolved, read from the stored report of each committed batch (the same documents
the alert sinks deliver, schema ``streamdq.alert/v1``, docs/alerts.md), newest ``--limit`` in
time order; the range is on the batch's processing time.

Text: ``time kind [severity] dataset check: message``. JSON: one array of alert documents.
See ``table_args`` for the shared options.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from streamdq.commands.query import open_store
from streamdq.commands.table_args import add_common, clip, print_json, short_time


def register(sub: Any) -> None:
    p = sub.add_parser("alerts", help="read the alerts raised and resolved under a state path")
    add_common(p)
    p.add_argument("--kind", choices=("violation", "anomaly", "resolved"), help="only this kind of alert")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from streamdq.state.table_reads import alert_rows

    store = open_store(args, "alerts")
    if store is None:
        return 2
    try:
        alerts = alert_rows(store, dataset=args.dataset, since=args.since, until=args.until)
    except ValueError as exc:
        print(f"streamdq alerts: {exc}", file=sys.stderr)
        return 2
    if args.kind:
        alerts = [a for a in alerts if a.get("kind") == args.kind]
    alerts = alerts[-args.limit :]
    if args.format == "json":
        print_json(alerts)
        return 0
    if not alerts:
        print("no alerts" + (f" in dataset {args.dataset}" if args.dataset else ""))
        return 0
    for a in alerts:
        print(
            f"{short_time(a.get('processing_time'))} {a.get('kind', '?'):<9} [{a.get('severity')}] "
            f"{a.get('dataset')} {a.get('check')}: {clip(a.get('message'), 160)}"
        )
    return 0
