"""Benchmark of the query service: CDAP's merge endpoint over 10,000 stored windows, and the console.

A Delta state store is written with ``DeltaStateStore.commit`` (no Spark): one batch holding
``--windows`` closed 1-minute windows (default 10,000: about a week) of a dataset, each with an
HLL sketch of ``user`` (ApproxCountDistinct), a KLL sketch of ``latency`` (ApproxQuantile 0.5)
and their window metrics plus ``Size``. ``streamdq serve`` runs on it as a subprocess on a free
loopback port, and the bench times over HTTP (median of ``--repeat`` requests, after one warm-up):

* ``merge_10k_ms``: the slower of the distinct-count merge and the 0.99-quantile merge over all
  windows (``/v1/source/bench/fields/{user,latency}/aggregations/...``); the goal is < 1000 ms;
* ``distinct_ms`` / ``quantile_ms``: each of them;
* ``timeseries_ms``: the ``Size`` series of all windows (the console's timeline);
* ``page_load_ms``: chromium (Playwright, Debian's ``/usr/bin/chromium``) from navigation until
  the console has drawn everything once (``body[data-loaded]``), median of ``--repeat`` loads;
  ``-1`` when no browser is installed;
* ``load_avg``: the 1-minute load average when the run ended (the machine is shared).

Last line: ``RESULT service merge_10k_ms=... page_load_ms=... load_avg=...``.
Usage: ``python bench/service/run.py [--windows N] [--repeat N] [--keep DIR]``.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import datasketches as ds
import numpy as np

DATASET = "bench"
CHROMIUM = os.environ.get("STREAMDQ_CHROMIUM", "/usr/bin/chromium")


def build(root: Path, windows: int, rows: int) -> float:
    """Write the store; returns the seconds it took."""
    from streamdq.state import DeltaStateStore
    from streamdq.state.records import MetricRecord, StateRecord

    from streamdq.analyzers import ApproxCountDistinct, ApproxQuantile, Size
    from streamdq.analyzers.metric import Metric
    from streamdq.analyzers.sketch_states import HllState, KllState
    from streamdq.report import BatchReport, ScopedMetric, Window

    began = time.perf_counter()
    rng = np.random.default_rng(7)
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    distinct, quantile, size = ApproxCountDistinct("user"), ApproxQuantile("latency", 0.5), Size()
    states, metrics = [], []
    for w in range(windows):
        start, end = t0 + timedelta(minutes=w), t0 + timedelta(minutes=w + 1)
        hll = ds.hll_sketch(12)
        for u in rng.integers(0, 5000, rows):
            hll.update(int(u))
        kll = ds.kll_doubles_sketch(200)
        for x in rng.gamma(2.0, 50.0, rows):
            kll.update(float(x))
        window = Window(start, end)
        for analyzer, state in ((distinct, HllState.of_sketch(hll)), (quantile, KllState.of_sketch(kll))):
            states.append(StateRecord.of(analyzer, state, "window", window, final=True))
            metric = analyzer.metric(state)
            metrics.append(MetricRecord.from_scoped(ScopedMetric("window", metric, window, analyzer.key())))
        metrics.append(
            MetricRecord.from_scoped(
                ScopedMetric("window", Metric("Dataset", "Size", "*", float(rows)), window, size.key())
            )
        )
    report = BatchReport(dataset=DATASET, query_id="bench", batch_id=0, processing_time=datetime.now(UTC))
    store = DeltaStateStore(str(root))
    store.commit("bench", 0, dataset=DATASET, states=states, metrics=metrics, results=[], report=report)
    store.close()
    return time.perf_counter() - began


def start_server(root: Path) -> tuple[subprocess.Popen[str], str]:
    cmd = [sys.executable, "-m", "streamdq.cli", "serve", "--state", str(root), "--port", "0"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    for line in proc.stdout:
        m = re.search(r"console at (http://\S+)/", line)
        if m:
            return proc, m.group(1)
    raise SystemExit(f"streamdq serve did not start (exit {proc.wait()})")


def timed(url: str, repeat: int, **params: object) -> tuple[float, dict]:
    import httpx

    body: dict = {}
    times = []
    with httpx.Client(timeout=120) as client:
        for i in range(repeat + 1):
            began = time.perf_counter()
            response = client.get(url, params=params)
            elapsed = (time.perf_counter() - began) * 1000
            response.raise_for_status()
            body = response.json()
            if i:  # the first is a warm-up (table snapshot load)
                times.append(elapsed)
    return statistics.median(times), body


def page_load(url: str, repeat: int) -> float:
    if not os.path.exists(CHROMIUM):
        return -1.0
    from playwright.sync_api import sync_playwright

    times = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        for _ in range(repeat):
            page = browser.new_page(viewport={"width": 1400, "height": 1800})
            began = time.perf_counter()
            page.goto(url + "/")
            page.wait_for_function("Number(document.body.dataset.loaded || 0) >= 1", timeout=120_000)
            times.append((time.perf_counter() - began) * 1000)
            page.close()
        browser.close()
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--windows", type=int, default=10_000)
    parser.add_argument("--rows", type=int, default=50, help="values per window sketch")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--keep", help="write the store here and keep it")
    args = parser.parse_args()
    tmp = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="streamdq-bench-service-"))
    root = tmp / "state"
    build_s = build(root, args.windows, args.rows)
    print(f"store: {args.windows} windows written in {build_s:.1f} s at {root}", flush=True)
    proc, url = start_server(root)
    try:
        base = f"{url}/v1/source/{DATASET}/fields"
        distinct_ms, d = timed(f"{base}/user/aggregations/ApproxCountDistinct", args.repeat)
        quantile_ms, q = timed(f"{base}/latency/aggregations/ApproxQuantile", args.repeat, quantile=0.99)
        series_ms, s = timed(f"{base}/*/timeseries/Size", args.repeat)
        assert d["windows"] == args.windows and q["windows"] == args.windows, (d, q)
        assert len(s["timeValues"]) == args.windows
        print(f"distinct count over {d['windows']} windows = {d['data']} ({distinct_ms:.0f} ms)")
        print(f"0.99 quantile over {q['windows']} windows = {q['data']:.1f} ({quantile_ms:.0f} ms)")
        print(f"Size series of {len(s['timeValues'])} windows ({series_ms:.0f} ms)")
        load_ms = page_load(url, args.repeat)
        print(f"console page load: {load_ms:.0f} ms", flush=True)
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    merge_ms = max(distinct_ms, quantile_ms)
    fields = {
        "windows": args.windows,
        "merge_10k_ms": f"{merge_ms:.0f}",
        "distinct_ms": f"{distinct_ms:.0f}",
        "quantile_ms": f"{quantile_ms:.0f}",
        "timeseries_ms": f"{series_ms:.0f}",
        "page_load_ms": f"{load_ms:.0f}",
        "build_s": f"{build_s:.1f}",
        "load_avg": f"{os.getloadavg()[0]:.2f}",
    }
    print("RESULT service " + " ".join(f"{k}={v}" for k, v in fields.items()))


if __name__ == "__main__":
    main()
