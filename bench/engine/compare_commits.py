"""bench/engine/compare_commits.py: same-run before/after of ``verify`` on the standard suite.

On a loaded machine wall times vary run to run, so "before" and "after" must be measured
in ONE run. This script exports ``streamdq/`` of an older commit (``--ref``) with
``git archive``, renames the package to ``streamdq_old`` in a temporary directory, and
times, interleaved on one cached DataFrame (median of ``--repeat``): the old ``verify``,
the current ``verify`` and the hand-written fused ``agg`` (optionally the ``mapInArrow``
baseline). It prints every metric that differs between old and new.

Usage: ``.venv/bin/python bench/engine/compare_commits.py --ref 4d96d29 --rows 10000000``.
Last line: ``RESULT engine_compare ref=... old=... new=... fused=... new_ratio=...``.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import run as bench  # noqa: E402
from data import generate  # noqa: E402

#: every ``streamdq.X`` reference is renamed but the two top-level packages the project maps
#: into ``streamdq`` (``state``, ``connectors``: not under ``streamdq/``, so not exported)
_RENAMED = re.compile(r"\bstreamdq\.(?!(?:state|connectors)\b)")


def export_old(ref: str, into: Path) -> None:
    """``streamdq/`` at ``ref`` as the package ``streamdq_old`` under ``into``."""
    repo = HERE.parent.parent
    archive = subprocess.run(["git", "archive", ref, "streamdq"], cwd=repo, check=True, capture_output=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    (into / "streamdq").rename(into / "streamdq_old")
    for path in (into / "streamdq_old").rglob("*.py"):
        text = _RENAMED.sub("streamdq_old.", path.read_text())
        text = re.sub(r"^(\s*)from streamdq import", r"\1from streamdq_old import", text, flags=re.M)
        text = re.sub(r"^(\s*)import streamdq$", r"\1import streamdq_old as streamdq", text, flags=re.M)
        path.write_text(text)


def old_checks() -> list[Any]:
    """The standard suite built with the old package's Check."""
    from streamdq_old.checks.check import Check, Level  # type: ignore[import-not-found]

    return bench.standard_checks(Check, Level)


def run_old(df: Any) -> tuple[dict[str, Any], int]:
    from streamdq_old.checks.verification import verify  # type: ignore[import-not-found]

    result = verify(df, old_checks())
    return {f"{m.name}:{m.instance}": m.value for m in result.metrics.values()}, result.jobs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--ref", required=True, help="the older commit to compare with")
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--arrow", action="store_true", help="also time the mapInArrow baseline")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="streamdq-old-"))
    export_old(args.ref, tmp)
    sys.path.insert(0, str(tmp))
    os.environ.setdefault("STREAMDQ_DRIVER_MEMORY", "8g")
    from streamdq.spark import get_spark

    spark = get_spark(shuffle_partitions=4)
    small = generate(spark, 100_000).cache()
    small.count()
    for warm in (run_old, bench.run_streamdq, bench.run_fused):  # JIT, codegen, Python workers
        warm(small)
    df = generate(spark, args.rows).cache()
    df.count()
    fns = {
        "old": lambda: run_old(df),
        "new": lambda: bench.run_streamdq(df),
        "fused": lambda: bench.run_fused(df),
    }
    if args.arrow:
        fns["arrow"] = lambda: bench.run_arrow(df)
    load_before = os.getloadavg()[0]
    res = bench.interleaved(fns, args.repeat, spark)
    load_after = os.getloadavg()[0]
    old_metrics, old_jobs = res["old"][1]
    new_metrics, new_jobs = res["new"][1]
    for key, value in old_metrics.items():
        if new_metrics.get(key) != value:
            print(f"differs: {key} old={value} new={new_metrics.get(key)}")
    best = min(t for name, (t, _, _) in res.items() if name in ("fused", "arrow"))
    for name, (t, _, jobs) in res.items():
        jobs = {"old": old_jobs, "new": new_jobs}.get(name, jobs)
        print(f"{name:6s} {t:8.2f}s  / best {t / best:.3f}  jobs {jobs}")
    print(f"load average {load_before:.1f} -> {load_after:.1f}")
    print(
        f"RESULT engine_compare ref={args.ref} rows={args.rows} old={res['old'][0]:.2f} "
        f"new={res['new'][0]:.2f} fused={res['fused'][0]:.2f} old_ratio={res['old'][0] / best:.3f} "
        f"new_ratio={res['new'][0] / best:.3f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
