"""Start-up benchmark (issue 15): where the first microbatch's time goes, in fresh processes.

Each round starts a fresh Python process (``--child``) that runs a JSON file-source query with
bench/engine's standard suite (1-hour windows, Delta state store, jsonl sink), ``availableNow``,
two files of ``--rows`` rows each (one per trigger), and reports its phases:

* ``import_ms``: importing pyspark and streamdq (the CLI's imports);
* ``session_ms``: ``get_spark()`` (JVM start, SparkContext, session);
* ``start_ms``: ``stream(spark, config).start()`` (config, checks, state store open, query start);
* ``first_batch_ms`` / ``second_batch_ms``: ``durationMs.triggerExecution`` of batches 0 and 1,
  with ``first_add_batch_ms`` (the handler) and ``first_planning_ms`` (query planning);
* ``first_report_ms``: process start to the first batch's progress (what a user waits for);
* ``python_workers``: Python worker processes (``pyspark.daemon``/``pyspark.worker``) alive at the end.

Rounds alternate two variants, ``base`` (``STREAMDQ_PREWARM=0``) and, for the file source,
``prewarm`` (``STREAMDQ_PREWARM=1``: a background job starts the Python workers with the session)
or, for ``--source generator`` (a Python data source), ``auto`` (``STREAMDQ_PREWARM`` unset: the
engine pre-warms when the query starts), so that a change of the machine's load hits both alike;
medians per variant. The file source runs no Python task, so ``prewarm`` measures what the
pre-warm costs where it cannot help. Last line: ``RESULT startup key=value ...`` (keys of the
generator run start with ``generator_``).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

T0 = time.perf_counter()
ENGINE = Path(__file__).resolve().parents[1] / "engine"


def _engine_module(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(f"bench_engine_{name}", ENGINE / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _python_workers(jvm_pid: int) -> int:
    """Python daemon and worker processes under this run's JVM."""
    out = subprocess.run(["ps", "-eo", "pid=,ppid=,args="], capture_output=True, text=True).stdout
    procs = [line.split(None, 2) for line in out.splitlines() if line.strip()]
    ours = {int(p[0]) for p in procs if len(p) == 3 and int(p[1]) == jvm_pid and "pyspark" in p[2]}
    workers = {int(p[0]) for p in procs if len(p) == 3 and int(p[1]) in ours}
    return len(ours | workers)


def _generator_source(rows: int) -> dict[str, Any]:
    """streamdq's generator (a Python data source: its reads run in Python workers), two
    microbatches of ``rows`` rows."""
    return {
        "type": "generator",
        "seed": 1,
        "rows_per_batch": rows,
        "max_records_per_trigger": rows,
        "max_rows": 2 * rows,
    }


