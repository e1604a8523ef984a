"""``streamdq query``: read the Delta state store (metric history, merged window states).

* ``streamdq query history --state PATH --dataset D --metric NAME [--instance I]
  [--scope batch|window|total] [--start ISO] [--end ISO] [--format text|json]``: one point per
  batch (batch, total scope) or window; a window still filling is marked ``open`` (text) /
  ``"open": true`` (JSON) as its value is partial, a closed one ``closed``. A metric computed
  with parameters or a ``where`` filter shows them after its instance.
* ``streamdq query merge --state PATH --dataset D --analyzer KEY_OR_SPEC --start ISO
  --end ISO [--format text|json]``: merges the stored window states in [start, end) and
  prints the analyzer's metric of the merged state (no data is rescanned).
* ``streamdq query pass --state PATH --dataset D [--scope batch|window|total] [--start ISO]
  [--end ISO] [--last N] [--format text|json]``: the measure/check/pass documents of the
  committed batches (``{"measure", "check", "pass"}`` with time, batch, scope and window),
  oldest first (docs/measure-check-pass.md).
* ``streamdq query measure --state PATH --dataset D --name NAME [--scope batch|window|total]
  [--last N] [--format text|json]``: the stored values of a SQL measure, oldest first
  (docs/measure-check-pass.md); a failed point shows its reason.

Times without a zone are taken as UTC. ``--storage-option KEY=VALUE`` (repeatable) is
passed to delta-rs for object stores. Exit codes: 0 ok, 2 bad arguments or no state.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from datetime import UTC, datetime
from typing import Any

from streamdq.commands import hard_exit


def iso_time(text: str) -> datetime:
    try:
        ts = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"not an ISO-8601 time: {text!r} (e.g. 2026-01-01T10:00:00Z)"
        ) from None
    return ts.replace(tzinfo=UTC) if ts.tzinfo is None else ts.astimezone(UTC)


def storage_option(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key, value


def register(sub: Any) -> None:
    query = sub.add_parser("query", help="query the state store (metric history, merged window states)")
    qsub = query.add_subparsers(dest="query_command", required=True)
    hard_exit.mark(query)

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--state", required=True, help="state root (directory or URI) of the Delta tables")
        p.add_argument("--dataset", required=True)
        p.add_argument("--format", choices=("text", "json"), default="text")
        p.add_argument(
            "--storage-option",
            type=storage_option,
            action="append",
            default=[],
            metavar="KEY=VALUE",
            help="delta-rs storage option (repeatable), e.g. AWS_ENDPOINT_URL=http://127.0.0.1:9000",
        )

    hist = qsub.add_parser("history", help="the time series of a metric")
    common(hist)
    hist.add_argument("--metric", required=True, help="metric (analyzer) name, e.g. Completeness")
    hist.add_argument("--instance", help="column(s) / instance, e.g. email")
    hist.add_argument("--scope", choices=("batch", "window", "total"))
    hist.add_argument("--start", type=iso_time, help="from this time (inclusive)")
    hist.add_argument("--end", type=iso_time, help="up to this time (exclusive)")
    hist.set_defaults(func=run_history)

    merge = qsub.add_parser("merge", help="merge stored window states over a time range")
    common(merge)
    merge.add_argument(
        "--analyzer",
        required=True,
        help='analyzer spec JSON (e.g. \'{"analyzer":"Mean","column":"amount"}\') or a stored state key',
    )
    merge.add_argument("--start", type=iso_time, required=True)
    merge.add_argument("--end", type=iso_time, required=True)
    merge.set_defaults(func=run_merge)

    measure = qsub.add_parser("measure", help="the stored values of a SQL measure")
    common(measure)
    measure.add_argument("--name", required=True, help="the measure's name, e.g. 'Null Count'")
    measure.add_argument("--scope", choices=("batch", "window", "total"), default="batch")
    measure.add_argument("--last", type=int, default=None, help="only the last N points")
    measure.set_defaults(func=run_measure)

    passed = qsub.add_parser("pass", help="the stored measure/check/pass documents over time")
    common(passed)
    passed.add_argument("--scope", choices=("batch", "window", "total"))
    passed.add_argument("--start", type=iso_time, help="batches processed from this time (inclusive)")
    passed.add_argument("--end", type=iso_time, help="up to this time (exclusive)")
    passed.add_argument("--last", type=int, default=None, help="only the last N documents")
    passed.set_defaults(func=run_pass)


def open_store(args: argparse.Namespace, command: str = "query") -> Any:
    """The ``DeltaStateStore`` under ``--state``, or None after printing why not."""
    from streamdq.state import DeltaStateStore

    store = DeltaStateStore(args.state, storage_options=dict(args.storage_option) or None)
    if not store.exists():
        print(
            f"streamdq {command}: no streamdq state under --state {args.state} (no reports table; "
            "--state is the run config's state path)",
            file=sys.stderr,
        )
        return None
    return store


def plain(value: Any) -> Any:
    """A JSON-friendly value: datetimes as ISO-8601 UTC, non-finite floats as text."""
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat()
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    return value


def run_history(args: argparse.Namespace) -> int:
    store = open_store(args)
    if store is None:
        return 2
    try:
        table = store.history(
            args.dataset,
            args.metric,
            instance=args.instance,
            scope=args.scope,
            start=args.start,
            end=args.end,
        )
    except ValueError as exc:
        print(f"streamdq query history: {exc}", file=sys.stderr)
        return 2
    rows = [{k: plain(v) for k, v in r.items()} for r in table.to_pylist()]
    for r in rows:
        if r["value_json"] is not None:
            r["value"] = json.loads(r["value_json"])
        del r["value_json"]
    if args.format == "json":
        print(json.dumps(rows, indent=None, default=str))
        return 0
    if not rows:
        print(f"no points for {args.metric} in dataset {args.dataset}")
        return 0
    from streamdq.connectors.sinks.series import series_identity

    print(f"{'time':<32} {'scope':<7} {'window':<7} {'instance':<20} {'value':>20} batch")
    for r in rows:
        value = r["failure"] and f"FAILED: {r['failure']}" or r["value"]
        state = "-" if r["open"] is None else "open" if r["open"] else "closed"
        instance = (r["instance"] + series_identity(r["analyzer_key"] or "").suffix()).removeprefix(", ")
        print(f"{r['time']:<32} {r['scope']:<7} {state:<7} {instance:<20} {value!s:>20} {r['batch_id']}")
    return 0


def run_measure(args: argparse.Namespace) -> int:
    from streamdq.state.measure_history import measure_series

    store = open_store(args)
    if store is None:
        return 2
    points = measure_series(store, args.dataset, args.name, scope=args.scope)
    if args.last is not None:
        points = points[-args.last :] if args.last > 0 else []
    rows = [
        {
            "time": plain(p.time),
            "scope": p.scope,
            "window_start": plain(p.window_start),
            "window_end": plain(p.window_end),
            "batch_id": p.batch_id,
            "result_type": p.result_type,
            "value": p.value,
            "failure": p.failure,
        }
        for p in points
    ]
    if args.format == "json":
        print(json.dumps(rows, default=str))
        return 0
    if not rows:
        print(f"no stored values of measure {args.name!r} ({args.scope} scope) in dataset {args.dataset}")
        return 0
    print(f"{'time':<32} {'scope':<7} {'batch':>6} value")
    for r in rows:
        shown = f"FAILED: {r['failure']}" if r["failure"] else json.dumps(r["value"])
        print(f"{r['time']:<32} {r['scope']:<7} {r['batch_id']:>6} {shown}")
    return 0


def run_pass(args: argparse.Namespace) -> int:
    """The measure/check/pass documents of the committed batches, oldest first (state/pass_history.py)."""
    from streamdq.state.pass_history import pass_documents

    store = open_store(args)
    if store is None:
        return 2
    try:
        docs = pass_documents(
            store, args.dataset, scope=args.scope, since=args.start, until=args.end, limit=args.last
        )
    except ValueError as exc:
        print(f"streamdq query pass: {exc}", file=sys.stderr)
        return 2
    if args.format == "json":
        print(json.dumps(docs, default=str))
        return 0
    if not docs:
        print(f"no measure/check/pass documents for dataset {args.dataset}")
        return 0
    print(f"{'time':<32} {'scope':<7} {'batch':>6} {'pass':<5} failed checks / window")
    for d in docs:
        doc = d["measure_check_pass"] or {}
        failed = ", ".join(name for name, ok in (doc.get("check") or {}).items() if not ok) or "-"
        window = f"  [{d['window'][0]} .. {d['window'][1]})" if d["window"] else ""
        verdict = "true" if doc.get("pass") else "false"
        print(f"{d['time']:<32} {d['scope']:<7} {d['batch_id']:>6} {verdict:<5} {failed}{window}")
    return 0


def _no_windows(store: Any, args: argparse.Namespace, state_key: str) -> int:
    """Exit 2 naming why nothing was merged: the analyzer was never stored (listing what is),
    or it has no window states in the range."""
    from streamdq.state.stored_analyzers import describe, stored_in_delta

    stored = stored_in_delta(store, args.dataset)
    if state_key not in stored:
        print(
            f"streamdq query merge: no window states: --analyzer {args.analyzer} was not stored for dataset "
            f"{args.dataset!r} under --state {args.state}; stored analyzers: {describe(stored)}",
            file=sys.stderr,
        )
        return 2
    print(
        f"streamdq query merge: no window states for {state_key!r} in dataset {args.dataset} "
        f"between {args.start.isoformat()} and {args.end.isoformat()}",
        file=sys.stderr,
    )
    return 2


def run_merge(args: argparse.Namespace) -> int:
    from streamdq.state import merge_range_detail

    store = open_store(args)
    if store is None:
        return 2
    try:
        result = merge_range_detail(store, args.dataset, args.analyzer, args.start, args.end)
    except (ValueError, KeyError) as exc:
        print(f"streamdq query merge: {exc}", file=sys.stderr)
        return 2
    metric = result.metric()
    if metric is None or result.windows == 0:
        return _no_windows(store, args, result.state_key)
    out = {
        "dataset": args.dataset,
        "analyzer": result.analyzer.to_spec() if result.analyzer else None,
        "state_key": result.state_key,
        "start": args.start.isoformat(),
        "end": args.end.isoformat(),
        "windows": result.windows,
        "metric": metric.to_dict(),
    }
    if args.format == "json":
        print(json.dumps(out, default=str))
        return 0
    shown = f"FAILED: {metric.failure}" if metric.failure else metric.value
    print(
        f"{metric.name}({metric.instance}) over {result.windows} window(s) "
        f"[{out['start']}, {out['end']}): {shown}"
    )
    return 0
