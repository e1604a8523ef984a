"""bench/commit: milliseconds per ``DeltaStateStore.commit``, before and after (issue 15).

Two stores commit the same simulated stream, interleaved batch by batch in one process (A B
B A ...), each into its own root: ``before`` is the store as of ``--before`` (default
24e9932^, the store before the snapshot-trust and reopen cuts; cf2786a is the one before the
write cuts; its ``state/delta_store.py`` is loaded from git), ``after`` is the working tree's.
Per batch, as the streaming handler sends them:

* typical: ``--analyzers`` (25) total states plus their states in each open window (2 open
  windows; one touched), ~150 metrics (batch, total and window scope, 2 per analyzer),
  20 constraint results, ``--detectors`` (10) detector states that changed;
* empty: no rows arrived: the same running states and detector states again (unchanged
  bytes; ``last_seq`` = the batch id), no metrics, no results: only the report is new.

Batches alternate typical/empty; windows close as the stream moves on. Between two batches
the bench waits ``--gap-ms`` (default 100 ms: a small microbatch's Spark job and trigger), as a
stream does: a store that writes part of a batch in the background (the report-derived metrics
and results rows after the report, since 2026-11-27) finishes it there, and a commit that still
has to wait for the previous batch's writes pays the wait (``settle``) inside its own time.
``--gap-ms 0`` runs the commits back to back. Prints the medians
(after the warm-up, and over the last ``--tail`` batches: a long-running stream's steady
state, where each table has hundreds of commits) and their ratios after/before plus the load
average, and ends with
``RESULT commit key=value ...``. Usage: ``python bench/commit/run.py [--batches N]``.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from streamdq.state import DeltaStateStore, DetectorStateRecord, records_for_batch

from streamdq.analyzers import Completeness, Mean, Size
from streamdq.analyzers.base import Analyzer
from streamdq.analyzers.basic_states import NumMatches, NumMatchesAndCount, SumState
from streamdq.analyzers.state import State
from streamdq.report import BatchReport, CheckResult, ConstraintResult, ScopedMetric, Window

ROOT = Path(__file__).resolve().parents[2]
T0 = datetime(2026, 1, 1, tzinfo=UTC)
WINDOW = timedelta(minutes=1)
TRIGGER = timedelta(seconds=5)


def load_before(commit: str) -> Any:
    """The ``DeltaStateStore`` class of ``state/delta_store.py`` at ``commit`` (read from git)."""
    source = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{commit}:state/delta_store.py"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    path = Path(tempfile.mkdtemp(prefix="bench-commit-")) / "delta_store_before.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("streamdq.state.delta_store_before", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module.DeltaStateStore


def analyzers(n: int) -> list[Analyzer]:
    out: list[Analyzer] = []
    for i in range(n):
        kind = i % 3
        out.append(
            (Size(where=f"amount > {i}") if i else Size())
            if kind == 0
            else Completeness(f"c{i}")
            if kind == 1
            else Mean(f"c{i}")
        )
    return out


def batch_state(a: Analyzer, rows: int, seed: int) -> State:
    if isinstance(a, Size):
        return NumMatches(rows)
    if isinstance(a, Completeness):
        return NumMatchesAndCount(rows - seed % 3, rows, rows)
    return SumState(float(rows * (seed % 7)), rows)


def stream(n_batches: int, n_analyzers: int, n_detectors: int) -> list[tuple[bool, dict[str, Any]]]:
    """The commit() arguments of every batch, and whether the batch is empty."""
    alist = analyzers(n_analyzers)
    keys = {a.state_key(): a for a in alist}
    total: dict[str, State] = {k: a.empty_state() for k, a in keys.items()}
    windows: dict[Window, dict[str, State]] = {}
    detectors: dict[str, float] = {f"d{i}": 0.0 for i in range(n_detectors)}
    out = []
    for b in range(n_batches):
        empty = b % 2 == 1
        now = T0 + TRIGGER * b
        start = T0 + WINDOW * ((now - T0) // WINDOW)
        w = Window(start, start + WINDOW)
        metrics: list[ScopedMetric] = []
        closed: list[tuple[Window, dict[str, State]]] = []
        if not empty:
            batch = {k: batch_state(a, 1000, b) for k, a in keys.items()}
            total = {k: total[k].merge(s) for k, s in batch.items()}
            windows[w] = {
                k: windows.get(w, {}).get(k, keys[k].empty_state()).merge(s) for k, s in batch.items()
            }
            closed = [(cw, st) for cw, st in windows.items() if cw.end + WINDOW <= now]  # 2 open windows
            for cw, _ in closed:
                del windows[cw]
            for k, a in keys.items():
                for _ in range(2):  # two metrics per analyzer and scope: ~150 per batch
                    metrics.append(ScopedMetric("batch", a.metric(batch[k]), analyzer_key=a.key()))
                    metrics.append(ScopedMetric("total", a.metric(total[k]), analyzer_key=a.key()))
                    metrics.append(
                        ScopedMetric("window", a.metric(windows[w][k]), window=w, analyzer_key=a.key())
                    )
            detectors = {k: v + 1.0 for k, v in detectors.items()}
        crs = tuple(
            ConstraintResult("orders", "Error", f"c{i}", f"id{i}", "Success", metric=metrics[i].metric)
            for i in range(min(20, len(metrics)))
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
        det = [
            DetectorStateRecord.from_json(k, "OnlineNormal", {"mean": v, "n": v}, b)
            for k, v in detectors.items()
        ]
        kw = dict(
            dataset="orders",
            states=recs.states,
            metrics=recs.metrics,
            results=recs.results,
            report=rep,
            detector_states=det,
        )
        out.append((empty, kw))
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--batches", type=int, default=400)
    parser.add_argument("--tail", type=int, default=100, help="last batches of the steady-state medians")
    parser.add_argument("--warmup", type=int, default=20, help="batches left out of the medians")
    parser.add_argument("--analyzers", type=int, default=25)
    parser.add_argument("--detectors", type=int, default=10)
    parser.add_argument("--before", default="24e9932^", help="git commit of the 'before' store")
    parser.add_argument("--gap-ms", type=float, default=100.0, help="wait between two batches (ms)")
    args = parser.parse_args()
    Before = load_before(args.before)
    roots = {name: tempfile.mkdtemp(prefix=f"bench-commit-{name}-") for name in ("before", "after")}
    stores = {"before": Before(roots["before"]), "after": DeltaStateStore(roots["after"])}
    batches = stream(args.batches, args.analyzers, args.detectors)
    ms: dict[tuple[str, bool], list[float]] = {}
    tail: dict[tuple[str, bool], list[float]] = {}
    loads = [os.getloadavg()[0]]
    sizes = {}
    started = time.perf_counter()
    for b, (empty, kw) in enumerate(batches):
        if not empty and b == args.warmup:
            sizes = {k: len(kw[k]) for k in ("states", "metrics", "results", "detector_states")}
        order = ("before", "after") if b % 4 < 2 else ("after", "before")  # ABBA
        for name in order:
            time.sleep(args.gap_ms / 2000)  # each store's batches are gap_ms apart
            t = time.perf_counter()
            assert stores[name].commit("q1", b, **kw) is True
            if b >= args.warmup:
                ms.setdefault((name, empty), []).append((time.perf_counter() - t) * 1000)
            if b >= len(batches) - args.tail:
                tail.setdefault((name, empty), []).append((time.perf_counter() - t) * 1000)
        if b % 20 == 0:
            loads.append(os.getloadavg()[0])
    loads.append(os.getloadavg()[0])
    for store in stores.values():
        getattr(store, "settle", lambda: None)()
    # both stores restore the same states (exactly once is not traded for speed)
    restored = {name: DeltaStateStore(root).load_states("orders") for name, root in roots.items()}
    assert restored["before"] == restored["after"], "the two stores restore different states"
    med = {k: statistics.median(v) for k, v in ms.items()}
    last = {k: statistics.median(v) for k, v in tail.items()}
    print(f"per typical batch: {sizes}; {len(batches)} batches, {time.perf_counter() - started:.1f}s")
    for empty in (False, True):
        kind = "empty" if empty else "typical"
        print(
            f"{kind:>8}: before {med[('before', empty)]:7.1f} ms  after {med[('after', empty)]:7.1f} ms  "
            f"after/before {med[('after', empty)] / med[('before', empty)]:.2f}; last {args.tail} batches: "
            f"before {last[('before', empty)]:7.1f} ms  after {last[('after', empty)]:7.1f} ms  "
            f"after/before {last[('after', empty)] / last[('before', empty)]:.2f}"
        )
    print(f"load average (1 min) during the run: {min(loads):.1f}-{max(loads):.1f}")
    fields = {
        "commit_empty_ms": round(med[("after", True)], 1),
        "commit_typical_ms": round(med[("after", False)], 1),
        "commit_empty_before_ms": round(med[("before", True)], 1),
        "commit_typical_before_ms": round(med[("before", False)], 1),
        "x_before_empty": round(med[("after", True)] / med[("before", True)], 2),
        "x_before_typical": round(med[("after", False)] / med[("before", False)], 2),
        "commit_typical_tail_ms": round(last[("after", False)], 1),
        "commit_typical_tail_before_ms": round(last[("before", False)], 1),
        "x_before_typical_tail": round(last[("after", False)] / last[("before", False)], 2),
        "x_before_empty_tail": round(last[("after", True)] / last[("before", True)], 2),
        "batches": len(batches),
        "gap_ms": args.gap_ms,
        "tail": args.tail,
        "before": args.before,
        "states": sizes.get("states"),
        "metrics": sizes.get("metrics"),
        "results": sizes.get("results"),
        "detectors": sizes.get("detector_states"),
        "load_min": round(min(loads), 1),
        "load_max": round(max(loads), 1),
    }
    for root in roots.values():
        shutil.rmtree(root, ignore_errors=True)
    print("RESULT commit " + " ".join(f"{k}={v}" for k, v in fields.items()))


if __name__ == "__main__":
    main()
