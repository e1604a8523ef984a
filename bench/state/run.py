"""bench/state: does the Delta state store stay fast after 10,000 committed batches?

Simulates a streaming query (1-minute windows, a 5-second trigger -> 12 batches per
window, a window closes 6 batches after it ends) committing, per batch, the total and
open-window states of ``--analyzers`` analyzers (Size/Completeness/Mean mix), their
metrics at three scopes, 10 constraint results and the report, through the real
``DeltaStateStore.commit``. At checkpoints it measures, on a fresh store instance (a
restarted driver) and on the warm one:

* ``load_states`` (what the runner does on restart), ``last_committed_batch``, ``report``;
* ``history`` of one metric (batch scope, last hour; window scope, whole run);
* ``merge_range`` of a Mean over every window of the run.

``--log-retention-hours`` sets ``delta.logRetentionDuration`` (``delta``: Delta's 30-day
default, i.e. the store before the log was bounded). This bench commits a batch every ~0.2-0.5 s
instead of every trigger interval, so scale the retention to keep the same number of versions
as production would (1 hour at a 5-s trigger = 720 versions ~ 0.05 h here).

Last line: ``RESULT state key=value ...``. Usage: ``python bench/state/run.py [--batches N]``.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from streamdq.state import DeltaStateStore, records_for_batch

from streamdq.analyzers import Completeness, Mean, Size
from streamdq.analyzers.base import Analyzer
from streamdq.analyzers.basic_states import NumMatches, NumMatchesAndCount, SumState
from streamdq.analyzers.metric import Metric
from streamdq.analyzers.state import State
from streamdq.report import BatchReport, CheckResult, ConstraintResult, ScopedMetric, Window

T0 = datetime(2026, 1, 1, tzinfo=UTC)
WINDOW = timedelta(minutes=1)
TRIGGER = timedelta(seconds=5)
CLOSE_AFTER = 6  # batches after the window end


def analyzers(n: int) -> list[Analyzer]:
    out: list[Analyzer] = []
    for i in range(n):
        kind = i % 3
        if kind == 0:
            out.append(Size(where=f"amount > {i}") if i else Size())
        elif kind == 1:
            out.append(Completeness(f"c{i}"))
        else:
            out.append(Mean(f"c{i}"))
    return out


def batch_state(a: Analyzer, rows: int, seed: int) -> State:
    if isinstance(a, Size):
        return NumMatches(rows)
    if isinstance(a, Completeness):
        return NumMatchesAndCount(rows - seed % 3, rows, rows)
    return SumState(float(rows * (seed % 7)), rows)


def metric_of(a: Analyzer, s: State) -> Metric:
    return a.metric(s)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def timed(fn, repeat: int = 3) -> tuple[float, object]:  # type: ignore[no-untyped-def]
    best, out = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best * 1000, out


def measure(
    root: str, store: DeltaStateStore, analyzer_list: list[Analyzer], last_batch: int
) -> dict[str, float]:
    end = T0 + TRIGGER * (last_batch + 1)
    t = time.perf_counter()
    cold = DeltaStateStore(root, log_retention_hours=store.log_retention_hours)
    loaded = cold.load_states("orders")
    cold_ms = (time.perf_counter() - t) * 1000
    assert loaded, "no states loaded"
    out = {"load_states_cold_ms": cold_ms}
    out["load_states_ms"], _ = timed(lambda: store.load_states("orders"))
    out["last_committed_ms"], last = timed(lambda: store.last_committed_batch("q1"))
    assert last == last_batch, (last, last_batch)
    out["report_ms"], rep = timed(lambda: store.report("q1", last_batch // 2))
    assert rep is not None
    out["history_batch_1h_ms"], h = timed(
        lambda: store.history(
            "orders", "Size", instance="*", scope="batch", start=end - timedelta(hours=1), end=end
        )
    )
    out["history_points"] = float(h.num_rows)  # type: ignore[attr-defined]
    out["history_window_all_ms"], hw = timed(lambda: store.history("orders", "Completeness", scope="window"))
    out["history_window_points"] = float(hw.num_rows)  # type: ignore[attr-defined]
    mean = next(a for a in analyzer_list if isinstance(a, Mean))
    out["merge_range_all_ms"], merged = timed(lambda: store.merge_range("orders", mean, T0, end + WINDOW))
    out["merged_n"] = float(merged.n)  # type: ignore[attr-defined]
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--batches", type=int, default=10_000)
    parser.add_argument("--analyzers", type=int, default=30)
    parser.add_argument("--rows", type=int, default=1000, help="rows per batch (only scales the numbers)")
    parser.add_argument("--root", help="state root (default: a temp dir, removed afterwards)")
    parser.add_argument("--checkpoint-every", type=int, default=100)
    parser.add_argument("--compact-every", type=int, default=100)
    parser.add_argument(
        "--log-retention-hours",
        default="1",
        help="delta.logRetentionDuration of the tables in hours, or 'delta' for Delta's own default "
        "(30 days: the log is never cleaned in a run; the store's behaviour before 2026-11-24)",
    )
    args = parser.parse_args()
    root = args.root or tempfile.mkdtemp(prefix="bench-state-")
    Path(root).mkdir(parents=True, exist_ok=True)
    log_retention = None if args.log_retention_hours == "delta" else float(args.log_retention_hours)
    store = DeltaStateStore(
        root,
        checkpoint_every=args.checkpoint_every,
        compact_every=args.compact_every,
        retention_hours=0,
        log_retention_hours=log_retention,
    )
    alist = analyzers(args.analyzers)
    keys = {a.state_key(): a for a in alist}
    total: dict[str, State] = {k: a.empty_state() for k, a in keys.items()}
    windows: dict[Window, dict[str, State]] = {}
    commit_ms: list[float] = []
    commit_cpu_ms: list[float] = []  # process CPU time: less sensitive to other jobs on the machine
    checkpoints = sorted({b for b in (100, 1000, 2500, 5000, 7500, args.batches) if b <= args.batches})
    results: dict[int, dict[str, float]] = {}
    started = time.perf_counter()
    for b in range(args.batches):
        now = T0 + TRIGGER * b
        w = Window(T0 + WINDOW * ((now - T0) // WINDOW), T0 + WINDOW * ((now - T0) // WINDOW + 1))
        batch = {k: batch_state(a, args.rows, b) for k, a in keys.items()}
        total = {k: total[k].merge(s) for k, s in batch.items()}
        windows[w] = {k: windows.get(w, {}).get(k, keys[k].empty_state()).merge(s) for k, s in batch.items()}
        closed = [(cw, st) for cw, st in windows.items() if now >= cw.end + TRIGGER * CLOSE_AFTER]
        for cw, _ in closed:
            del windows[cw]
        metrics: list[ScopedMetric] = []
        for k, a in keys.items():
            metrics.append(ScopedMetric("batch", metric_of(a, batch[k]), analyzer_key=a.key()))
            metrics.append(ScopedMetric("total", metric_of(a, total[k]), analyzer_key=a.key()))
            for ow, st in [*windows.items(), *closed]:
                metrics.append(ScopedMetric("window", metric_of(a, st[k]), window=ow, analyzer_key=a.key()))
        crs = tuple(
            ConstraintResult("orders", "Error", f"c{i}", f"id{i}", "Success", metric=metrics[i].metric)
            for i in range(10)
        )
        rep = BatchReport(
            dataset="orders",
            query_id="q1",
            batch_id=b,
            processing_time=now,
            metrics=tuple(metrics),
            check_results=(CheckResult("orders", "Error", "Success", crs),),
            closed_windows=tuple(cw for cw, _ in closed),
        )
        recs = records_for_batch(
            rep, total=total, open_windows=windows, closed_windows=closed, analyzers=alist
        )
        t, cpu = time.perf_counter(), time.process_time()
        store.commit(
            "q1",
            b,
            dataset="orders",
            states=recs.states,
            metrics=recs.metrics,
            results=recs.results,
            report=rep,
        )
        commit_ms.append((time.perf_counter() - t) * 1000)
        commit_cpu_ms.append((time.process_time() - cpu) * 1000)
        if b + 1 in checkpoints:
            results[b + 1] = measure(root, store, alist, b)
            r = results[b + 1]
            print(
                f"after {b + 1:>6} batches ({time.perf_counter() - started:7.1f}s): "
                f"commit p50 {statistics.median(commit_ms[-100:]):6.1f} ms"
                f" (cpu {statistics.median(commit_cpu_ms[-100:]):6.1f}) | "
                + " ".join(f"{k}={v:.1f}" for k, v in r.items()),
                flush=True,
            )
    size_mb = sum(f.stat().st_size for f in Path(root).rglob("*") if f.is_file()) / 1e6
    first, last = results[checkpoints[0]], results[checkpoints[-1]]
    n = args.batches
    head, tail = commit_ms[: min(500, n)], commit_ms[-min(500, n) :]
    log_files = {
        p.parent.parent.name: len(list(p.parent.glob("*.json")))
        for p in Path(root).glob("*/_delta_log/_last_checkpoint")
    }
    fields = {
        "batches": n,
        "analyzers": args.analyzers,
        "commit_ms_p50_first500": round(statistics.median(head), 1),
        "commit_ms_p50_last500": round(statistics.median(tail), 1),
        "commit_ms_p99_last500": round(percentile(tail, 0.99), 1),
        "commit_cpu_ms_p50_first500": round(statistics.median(commit_cpu_ms[: min(500, n)]), 1),
        "commit_cpu_ms_p50_last500": round(statistics.median(commit_cpu_ms[-min(500, n) :]), 1),
        "load_states_cold_ms_first": round(first["load_states_cold_ms"], 1),
        "load_states_cold_ms": round(last["load_states_cold_ms"], 1),
        "load_states_ms": round(last["load_states_ms"], 1),
        "last_committed_ms": round(last["last_committed_ms"], 1),
        "report_ms": round(last["report_ms"], 1),
        "history_batch_1h_ms": round(last["history_batch_1h_ms"], 1),
        "history_window_all_ms": round(last["history_window_all_ms"], 1),
        "merge_range_all_ms": round(last["merge_range_all_ms"], 1),
        "merge_range_windows": int(last["merged_n"] // args.rows),
        "disk_mb": round(size_mb, 1),
        "log_retention_h": args.log_retention_hours,
        "log_json_files_max": max(log_files.values(), default=0),
        "wall_s": round(time.perf_counter() - started, 1),
    }
    if not args.root:
        shutil.rmtree(root, ignore_errors=True)
    print("RESULT state " + " ".join(f"{k}={v}" for k, v in fields.items()))


if __name__ == "__main__":
    main()
