"""``streamdq backtest``: replay stored metric history through detectors and print what they flag.

Two forms:

* ``streamdq backtest --config run.yaml [--start ISO] [--end ISO] [--all]`` replays every
  ``has_no_anomalies`` constraint of the run config's checks over the metric history in the
  config's state store;
* ``streamdq backtest --state PATH --dataset D --metric NAME [--instance I] [--scope window]
  --detector '{"type": "online_normal", "lower_factor": 3}'`` tunes one detector on one series;
* ``streamdq backtest --quality-score [--config run.yaml | --state PATH --dataset D]
  [--quality-config '{"alert_at": 6, "period": 24}']`` replays every closed window's metrics
  (all series of the dataset, as the streaming monitor sees them) through the table-level
  quality score and prints the score of every window (``--all``: with its message) and the
  windows it would flag.
  The settings are the config's ``quality_score:`` mapping, overridden key by key by
  ``--quality-config``; windows that are still open (ending after the last committed
  watermark) are left out.

Only closed windows are judged, as in the streaming job: a window still filling (its end after
the last committed watermark, ``open`` in ``query history``) holds a partial value and is left
out (the header says how many). A ``has_no_anomalies`` constraint of the config replays its own
analyzer's series (its parameters and ``where`` filter), not every metric of that name.

Nothing is written: the detectors start from their initial state, so the output shows what the
configuration would have flagged over the range (tune without waiting for new data).
Exit codes: 0 done (anomalies or not), 2 bad usage or configuration.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime
from typing import Any

from streamdq.errors import ConfigError


def register(sub: Any) -> None:
    p = sub.add_parser("backtest", help="replay stored metric history through detector configurations")
    p.add_argument("--config", help="run config: backtest its has_no_anomalies constraints")
    p.add_argument("--state", help="state store path (default: the config's state.path)")
    p.add_argument("--dataset", help="dataset (default: the config's dataset)")
    p.add_argument("--metric", help="metric name, e.g. Size or Completeness (with --detector)")
    p.add_argument("--instance", help="column(s) of the metric, '*' for dataset metrics")
    p.add_argument("--scope", default="window", choices=["batch", "window", "total"])
    p.add_argument("--detector", help='detector spec as JSON, e.g. \'{"type": "online_normal"}\'')
    p.add_argument("--start", help="ISO-8601 start of the range (inclusive)")
    p.add_argument("--end", help="ISO-8601 end of the range (exclusive)")
    p.add_argument("--all", action="store_true", help="print every point, not only the flagged ones")
    p.add_argument(
        "--quality-score",
        action="store_true",
        help="replay all window metrics of the dataset through the table-level quality score",
    )
    p.add_argument(
        "--quality-config",
        help='quality score settings as JSON, e.g. \'{"alert_at": 6, "period": 24}\' (with --quality-score)',
    )
    p.set_defaults(func=run)


def _when(text: str | None, flag: str) -> datetime | None:
    if not text:
        return None
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        raise ConfigError(
            flag, f"expected an ISO-8601 time such as 2026-11-22T10:00:00, got {text!r}"
        ) from None
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def _series(
    store: Any,
    dataset: str,
    metric: str,
    instance: str | None,
    scope: str,
    start: Any,
    end: Any,
    analyzer_key: str | None = None,
) -> tuple[list[Any], int]:
    """(the points to judge, how many open windows were left out). ``analyzer_key`` picks one
    analyzer's series among metrics of the same name (other parameters or ``where`` filters)."""
    from streamdq.detectors import Point

    table = store.history(dataset, metric, instance=instance, scope=scope, start=start, end=end)
    rows = sorted(table.to_pylist(), key=lambda r: r["time"])
    if analyzer_key is not None:
        mine = [r for r in rows if (r.get("analyzer_key") or "") == analyzer_key]
        rows = mine or [r for r in rows if not r.get("analyzer_key")]  # history stored without keys
    closed = [r for r in rows if not r.get("open")]
    points = []
    for i, row in enumerate(closed):
        points.append(Point(time=row["time"], value=row["value"], seq=i))
    return points, len(rows) - len(closed)


def _targets(
    args: argparse.Namespace,
) -> tuple[Any, str, list[tuple[str, dict[str, Any], str, str | None, str, str | None]]]:
    """(store, dataset, [(label, detector spec, metric name, instance, scope, analyzer key or None)])."""
    store, dataset, config = _store_and_dataset(args)
    if args.detector:
        try:
            spec = json.loads(args.detector)
        except ValueError as exc:
            raise ConfigError("--detector", f"not valid JSON: {exc}") from None
        if not args.metric:
            raise ConfigError("--metric", "--detector needs --metric (and --instance for column metrics)")
        return (
            store,
            dataset,
            [(f"{args.metric}({args.instance or '*'})", spec, args.metric, args.instance, args.scope, None)],
        )
    if config is None:
        raise ConfigError("--config", "give --config, or --detector with --metric")
    from streamdq.analyzers.user_aggregation import metric_name
    from streamdq.engine.streaming import build_checks

    targets = []
    for check in build_checks(config):
        for c in check.constraints:
            if c.kind != "has_no_anomalies":
                continue
            analyzer = c.analyzer
            targets.append(
                (
                    f"{check.description}: {c.describe()}",
                    dict(c.params["detector"]),
                    metric_name(analyzer),
                    analyzer.instance,
                    c.scope,
                    analyzer.key(),
                )
            )
    if not targets:
        raise ConfigError("checks", "the config's checks have no has_no_anomalies constraint")
    return store, dataset, targets


