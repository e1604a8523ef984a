"""bench/engine/partitioning.py: the grouping's own shuffle sizing against the session's.

Same run, same code, uncached Parquet read in a session with Spark's defaults (200 shuffle
partitions, AQE on; ``run.default_session``), interleaved (median of ``--repeat``):

* ``session``: ``verify`` with the grouping query on the session's
  ``spark.sql.shuffle.partitions`` (how streamdq ran before ``grouping_partitions``);
* ``own``: ``verify`` as it runs now (``grouping_partitions``: from the cores and the rows);
* ``p<N>`` (``--force N ...``): ``verify`` with the grouping forced onto N partitions;
* ``fused``: the hand-written fused ``agg`` + ``groupBy(id).count()`` uniqueness.

Usage: ``.venv/bin/python bench/engine/partitioning.py --rows 1000000 --repeat 3 --force 1 4``.
Last line: ``RESULT engine_partitioning rows=... session=... own=... fused=...
session_ratio=... own_ratio=... load=...``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import run as bench  # noqa: E402


@contextmanager
def sizing(rule: Callable[..., int] | None) -> Iterator[None]:
    """``frequency.query.grouping_partitions`` replaced by ``rule`` (``None``: left as it is)."""
    from streamdq.analyzers.frequency import query as frequency

    original = frequency.grouping_partitions
    if rule is not None:
        frequency.grouping_partitions = rule  # type: ignore[assignment]
    try:
        yield
    finally:
        frequency.grouping_partitions = original  # type: ignore[assignment]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--force", type=int, nargs="*", default=[], help="also force N partitions")
    parser.add_argument("--parquet-dir", default=None)
    args = parser.parse_args()
    os.environ.setdefault("STREAMDQ_DRIVER_MEMORY", "8g")
    from streamdq.spark import get_spark

    spark = get_spark(shuffle_partitions=4)
    session = bench.default_session(spark)
    session_partitions = int(session.conf.get("spark.sql.shuffle.partitions"))

    def verify_with(rule: Callable[..., int] | None) -> Callable[[], Any]:
        def go() -> Any:
            with sizing(rule):
                return bench.run_streamdq(session.read.parquet(path))

        return go

    with tempfile.TemporaryDirectory(prefix="bench_partitioning_") as tmp:
        directory = Path(args.parquet_dir or tmp)
        directory.mkdir(parents=True, exist_ok=True)
        path = bench.write_parquet(spark, args.rows, directory)
        fns: dict[str, Callable[[], Any]] = {
            "session": verify_with(lambda *_a, **_k: session_partitions),
            "own": verify_with(None),
        }
        for n in args.force:
            fns[f"p{n}"] = verify_with(lambda *_a, n=n, **_k: n)
        fns["fused"] = lambda: bench.run_fused(session.read.parquet(path))
        for fn in fns.values():  # warm-up
            fn()
        load_before = os.getloadavg()[0]
        res = bench.interleaved(fns, args.repeat, session)
        load_after = os.getloadavg()[0]
    fused = res["fused"][0]
    for name, (t, out, jobs) in res.items():
        if name != "fused":
            jobs = out[1]
        print(f"{name:8s} {t:8.2f}s  / fused {t / fused:.3f}  jobs {jobs}")
    print(f"load average {load_before:.1f} -> {load_after:.1f}")
    forced = " ".join(
        f"{name}={t:.2f} {name}_ratio={t / fused:.3f}" for name, (t, _, _) in res.items() if name[0] == "p"
    )
    print(
        f"RESULT engine_partitioning rows={args.rows} session={res['session'][0]:.2f} own={res['own'][0]:.2f} "
        f"fused={fused:.2f} session_ratio={res['session'][0] / fused:.3f} own_ratio={res['own'][0] / fused:.3f} "
        f"{forced} load={load_after:.1f}".replace("  ", " ")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
