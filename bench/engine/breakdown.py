"""bench/engine/breakdown.py: where the time of ``verify`` on the standard suite goes.

Times, interleaved on one cached DataFrame (median of ``--repeat``), the pieces of
``verify`` against their hand-written counterparts:

* ``scan_streamdq``: the fused ``agg`` of every scan-shareable analyzer of the suite,
  exactly as the plan builds it; ``scan_fused``: the hand-written fused ``agg`` (no
  uniqueness);
* ``group_streamdq``: ``compute_frequency_state`` of the uniqueness of ``id`` (with the
  scan's totals when the plan provides them); ``group_fused``: ``groupBy(id).count()``
  plus one aggregate;
* ``verify``: the whole run, for reference.

Usage: ``.venv/bin/python bench/engine/breakdown.py --rows 10000000 --repeat 3``.
Last line: ``RESULT engine_breakdown rows=... scan_streamdq=... scan_fused=... ...``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from data import generate  # noqa: E402
from pyspark.sql import DataFrame  # noqa: E402
from run import _uniqueness, fused_scan, standard_checks  # noqa: E402

from streamdq.analyzers.base import GroupingAnalyzer, ScanShareableAnalyzer  # noqa: E402
from streamdq.engine.plan import AnalysisPlan, count_jobs  # noqa: E402


def suite_analyzers() -> list[Any]:
    checks = standard_checks()
    return list(dict.fromkeys(a for c in checks for a in c.required_analyzers(None)))


def scan_streamdq(df: DataFrame) -> Any:
    scan = [a for a in suite_analyzers() if isinstance(a, ScanShareableAnalyzer)]
    exprs = [e for a in scan for e in a.aggregations(df.schema)]
    return df.agg(*exprs).collect()


def scan_fused(df: DataFrame) -> Any:
    return fused_scan(df)


def group_streamdq(df: DataFrame) -> Any:
    plan = AnalysisPlan([a for a in suite_analyzers() if isinstance(a, GroupingAnalyzer)])
    return plan.run(df)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--explain", action="store_true", help="print the streamdq scan plan")
    args = parser.parse_args()
    os.environ.setdefault("STREAMDQ_DRIVER_MEMORY", "8g")
    from streamdq.spark import get_spark
    from streamdq.verification import verify

    spark = get_spark(shuffle_partitions=4)
    df = generate(spark, args.rows).cache()
    df.count()
    fns: dict[str, Callable[[], Any]] = {
        "scan_streamdq": lambda: scan_streamdq(df),
        "scan_fused": lambda: scan_fused(df),
        "group_streamdq": lambda: group_streamdq(df),
        "group_fused": lambda: _uniqueness(df),
        "verify": lambda: verify(df, standard_checks()),
    }
    if args.explain:
        scan = [a for a in suite_analyzers() if isinstance(a, ScanShareableAnalyzer)]
        df.agg(*[e for a in scan for e in a.aggregations(df.schema)]).explain("formatted")
    for fn in fns.values():  # warm-up
        fn()
    times: dict[str, list[float]] = {k: [] for k in fns}
    jobs: dict[str, int] = {}
    for _ in range(args.repeat):
        for name, fn in fns.items():
            with count_jobs(spark) as j:
                t = time.perf_counter()
                fn()
                times[name].append(time.perf_counter() - t)
            jobs[name] = j[0]
            print(f"  {name} {times[name][-1]:.2f}s", flush=True)
    med = {k: statistics.median(v) for k, v in times.items()}
    for k in fns:
        print(f"{k:16s} median {med[k]:.2f}s  runs {' '.join(f'{t:.2f}' for t in times[k])}  jobs {jobs[k]}")
    print(f"load average {os.getloadavg()[0]:.1f}")
    print(f"RESULT engine_breakdown rows={args.rows} " + " ".join(f"{k}={med[k]:.2f}" for k in fns))
    return 0


if __name__ == "__main__":
    sys.exit(main())