def _store_and_dataset(args: argparse.Namespace) -> tuple[Any, str, Any]:
    """(store, dataset, run config or None) from --config / --state / --dataset."""
    from streamdq.state.delta_store import DeltaStateStore

    config = None
    if args.config:
        from streamdq.engine.config import load_run_config

        config = load_run_config(args.config)
    state = args.state or (config.state.path if config else None)
    if not state:
        raise ConfigError("--state", "give --state PATH or a --config whose state.path is set")
    dataset = args.dataset or (config.dataset if config else None)
    if not dataset:
        raise ConfigError("--dataset", "give --dataset or a --config")
    return DeltaStateStore(state), dataset, config


def closed_window_rows(
    store: Any, dataset: str, start: datetime | None, end: datetime | None
) -> list[dict[str, Any]]:
    """The latest committed window-scope metric rows of ``dataset`` with ``start <= window_start
    < end``, leaving out windows that end after the last committed watermark (still open)."""
    import pyarrow as pa
    import pyarrow.dataset as pads

    from streamdq.state import schemas as S
    from streamdq.state.queries import committed_watermark, latest_per
    from streamdq.state.sql import conj, lit
    from streamdq.state.tables import utc_date

    dt = store.table(S.METRICS)
    if dt is None:
        return []
    prune = [f"dataset = {lit(dataset)}", "scope = 'window'"]
    expr = (pads.field("dataset") == dataset) & (pads.field("scope") == "window")
    if start is not None:
        prune.append(f"date >= {lit(utc_date(start))}")
        expr &= pads.field("window_start") >= pa.scalar(start, S.TS)
    if end is not None:
        prune.append(f"date <= {lit(utc_date(end))}")
        expr &= pads.field("window_start") < pa.scalar(end, S.TS)
    rows = dt.to_pyarrow_dataset(file_pruning_predicate=conj(*prune)).to_table(filter=expr)
    rows = store.committed_filter(rows)
    rows = latest_per(
        rows, ["window_start", "entity", "instance", "name", "analyzer_key"], ["processing_time", "batch_id"]
    )
    watermark = committed_watermark(store, rows)
    out = rows.to_pylist()
    if watermark is not None:
        out = [r for r in out if r["window_end"] is not None and r["window_end"] <= watermark]
    return out


def run_quality_score(args: argparse.Namespace) -> int:
    """``--quality-score``: replay the dataset's closed windows through the quality score."""
    from streamdq.autovalidate.quality.backtest import (
        format_quality_report,
        replay_quality,
        windows_from_rows,
    )
    from streamdq.autovalidate.quality.monitor import quality_config_from_raw

    try:
        start, end = _when(args.start, "--start"), _when(args.end, "--end")
        store, dataset, config = _store_and_dataset(args)
        raw = dict(config.quality_score or {}) if config is not None else {}
        if args.quality_config:
            try:
                override = json.loads(args.quality_config)
            except ValueError as exc:
                raise ConfigError("--quality-config", f"not valid JSON: {exc}") from None
            if not isinstance(override, dict):
                raise ConfigError("--quality-config", 'expected a JSON object such as {"alert_at": 6}')
            raw.update(override)
        for key in ("columns", "numeric_columns"):
            raw.pop(key, None)  # analyzers of the streaming monitor; the history already holds them
        settings = quality_config_from_raw(raw)
    except (ConfigError, ValueError) as exc:
        print(f"streamdq backtest: {exc}", file=sys.stderr)
        return 2
    windows = windows_from_rows(closed_window_rows(store, dataset, start, end))
    series = len({name for w in windows for name in w.values})
    print(
        f"== {dataset}: table quality score over {len(windows)} closed windows, {series} series, {settings}"
    )
    judged = replay_quality(windows, settings)
    for line in format_quality_report(judged, settings, show_all=args.all):
        print(line)
    return 0


def run(args: argparse.Namespace) -> int:
    if getattr(args, "quality_score", False):
        return run_quality_score(args)
    from streamdq.detectors import detector_from_spec
    from streamdq.detectors.backtest import format_report, replay

    try:
        start, end = _when(args.start, "--start"), _when(args.end, "--end")
        store, dataset, targets = _targets(args)
        detectors = [(label, detector_from_spec(spec), m, i, s, k) for label, spec, m, i, s, k in targets]
    except (ConfigError, ValueError) as exc:
        print(f"streamdq backtest: {exc}", file=sys.stderr)
        return 2
    for label, detector, metric, instance, scope, key in detectors:
        points, open_windows = _series(store, dataset, metric, instance, scope, start, end, key)
        skipped = f" ({open_windows} open window(s) left out)" if open_windows else ""
        print(f"== {label} [{scope}] {len(points)} points{skipped}, detector {detector.to_spec()}")
        _, judged = replay(detector, points)
        for line in format_report(detector, judged, show_all=args.all):
            print(line)
    return 0
