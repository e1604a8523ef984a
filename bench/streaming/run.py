"""Streaming benchmark (partial; issue 3): incremental vs batch total metrics, state sizes.

* ``incremental``: after 1, 10, 50, 100 microbatches of ``--batch-rows`` rows, the time to get
  the total-scope metrics of the standard suite (bench/engine) by merging the newest batch's
  states into the running total and computing metrics from states (what the streaming handler
  does every batch), beside the time to recompute them with one ``analyze`` over all data so
  far. The incremental line must stay flat; the batch line grows with the data.
* ``state bytes``: ``len(State.to_bytes())`` of every analyzer's total state after the last
  batch (per column for single-column analyzers), grouped by analyzer family.

Not yet here (see bench/README.md): per-microbatch handler overhead against Spark's trigger
overhead, sustained rows/s through the Kafka and file sources.

Last line: ``RESULT streaming incr_ms_1=.. incr_ms_100=.. batch_ms_1=.. batch_ms_100=.. ...``.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

ENGINE = Path(__file__).resolve().parents[1] / "engine"
sys.path.insert(0, str(ENGINE))

from data import generate  # noqa: E402


def _standard_checks() -> list[Any]:
    """bench/engine/run.py's standard suite (loaded by path: both files are named run.py)."""
    spec = importlib.util.spec_from_file_location("bench_engine_run", ENGINE / "run.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    checks: list[Any] = module.standard_checks()
    return checks


from streamdq.engine.analysis import analyze, metrics_from_states  # noqa: E402
from streamdq.spark import get_spark  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--batch-rows", type=int, default=2000)
    p.add_argument("--checkpoints", default="1,10,50,100")
    args = p.parse_args()
    checkpoints = [int(x) for x in args.checkpoints.split(",")]
    n_batches = max(checkpoints)

    spark = get_spark()
    spark.sparkContext.setLogLevel("ERROR")
    analyzers: list[Any] = []
    for check in _standard_checks():
        analyzers.extend(check.required_analyzers())
    analyzers = list(dict.fromkeys(analyzers))
    data = generate(spark, args.batch_rows * n_batches, partitions=2).cache()
    data.count()

    total: dict[Any, Any] = {}
    results: dict[str, float] = {}
    for b in range(1, n_batches + 1):
        batch = data.filter((data.id >= (b - 1) * args.batch_rows) & (data.id < b * args.batch_rows))
        states = analyze(batch, analyzers).states
        t0 = time.perf_counter()
        for a, s in states.items():
            total[a] = total[a].merge(s) if a in total else s
        metrics_from_states(analyzers, total, {})
        incr = time.perf_counter() - t0
        if b in checkpoints:
            so_far = data.filter(data.id < b * args.batch_rows)
            t0 = time.perf_counter()
            analyze(so_far, analyzers)
            full = time.perf_counter() - t0
            results[f"incr_ms_{b}"] = incr * 1000
            results[f"batch_ms_{b}"] = full * 1000
            print(
                f"after {b:4d} batches ({b * args.batch_rows} rows): incremental {incr * 1000:8.2f} ms, "
                f"batch recompute {full * 1000:8.1f} ms",
                flush=True,
            )

    sizes: dict[str, list[int]] = defaultdict(list)
    for a, s in total.items():
        sizes[type(a).__name__].append(len(s.to_bytes()))
    print("state bytes per analyzer family (per column / instance) after the last batch:")
    for family, vals in sorted(sizes.items()):
        print(f"  {family:24s} {max(vals):8d} bytes (x{len(vals)})")
    print(f"  total per window/scope: {sum(sum(v) for v in sizes.values())} bytes")
    results["state_bytes_total"] = sum(sum(v) for v in sizes.values())
    print("RESULT streaming " + " ".join(f"{k}={v:.2f}" for k, v in results.items()))


if __name__ == "__main__":
    main()
