"""bench/engine: streamdq ``verify`` vs the faster of two hand-written baselines.

Standard suite on the same cached DataFrame: size, completeness x3, uniqueness of id,
non-negativity, containment, mean/min/max/stddev, approx distinct, approx quantiles
0.5/0.9/0.99, email pattern, range of a score.

Baselines computing the same numbers:
* fused: ONE hand-written Spark ``agg`` (built-in hll/kll sketch aggregates) + one grouped
  aggregation for the uniqueness of id;
* arrow: ONE hand-written ``mapInArrow`` pass (numpy + datasketches per partition, merged on
  the driver) + the same grouped aggregation (uniqueness cannot be computed in one
  partition-local pass).

Uncached, as a user runs it: the same rows written to Parquet once (``--parquet-dir``), then
every repetition reads them fresh (not cached) in a session with Spark's defaults, set
explicitly (``spark.sql.shuffle.partitions=200``, ``spark.sql.adaptive.enabled=true``; a
``newSession()`` of the same SparkContext), streamdq ``verify`` against the hand-written fused
``agg`` + grouped uniqueness, interleaved (``--uncached-rows``, default 1M and 10M; ``0``
skips it).

Usage: ``make bench-engine`` (BENCH_ARGS="--rows 1000000 10000000 --repeat 3
--uncached-rows 1000000 10000000").
Last line: ``RESULT engine rows=... ratio=... t_streamdq=... t_fused=... t_arrow=...
jobs_streamdq=... jobs_fused=... jobs_arrow=...`` (the last cached row count) followed by
``ratio_<rows>=...`` per cached row count and ``ratio_uncached_<rows>=...``,
``t_uncached_streamdq_<rows>=...``, ``t_uncached_fused_<rows>=...``,
``jobs_uncached_streamdq_<rows>=...``, ``jobs_uncached_fused_<rows>=...`` per uncached row
count (``<rows>`` as ``1m``, ``10m``, ``500k``), and ``load=`` (1-minute load average at the
end).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402
from data import COUNTRIES, generate  # noqa: E402
from pyspark.sql import DataFrame  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402

from streamdq.analyzers.pattern_match import PATTERNS  # noqa: E402
from streamdq.engine.plan import count_jobs  # noqa: E402

EMAIL = PATTERNS["EMAIL"]
QUANTILES = (0.5, 0.9, 0.99)


def standard_checks(check_class: Any = None, level_class: Any = None) -> list[Any]:
    """The standard suite, built with streamdq's ``Check`` (or the given ``Check``/``Level``
    classes, e.g. those of an older streamdq in compare_commits.py)."""
    if check_class is None or level_class is None:
        from streamdq.checks.check import Check as check_class
        from streamdq.checks.check import Level as level_class

    check = (
        check_class(level_class.ERROR, "standard suite")
        .has_size(">= 1")
        .is_complete("id")
        .has_completeness("email", ">= 0.9")
        .has_completeness("country", ">= 0.99")
        .is_unique("id")
        .is_non_negative("amount")
        .is_contained_in("country", COUNTRIES)
        .has_mean("amount", ">= 0")
        .has_min("amount", ">= 0")
        .has_max("amount", "<= 1000")
        .has_standard_deviation("amount", ">= 0")
        .has_approx_count_distinct("user_id", ">= 1")
        .has_approx_quantile("amount", 0.5, ">= 0")
        .has_approx_quantile("amount", 0.9, ">= 0")
        .has_approx_quantile("amount", 0.99, ">= 0")
        .contains_email("email", ">= 0.9")
        .is_contained_in("score", lower_bound=0, upper_bound=100)
    )
    return [check]


def run_streamdq(df: DataFrame) -> tuple[dict[str, Any], int]:
    from streamdq.verification import verify

    result = verify(df, standard_checks())
    out = {f"{m.name}:{m.instance}": m.value for m in result.metrics.values()}
    return out, result.jobs


def _uniqueness(df: DataFrame) -> float:
    row = (
        df.groupBy("id")
        .count()
        .agg(F.sum(F.when(F.col("count") == 1, 1).otherwise(0)), F.sum("count"))
        .collect()[0]
    )
    return row[0] / row[1]


def fused_scan(df: DataFrame) -> Any:
    """The hand-written fused ``agg`` of every scan metric of the suite (one row)."""
    return df.agg(
        F.count(F.lit(1)),
        F.count("id"),
        F.count("email"),
        F.count("country"),
        F.sum(F.when(F.coalesce(F.col("amount").cast("double"), F.lit(0.0)) >= 0, 1).otherwise(0)),
        F.sum(F.when(F.col("country").isNull() | F.col("country").isin(COUNTRIES), 1).otherwise(0)),
        F.avg("amount"),
        F.min("amount"),
        F.max("amount"),
        F.stddev_pop("amount"),
        F.hll_sketch_agg(F.col("user_id").cast("long")),
        F.kll_sketch_agg_double(F.col("amount").cast("double")),
        F.sum(F.when(F.regexp_extract("email", EMAIL, 0) != "", 1).otherwise(0)),
        F.sum(F.when(F.col("score").isNull() | F.col("score").between(0, 100), 1).otherwise(0)),
    ).collect()[0]


def run_fused(df: DataFrame) -> dict[str, Any]:
    import datasketches as ds

    row = fused_scan(df)
    n = row[0]
    kll = ds.kll_doubles_sketch.deserialize(bytes(row[11]))
    return {
        "size": n,
        "completeness_id": row[1] / n,
        "completeness_email": row[2] / n,
        "completeness_country": row[3] / n,
        "non_negative": row[4] / n,
        "contained": row[5] / n,
        "mean": row[6],
        "min": row[7],
        "max": row[8],
        "stddev": row[9],
        "approx_distinct": ds.hll_sketch.deserialize(bytes(row[10])).get_estimate(),
        "quantiles": [kll.get_quantile(q) for q in QUANTILES],
        "email": row[12] / n,
        "score_range": row[13] / n,
        "uniqueness": _uniqueness(df),
    }


def _partition_states(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    import re

    import datasketches as ds

    pattern = re.compile(EMAIL)
    hll = ds.hll_sketch(12)
    kll = ds.kll_doubles_sketch(200)
    n = c_id = c_email = c_country = nonneg = contained = email = score_ok = 0
    s = 0.0
    mn, mx = np.inf, -np.inf
    moments: list[tuple[int, float, float]] = []
    allowed = np.array(COUNTRIES, dtype=object)
    for batch in batches:
        n += batch.num_rows
        ids = batch.column("id")
        c_id += len(ids) - ids.null_count
        em = batch.column("email")
        c_email += len(em) - em.null_count
        co = batch.column("country")
        c_country += len(co) - co.null_count
        amount = batch.column("amount").to_numpy(zero_copy_only=False).astype(np.float64)
        valid = ~np.isnan(amount)
        av = np.ascontiguousarray(amount[valid])
        nonneg += int(np.sum(np.where(np.isnan(amount), 0.0, amount) >= 0))
        cvals = np.array(co.to_pylist(), dtype=object)
        contained += int(np.sum((cvals == None) | np.isin(cvals, allowed)))  # noqa: E711
        if av.size:
            s += float(av.sum())
            mn, mx = min(mn, float(av.min())), max(mx, float(av.max()))
            moments.append((av.size, float(av.mean()), float(((av - av.mean()) ** 2).sum())))
            kll.update(av)
        for u in np.unique(batch.column("user_id").to_numpy(zero_copy_only=False)):
            hll.update(int(u))
        for e in em.to_pylist():
            if e is not None and pattern.search(e):
                email += 1
        sc = batch.column("score").to_numpy(zero_copy_only=False).astype(np.float64)
        score_ok += int(np.sum(np.isnan(sc) | ((sc >= 0) & (sc <= 100))))
    cnt, mean, m2 = 0, 0.0, 0.0
    for nb, mb, m2b in moments:  # Chan's merge of per-batch moments
        if cnt == 0:
            cnt, mean, m2 = nb, mb, m2b
            continue
        delta = mb - mean
        tot = cnt + nb
        mean += delta * nb / tot
        m2 += m2b + delta * delta * cnt * nb / tot
        cnt = tot
    yield pa.RecordBatch.from_pydict(
        {
            "counts": [[n, c_id, c_email, c_country, nonneg, contained, email, score_ok]],
            "moments": [[float(cnt), mean, m2, s, mn, mx]],
            "hll": [hll.serialize_compact()],
            "kll": [kll.serialize()],
        }
    )


def run_arrow(df: DataFrame) -> dict[str, Any]:
    import datasketches as ds

    schema = "counts array<bigint>, moments array<double>, hll binary, kll binary"
    rows = (
        df.select("id", "user_id", "email", "country", "amount", "score")
        .mapInArrow(_partition_states, schema)
        .collect()
    )
    counts = np.sum([r["counts"] for r in rows], axis=0)
    union = ds.hll_union(12)
    kll = ds.kll_doubles_sketch(200)
    cnt, mean, m2, mn, mx = 0.0, 0.0, 0.0, np.inf, -np.inf
    for r in rows:
        union.update(ds.hll_sketch.deserialize(bytes(r["hll"])))
        kll.merge(ds.kll_doubles_sketch.deserialize(bytes(r["kll"])))
        nb, mb, m2b, _s, mnb, mxb = r["moments"]
        mn, mx = min(mn, mnb), max(mx, mxb)
        if nb == 0:
            continue
        if cnt == 0:
            cnt, mean, m2 = nb, mb, m2b
            continue
        delta = mb - mean
        tot = cnt + nb
        mean += delta * nb / tot
        m2 += m2b + delta * delta * cnt * nb / tot
        cnt = tot
    n = counts[0]
    return {
        "size": n,
        "completeness_id": counts[1] / n,
        "completeness_email": counts[2] / n,
        "completeness_country": counts[3] / n,
        "non_negative": counts[4] / n,
        "contained": counts[5] / n,
        "mean": mean,
        "min": mn,
        "max": mx,
        "stddev": (m2 / cnt) ** 0.5,
        "approx_distinct": union.get_result().get_estimate(),
        "quantiles": [kll.get_quantile(q) for q in QUANTILES],
        "email": counts[6] / n,
        "score_range": counts[7] / n,
        "uniqueness": _uniqueness(df),
    }


def interleaved(
    fns: dict[str, Callable[[], Any]], repeat: int, spark: Any
) -> dict[str, tuple[float, Any, int]]:
    """Median wall time, last output and Spark job count of each function, runs interleaved
    (s, f, a, s, f, a, ...) so that machine noise hits every contender alike."""
    times: dict[str, list[float]] = {k: [] for k in fns}
    out: dict[str, Any] = {}
    jobs: dict[str, int] = {}
    for _ in range(repeat):
        for name, fn in fns.items():
            with count_jobs(spark) as j:
                t = time.perf_counter()
                out[name] = fn()
                times[name].append(time.perf_counter() - t)
            jobs[name] = j[0]
            print(f"  {name} {times[name][-1]:.2f}s (load average {os.getloadavg()[0]:.1f})", flush=True)
    return {k: (statistics.median(times[k]), out[k], jobs[k]) for k in fns}


def rows_label(rows: int) -> str:
    """``1m``, ``10m``, ``500k``, ``1500`` (the suffix of the RESULT keys)."""
    if rows % 1_000_000 == 0:
        return f"{rows // 1_000_000}m"
    if rows % 1_000 == 0:
        return f"{rows // 1_000}k"
    return str(rows)


#: Spark's own defaults for what matters here, set explicitly on the uncached session (the
#: cached case runs in streamdq's session, ``get_spark(shuffle_partitions=4)``)
SPARK_DEFAULTS = {"spark.sql.shuffle.partitions": "200", "spark.sql.adaptive.enabled": "true"}


def default_session(spark: Any) -> Any:
    """A session of the same SparkContext with Spark's defaults (``SPARK_DEFAULTS``)."""
    session = spark.newSession()
    for key, value in SPARK_DEFAULTS.items():
        session.conf.set(key, value)
    return session