def child(rows: int, source: str = "files") -> dict[str, float]:
    phases: dict[str, float] = {}
    t = time.perf_counter()
    import pyspark.sql  # noqa: F401

    from streamdq.engine.streaming import stream
    from streamdq.spark import get_spark

    phases["import_ms"] = (time.perf_counter() - t) * 1000
    t = time.perf_counter()
    spark = get_spark(shuffle_partitions=2)
    phases["session_ms"] = (time.perf_counter() - t) * 1000

    from pyspark.sql import functions as F

    from streamdq.checks.spec import suite_to_dict

    work = Path(tempfile.mkdtemp(prefix="bench-startup-"))
    try:
        inbox = work / "in"
        inbox.mkdir()
        if source == "files":
            data = _engine_module("data").generate(spark, 2 * rows, partitions=2)
            # Written by a plain JSON writer outside the timed phases (the files exist before the query).
            t = time.perf_counter()
            data.repartitionByRange(2, "id").sortWithinPartitions("id").write.json(str(work / "staging"))
            for i, part in enumerate(sorted((work / "staging").glob("part-*.json"))):
                part.rename(inbox / f"{i:05d}.json")
            phases["write_files_ms"] = (time.perf_counter() - t) * 1000
        checks = suite_to_dict(_engine_module("run").standard_checks())["checks"]
        config: dict[str, Any] = {
            "dataset": "orders",
            "source": {
                "type": "files",
                "path": str(inbox),
                "format": "json",
                "schema": (
                    "id BIGINT, user_id BIGINT, email STRING, country STRING, device STRING, status INT, "
                    "amount DOUBLE, score DOUBLE, quantity INT, ts TIMESTAMP, discount DOUBLE, name STRING"
                ),
                "max_files_per_trigger": 1,
            },
            "event_time": "ts",
            "window": "1 hour",
            "trigger": "available_now",
            "checkpoint": str(work / "chk"),
            "state": {"path": str(work / "state")},
            "checks": checks,
            "sinks": [{"type": "jsonl", "path": str(work / "reports.jsonl")}],
        }
        _ = F  # generate() uses functions; keep the import explicit
        if source == "generator":
            config["source"] = _generator_source(rows)
            config["event_time"] = "ts"
            config["trigger"] = "1 second"  # an unbounded source: stopped after two batches
            config["checks"] = [
                {
                    "description": "the generator's orders",
                    "level": "error",
                    "constraints": [
                        {"has_size": {"assertion": "> 0"}},
                        {"is_complete": "order_id"},
                        {"is_unique": "event_id"},
                        {"is_non_negative": "amount"},
                        {"has_approx_quantile": {"column": "amount", "quantile": 0.5, "assertion": ">= 0"}},
                        {"has_approx_count_distinct": {"column": "user_id", "assertion": ">= 1"}},
                    ],
                }
            ]
        t = time.perf_counter()
        query = stream(spark, config).start()
        phases["start_ms"] = (time.perf_counter() - t) * 1000
        first_seen = None
        while query.isActive or first_seen is None:
            if first_seen is None and query.recentProgress:
                first_seen = time.perf_counter()
            if not query.isActive:
                break
            if sum(p["numInputRows"] > 0 for p in query.recentProgress) >= 2:
                query.stop()  # an unbounded source
                break
            time.sleep(0.05)
        query.awaitTermination()
        if first_seen is None:
            first_seen = time.perf_counter()
        progress = [p for p in query.recentProgress if p["numInputRows"] > 0]
        d0, d1 = progress[0]["durationMs"], progress[1]["durationMs"]
        phases["first_batch_ms"] = float(d0["triggerExecution"])
        phases["first_add_batch_ms"] = float(d0.get("addBatch", 0))
        phases["first_planning_ms"] = float(d0.get("queryPlanning", 0))
        phases["second_batch_ms"] = float(d1["triggerExecution"])
        phases["first_report_ms"] = (first_seen - T0) * 1000
        phases["python_workers"] = float(
            _python_workers(int(spark._jvm.java.lang.ProcessHandle.current().pid()))
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return phases


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--child", action="store_true")
    p.add_argument("--rows", type=int, default=5000, help="rows per file (one file per trigger)")
    p.add_argument("--rounds", type=int, default=3, help="fresh processes per variant, alternating")
    p.add_argument(
        "--source",
        choices=("files", "generator"),
        default="files",
        help="files: JSON files (no Python task); generator: a Python data source",
    )
    args = p.parse_args()
    if args.child:
        print("PHASES " + json.dumps(child(args.rows, args.source)), flush=True)
        return
    # files: the pre-warm asked for with the session, where it cannot help; generator: the
    # engine's own (STREAMDQ_PREWARM unset: the query pre-warms for its Python data source)
    second = "prewarm" if args.source == "files" else "auto"
    variants = {"base": {"STREAMDQ_PREWARM": "0"}, second: {"STREAMDQ_PREWARM": "1"}}
    if args.source == "generator":
        variants[second] = {}
    runs: dict[str, list[dict[str, float]]] = {v: [] for v in variants}
    for r in range(args.rounds):
        order = list(variants) if r % 2 == 0 else list(reversed(variants))
        for v in order:
            env = {k: x for k, x in os.environ.items() if k != "STREAMDQ_PREWARM"}
            env = {**env, "PYSPARK_PYTHON": sys.executable, **variants[v]}
            out = subprocess.run(
                [sys.executable, __file__, "--child", "--rows", str(args.rows), "--source", args.source],
                env=env,
                capture_output=True,
                text=True,
                timeout=900,
            )
            line = next((x for x in out.stdout.splitlines() if x.startswith("PHASES ")), None)
            if line is None:
                sys.stderr.write(out.stderr[-3000:])
                raise SystemExit(f"child {v} failed")
            phases = json.loads(line[len("PHASES ") :])
            runs[v].append(phases)
            print(
                f"startup round={r} variant={v} " + " ".join(f"{k}={x:.0f}" for k, x in phases.items()),
                flush=True,
            )
    results: dict[str, float] = {}
    prefix = "" if args.source == "files" else f"{args.source}_"
    for v, rs in runs.items():
        for k in rs[0]:
            results[f"{prefix}{v}_{k}"] = statistics.median(x[k] for x in rs)
    for k in ("first_report", "first_batch"):
        results[f"{prefix}{second}_x_{k}"] = (
            results[f"{prefix}{second}_{k}_ms"] / results[f"{prefix}base_{k}_ms"]
        )
    results["load_avg"] = os.getloadavg()[0]
    print("RESULT startup " + " ".join(f"{k}={x:.2f}" for k, x in results.items()))


if __name__ == "__main__":
    main()