def write_parquet(spark: Any, rows: int, directory: Path) -> str:
    """The benchmark rows as Parquet under ``directory`` (written once, reused if present)."""
    path = directory / f"engine_{rows}.parquet"
    if not (path / "_SUCCESS").exists():
        generate(spark, rows).write.mode("overwrite").parquet(str(path))
    return str(path)


def run_uncached(session: Any, path: str, repeat: int) -> dict[str, tuple[float, Any, int]]:
    """streamdq ``verify`` vs the hand-written fused ``agg`` + uniqueness, each repetition on
    a fresh, uncached read of ``path`` in ``session``, interleaved."""
    for key, value in SPARK_DEFAULTS.items():
        assert session.conf.get(key) == value, (key, session.conf.get(key))
    run_streamdq(session.read.parquet(path))  # warm-up (this session's first reads)
    run_fused(session.read.parquet(path))
    return interleaved(
        {
            "streamdq": lambda: run_streamdq(session.read.parquet(path)),
            "fused": lambda: run_fused(session.read.parquet(path)),
        },
        repeat,
        session,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--uncached-rows",
        type=int,
        nargs="+",
        default=[1_000_000, 10_000_000],
        help="row counts of the uncached Parquet case in a default session (0: skip it)",
    )
    parser.add_argument("--uncached-repeat", type=int, default=None, help="default: --repeat")
    parser.add_argument(
        "--parquet-dir", default=None, help="where the Parquet input goes (default: a temporary directory)"
    )
    args = parser.parse_args()
    os.environ.setdefault("STREAMDQ_DRIVER_MEMORY", "8g")
    from streamdq.spark import get_spark

    spark = get_spark(shuffle_partitions=4)
    last = ""
    extra: list[str] = []
    for rows in [r for r in args.rows if r > 0]:
        df = generate(spark, rows).cache()
        df.count()
        run_streamdq(df)  # warm-up (JIT, Python workers)
        run_fused(df)
        run_arrow(df)
        res = interleaved(
            {
                "streamdq": lambda d=df: run_streamdq(d),
                "fused": lambda d=df: run_fused(d),
                "arrow": lambda d=df: run_arrow(d),
            },
            args.repeat,
            spark,
        )
        t_sdq, (_metrics, jobs_sdq), _ = res["streamdq"]
        t_fused, fused, jobs_fused = res["fused"]
        t_arrow, arrow, jobs_arrow = res["arrow"]
        best = min(t_fused, t_arrow)
        ratio = t_sdq / best
        print(
            f"rows={rows} streamdq={t_sdq:.2f}s fused_agg={t_fused:.2f}s map_in_arrow={t_arrow:.2f}s "
            f"ratio={ratio:.3f} jobs streamdq={jobs_sdq} fused={jobs_fused} arrow={jobs_arrow}"
        )
        print(
            f"  check: size {fused['size']} vs {arrow['size']}; mean {fused['mean']:.6f} vs {arrow['mean']:.6f}"
        )
        last = (
            f"RESULT engine rows={rows} ratio={ratio:.3f} t_streamdq={t_sdq:.2f} t_fused={t_fused:.2f} "
            f"t_arrow={t_arrow:.2f} jobs_streamdq={jobs_sdq} jobs_fused={jobs_fused} jobs_arrow={jobs_arrow}"
        )
        extra.append(f"ratio_{rows_label(rows)}={ratio:.3f}")
        df.unpersist()
    uncached = [r for r in args.uncached_rows if r > 0]
    if uncached:
        import tempfile

        session = default_session(spark)
        with tempfile.TemporaryDirectory(prefix="bench_engine_") as tmp:
            directory = Path(args.parquet_dir or tmp)
            directory.mkdir(parents=True, exist_ok=True)
            for rows in uncached:
                path = write_parquet(spark, rows, directory)
                print(f"uncached: {rows} rows from {path}, session defaults {SPARK_DEFAULTS}", flush=True)
                res = run_uncached(session, path, args.uncached_repeat or args.repeat)
                t_sdq, (_metrics, jobs_sdq), _ = res["streamdq"]
                t_fused, _fused, jobs_fused = res["fused"]
                ratio = t_sdq / t_fused
                print(
                    f"uncached rows={rows} streamdq={t_sdq:.2f}s fused_agg={t_fused:.2f}s ratio={ratio:.3f} "
                    f"jobs streamdq={jobs_sdq} fused={jobs_fused}"
                )
                label = rows_label(rows)
                extra += [
                    f"ratio_uncached_{label}={ratio:.3f}",
                    f"t_uncached_streamdq_{label}={t_sdq:.2f}",
                    f"t_uncached_fused_{label}={t_fused:.2f}",
                    f"jobs_uncached_streamdq_{label}={jobs_sdq}",
                    f"jobs_uncached_fused_{label}={jobs_fused}",
                ]
    load = f"load={os.getloadavg()[0]:.1f}"
    print(" ".join(part for part in (last or "RESULT engine", *extra, load) if part))
    return 0


if __name__ == "__main__":
    sys.exit(main())
