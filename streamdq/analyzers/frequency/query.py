"""The Spark side of a grouping: per-row keys, grouped counts, and the bounded query.

``key_projection`` gives the per-row Spark expressions a grouping groups by (the scope flag
and the key columns); ``grouped_counts`` groups by them; ``compute_frequency_state``
runs on the driver and triggers ONE Spark query (``bounded_query``, one job, on its own
number of shuffle partitions: ``grouping_partitions``, never the session's, see
``spark_settings``) with ONE final aggregation of the groups: the groups with the smallest
key hashes (limit ``max(max_groups, k) + 3``, a TakeOrderedAndProject), a row of totals
(unless the plan's fused scan computed them: ``totals_aggregations``) and, for histograms,
the ``k`` heaviest keys (a second branch over the reused shuffle). If at most
``max_groups`` groups came back, they are ALL the groups: an exact state; else the ``k``
smallest hashes form the bounded sample. No Python loop per key, no second grouping.
Empty input gives a state with ``n == 0`` (each metric decides: 0.0 or an empty failure).

Grouping semantics (Deequ's):

* plain grouping: where-filter first, then group by the columns with their Spark types,
  dropping rows in which ALL grouping columns are NULL (rows with some NULLs stay; NULLs
  are equal when grouping);
* histogram grouping (one column): values cast to string, NULL becomes ``"NullValue"``
  (a bin of its own), mapped through the spec's binning; no row is dropped. With a ``Sum``
  aggregate (``spec.sum_of``) each group also sums ``CAST(sum_of AS BIGINT)``
  (``weight_projection``: NULL, and values that do not fit a long, are skipped), and the
  totals add the sums over the rows kept and over all rows (Deequ's ratio denominator).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from streamdq.analyzers.columns import col, in_scope
from streamdq.analyzers.frequency.grouped import keep_in_scope, state_from_grouped
from streamdq.analyzers.frequency.sample import Sample, sample_of, top_of
from streamdq.analyzers.frequency.sizing import sample_size
from streamdq.analyzers.frequency.spark_settings import one_job
from streamdq.analyzers.frequency.spec import NULL_VALUE, FrequencySpec
from streamdq.analyzers.frequency.states import FrequencyState, SampledFrequencies, Sums
from streamdq.analyzers.key_hash import key_hash
from streamdq.errors import ConfigError, InvalidArgument

TOP_EXTRA = 3  # rows fetched beyond k: up to two groups out of scope, and the (k+1)-th
EXACT_EXTRA = 3  # rows fetched beyond max_groups: up to two groups out of scope, and one more
# A plain grouping of at least PREFILTER_MIN x limit rows kept first looks only at the keys whose
# hash is below ``hash_threshold``: about PREFILTER_SHARE x limit of them when every row has its
# own key (``_prefiltered_sample``). Two, not more: fewer keys to group and order (0.43 s against
# 0.59 s with four, 10M distinct ids), and 2 x 100,003 expected keys stay ~450 standard
# deviations above the limit; keys that repeat twice on average fall back to the full query.
# From 4 x limit rows (400,012 by default) on: at 1M distinct ids the prefilter took a
# ``verify`` from 2.15 s to 1.72 s (with 16 x limit, 1.6M, it did not run there)
PREFILTER_MIN = 4
PREFILTER_SHARE = 2


def smallest_limit(max_groups: int) -> int:
    """The row limit of part 0 of ``bounded_query``: ``max(max_groups + 3, k + 3)``."""
    return max(max_groups + EXACT_EXTRA, sample_size(max_groups) + TOP_EXTRA)


def _binned(key: Column, spec: FrequencySpec) -> Column:
    """A histogram key mapped through the spec's bins (keys not listed: ``default_bin``, or
    kept as they are when there is none). NULL was already turned into ``"NullValue"``."""
    if not spec.bins and spec.default_bin is None:
        return key
    out = F.lit(spec.default_bin) if spec.default_bin is not None else key
    for value, name in reversed(spec.bins):
        out = F.when(key == F.lit(value), F.lit(name)).otherwise(out)
    return out


def key_projection(df: DataFrame, spec: FrequencySpec) -> tuple[Column, list[Column]]:
    """(scope flag, key columns) of ``spec`` as per-row Spark expressions over ``df``: what
    ``grouped_counts`` groups by, and what the small-batch path projects and groups itself.

    Histogram keys are cast to string with NULL as ``"NullValue"``; keys are NULL out of scope.
    """
    columns = spec.resolve_columns(df.columns)
    scope = in_scope(spec.where)
    if spec.histogram:
        if len(columns) != 1:
            raise InvalidArgument(f"a histogram groups exactly one column, got {columns}")
        keys = [_binned(F.coalesce(col(columns[0]).cast("string"), F.lit(NULL_VALUE)), spec)]
    else:
        keys = [col(c) for c in columns]
    if spec.where is not None:
        keys = [F.when(scope, k) for k in keys]
    return scope, keys


def weight_projection(spec: FrequencySpec) -> Column | None:
    """The per-row value a histogram with a ``Sum`` aggregate sums per bin (``None`` without
    one): the column cast to a long as Deequ's ``Sum`` does, by ``try_cast``, so a value that
    does not fit (NaN, an infinity, out of range) is NULL (skipped) whatever the session's
    ANSI setting. Not scoped by ``where``: filtered rows count in the unfiltered total."""
    return None if spec.sum_of is None else col(spec.sum_of).try_cast("long")


def grouped_counts(
    df: DataFrame, spec: FrequencySpec, segment: Sequence[Column] = ()
) -> tuple[DataFrame, int]:
    """The grouped aggregation of ``spec``: columns ``in_scope, k0.., count`` (and ``sum`` with a
    ``Sum`` aggregate); and the key arity.

    Rows out of scope collapse into one ``in_scope = false`` group (their keys NULL), so
    the unfiltered row count comes out of the same pass. ``segment`` columns (e.g. an
    event-time window), when given, lead the grouping as ``s0..`` so one pass yields the
    counts of every segment.
    """
    scope, keys = key_projection(df, spec)
    named = [k.alias(f"k{i}") for i, k in enumerate(keys)]
    segs = [c.alias(f"s{i}") for i, c in enumerate(segment)]
    aggregates = [F.count(F.lit(1)).cast("long").alias("count")]
    weight = weight_projection(spec)
    if weight is not None:
        aggregates.append(F.sum(weight).cast("long").alias("sum"))
    grouped = df.groupBy(*segs, scope.alias("in_scope"), *named).agg(*aggregates)
    return grouped, len(keys)


def compute_frequency_state(
    df: DataFrame,
    spec: FrequencySpec,
    *,
    max_groups: int | None,
    totals: tuple[int, int] | None = None,
    prefilter: bool = False,
) -> FrequencyState:
    """Run the grouped aggregation of ``spec`` over ``df`` and return its state (driver).

    ONE Spark query (``bounded_query``) with ONE final aggregation of the groups: the
    ``max(max_groups, k) + 3`` groups with the smallest key hashes, plus a row of totals
    unless ``totals`` = (all rows, rows kept) is given (the plan computes them in its
    fused scan, see ``totals_aggregations``) and, for histograms, the ``k + 3`` heaviest
    keys. When fewer than ``max_groups + 3`` groups came back, they are ALL the groups:
    an exact state. Otherwise the ``k`` smallest hashes among them are the bounded
    sample (no Python loop per key, no second grouping). At most
    ``max(max_groups, k) + k + 7`` rows reach the driver. ``max_groups=None`` keeps every
    group exactly (unbounded: only when explicitly asked for). Empty input: a state with
    ``n == 0``.

    ``prefilter``: the keys are expected distinct (``GroupingAnalyzer.KEYS_EXPECTED_DISTINCT``):
    with ``totals`` showing many rows kept, a plain grouping first groups only the rows with the
    smallest key hashes (``_prefiltered_sample``; the same state, or the full query after it).

    The query's shuffle has ``grouping_partitions`` partitions (from the cores and, when
    ``totals`` gives it, the number of rows kept), whatever the session's
    ``spark.sql.shuffle.partitions``; the partitioning changes the cost, never the state.
    """
    if max_groups is not None and max_groups < 1:
        raise ConfigError(
            "max_groups",
            f"must be >= 1 or None, got {max_groups}",
            "set max_groups to the number of groups a grouping keeps exactly (None: unbounded)",
        )
    grouped, n_keys = grouped_counts(df, spec)
    if max_groups is None:
        arrow_all = collect_grouping(grouped, rows=None, limit=None)
        return state_from_grouped(arrow_all, n_keys=n_keys, histogram=spec.histogram, max_groups=None)
    weighted = spec.sum_of is not None
    if prefilter and totals is not None and not weighted and not spec.histogram:
        prefiltered = _prefiltered_sample(df, spec, max_groups=max_groups, totals=totals)
        if prefiltered is not None:
            return prefiltered
    query = bounded_query(
        df,
        spec,
        max_groups=max_groups,
        grouped=(grouped, n_keys),
        with_totals=totals is None or weighted,  # the fused scan counts rows, never sums
    )
    names = [f"k{i}" for i in range(n_keys)]
    k = sample_size(max_groups)
    rows = None if totals is None else int(totals[1])
    arrow = collect_grouping(query, rows=rows, limit=smallest_limit(max_groups))
    part = arrow["_part"]
    row = arrow.filter(pc.equal(part, 1))
    if totals is None:
        total = int(row["count"][0].as_py() or 0) if row.num_rows else 0
        n = int(row["_n"][0].as_py() or 0) if row.num_rows else 0
    else:
        total, n = int(totals[0]), int(totals[1])
    sums = None
    if weighted:
        sums = Sums(row["_sk"][0].as_py(), row["_st"][0].as_py()) if row.num_rows else Sums()
    drop = not spec.histogram
    smallest = arrow.filter(pc.equal(part, 0))
    rows = keep_in_scope(smallest, n_keys=n_keys, drop_all_null=drop)
    if smallest.num_rows < max_groups + EXACT_EXTRA and rows.num_rows <= max_groups:
        # fewer rows than the limit: these are ALL the groups, and few enough to keep exactly
        table = rows.select([*names, "count", *(["sum"] if weighted else [])])
        # key columns nullable whatever the query's shape (as with the totals branch in the
        # union), so that equal groups give equal state bytes however the totals came
        schema = pa.schema([f.with_nullable(True) if f.name in names else f for f in table.schema])
        return FrequencyState.from_table(
            table.cast(schema), n=n, total=total, max_groups=max_groups, sums=sums
        )
    bounded = _bottom_k(rows, k)
    heavy = None
    if spec.histogram:
        fetched = arrow.filter(pc.equal(part, 2))
        tops = keep_in_scope(fetched, n_keys=n_keys, drop_all_null=False)
        value = "sum" if weighted else "count"
        lightest = keep_in_scope(arrow.filter(pc.equal(part, 3)), n_keys=n_keys, drop_all_null=False)
        floor = int(lightest[value].fill_null(0)[0].as_py()) if lightest.num_rows else 0
        # fewer rows than the limit: every key came back; else at least k + 1 in-scope
        # keys did, and the (k+1)-th value bounds the unlisted ones (part 3's from below)
        heavy = top_of(
            tops["k0"].combine_chunks(),
            np.asarray(tops[value].fill_null(0).to_numpy(zero_copy_only=False), dtype=np.int64),
            k,
            complete=fetched.num_rows < k + TOP_EXTRA,
            floor=floor,
        )
    return SampledFrequencies(n=n, total=total, max_groups=max_groups, sample=bounded, top=heavy, sums=sums)


def _bottom_k(rows: pa.Table, k: int) -> Sample:
    """The bottom-``k`` sample of a bounded query's part-0 rows (columns ``count``, ``_h``)."""
    counts = np.asarray(rows["count"].to_numpy(zero_copy_only=False), dtype=np.int64)
    hashes = np.asarray(rows["_h"].to_numpy(zero_copy_only=False), dtype=np.int64)
    return sample_of(hashes, counts, k)


def hash_threshold(rows: int, limit: int) -> int | None:
    """The signed key hash below which a bounded grouping of ``rows`` kept rows looks first
    (``_prefiltered_sample``); None under ``PREFILTER_MIN x limit`` rows, where the plain
    query's ordered limit costs little.

    Hashes are uniform over the signed 64-bit range, so with one key per row about
    ``PREFILTER_SHARE x limit`` keys fall below it.

    >>> hash_threshold(16_000_000, 100_003) == -(2**63) + 2**64 * 2 * 100_003 // 16_000_000
    True
    >>> hash_threshold(300_000, 100_003) is None
    True
    """
    if limit < 1 or rows < PREFILTER_MIN * limit:
        return None
    return -(1 << 63) + (1 << 64) * PREFILTER_SHARE * limit // rows


def _prefiltered_sample(
    df: DataFrame, spec: FrequencySpec, *, max_groups: int, totals: tuple[int, int]
) -> FrequencyState | None:
    """The bounded sample of a plain, unweighted grouping of many rows from the groups of the
    rows whose key hash is below ``hash_threshold``, or None (the caller runs the full query).

    The full query orders every group by its key hash to keep the ``limit`` smallest (a
    TakeOrderedAndProject over all groups: 1.4 s of a 6.8 s ``verify`` for 10M distinct ids
    against 0.35 s for ``groupBy(id).count()``, bench/README.md ``## engine``). Filtering the
    rows on their key's hash first (the same ``key_hash`` the query orders by) leaves a few
    ``limit`` groups to aggregate and order. When at least ``limit`` kept groups come back they
    hold the ``limit`` smallest hashes of all groups, so the state is the full query's, byte for
    byte. Fewer (a column whose rows repeat their keys): None, and this job was the cost of
    trying, a scan of the input (hence only for keys expected distinct, ``prefilter``). Only
    with ``totals`` (the plan's fused scan counted the rows kept)."""
    limit = smallest_limit(max_groups)
    threshold = hash_threshold(int(totals[1]), limit)
    if threshold is None:
        return None
    _, keys = key_projection(df, spec)  # the keys the query groups by and hashes
    below = key_hash(keys) < F.lit(threshold)
    query = bounded_query(
        df.where(kept_rows(df, spec) & below), spec, max_groups=max_groups, with_totals=False
    )
    arrow = collect_grouping(query, rows=PREFILTER_SHARE * limit, limit=limit)
    rows = keep_in_scope(arrow.filter(pc.equal(arrow["_part"], 0)), n_keys=len(keys), drop_all_null=True)
    if rows.num_rows < limit:
        return None
    sample = _bottom_k(rows, sample_size(max_groups))
    return SampledFrequencies(n=int(totals[1]), total=int(totals[0]), max_groups=max_groups, sample=sample)


def kept_rows(df: DataFrame, spec: FrequencySpec) -> Column:
    """TRUE on the input rows a grouping of ``spec`` counts in ``n`` (in scope, and for
    plain groupings not NULL in every grouping column)."""
    kept = in_scope(spec.where)
    if not spec.histogram:
        key_valid = F.lit(False)
        for c in spec.resolve_columns(df.columns):
            key_valid = key_valid | col(c).isNotNull()
        kept = kept & key_valid
    return kept


def totals_aggregations(df: DataFrame, spec: FrequencySpec) -> list[Column]:
    """The two global aggregates ``compute_frequency_state`` takes as ``totals``: all rows,
    and the rows kept (``kept_rows``). The plan adds them to its fused scan, so the
    grouping query needs no scan of its own for them."""
    return [
        F.count(F.lit(1)).cast("long"),
        F.coalesce(F.sum(F.when(kept_rows(df, spec), F.lit(1))), F.lit(0)).cast("long"),
    ]


def grouping_partitions(cores: int, rows: int | None, limit: int | None) -> int:
    """Shuffle partitions for a grouping query: streamdq sizes its own grouping stage, so
    the cost does not depend on the session's ``spark.sql.shuffle.partitions``.

    ``cores``: the cluster's parallelism (``defaultParallelism``); ``rows``: the rows that
    can form groups, when known (the plan's fused scan counts them), else ``None``;
    ``limit``: the per-partition limit of the bounded query's TakeOrderedAndProject
    (``None`` for the unbounded query, which has none).

    Each of P partitions keeps up to ``limit`` groups and ONE task merges them: P * limit
    rows, against about rows / P per partition. P = floor(sqrt(rows / limit)) balances the
    two, capped by the cores and at least 1; so a grouping of at most ``limit`` rows runs in
    one partition, and a large one on at most one partition per core. Unknown ``rows`` or
    no limit: one partition per core.
    """
    cores = max(1, int(cores))
    if rows is None or limit is None:
        return cores
    return max(1, min(cores, math.isqrt(max(int(rows), 0) // max(int(limit), 1))))


def collect_grouping(query: DataFrame, *, rows: int | None, limit: int | None) -> pa.Table:
    """``query.toArrow()`` for a query over grouped counts (``grouped_counts``,
    ``bounded_query``, or a limit of them): ONE Spark job on ``grouping_partitions(cores,
    rows, limit)`` shuffle partitions, whatever the session's settings (``spark_settings.one_job``).

    ``rows``: the rows that can form groups, when known; ``limit``: the per-partition limit
    of an ordered limit in the query (``None``: none)."""
    spark = query.sparkSession
    partitions = grouping_partitions(spark.sparkContext.defaultParallelism, rows, limit)
    with one_job(spark, partitions):
        return query.toArrow()


def bounded_query(
    df: DataFrame,
    spec: FrequencySpec,
    *,
    max_groups: int,
    grouped: tuple[DataFrame, int] | None = None,
    with_totals: bool = True,
) -> DataFrame:
    """The one query of a bounded grouping, in parts (column ``_part``):

    * 0: the ``max(max_groups, k) + 3`` groups with the smallest key hashes (``in_scope,
      k0.., count, _h``; a TakeOrderedAndProject with a bounded queue per partition, no
      full sort); groups out of scope sort last (at most two: the out-of-scope group,
      the all-NULL key). When fewer than ``max_groups + 3`` rows come back they are ALL
      the groups (the state may be exact); otherwise at least ``max(max_groups, k) + 1``
      in-scope groups did, and the ``k`` smallest hashes among them are the sample;
    * 1 (``with_totals``): one row of totals (``count`` = all rows, ``_n`` = rows kept),
      a global aggregation of the input itself, not of the groups;
    * 2: histograms only: the ``k + 3`` heaviest keys (count desc, key asc; with a ``Sum``
      aggregate, by sum, NULL as 0), which reads the same grouped aggregation through a
      reused exchange;
    * 3: histograms with a ``Sum`` aggregate only: the lightest in-scope bin (its sum bounds
      an unlisted bin's sum from below; a sum can be negative). Part 1 then also carries
      ``_sk`` and ``_st``, the sums over the rows kept and over all rows.

    A plain grouping thus runs its final (post-shuffle) aggregation ONCE: part 0 serves
    both the exact table and the sample. Filters on the keys are avoided on purpose:
    Spark would push them below the aggregation and defeat the exchange reuse.
    """
    grouped_df, n_keys = grouped if grouped is not None else grouped_counts(df, spec)
    names = [f"k{i}" for i in range(n_keys)]
    keep = F.col("in_scope")
    if not spec.histogram and names:
        any_valid = F.lit(False)
        for name in names:
            any_valid = any_valid | F.col(name).isNotNull()
        keep = keep & any_valid
    k = sample_size(max_groups)
    g = grouped_df.withColumn("_h", key_hash([F.col(name) for name in names]))
    weight = weight_projection(spec)
    values = ["count"] if weight is None else ["count", "sum"]
    query = (
        g.orderBy(F.when(keep, F.col("_h")).asc_nulls_last())
        .limit(smallest_limit(max_groups))
        .select(F.lit(0).alias("_part"), "in_scope", *names, *values, "_h")
    )
    if with_totals:
        aggregates = totals_aggregations(df, spec)
        totals_names = ["count", "_n"]
        if weight is not None:
            aggregates += [
                F.sum(weight).cast("long"),
                F.sum(F.when(kept_rows(df, spec), weight)).cast("long"),
            ]
            totals_names += ["_st", "_sk"]
        sums = df.agg(*aggregates).toDF(*totals_names)
        query = query.unionByName(
            sums.select(F.lit(1).alias("_part"), *totals_names), allowMissingColumns=True
        )
    if spec.histogram:
        ranked = F.col("count") if weight is None else F.coalesce(F.col("sum"), F.lit(0))
        top = g.orderBy(F.when(keep, ranked).desc_nulls_last(), F.asc(names[0])).limit(k + TOP_EXTRA)
        query = query.unionByName(
            top.select(F.lit(2).alias("_part"), "in_scope", *names, *values), allowMissingColumns=True
        )
        if weight is not None:
            low = g.orderBy(F.when(keep, ranked).asc_nulls_last()).limit(1)
            query = query.unionByName(
                low.select(F.lit(3).alias("_part"), "in_scope", *names, *values), allowMissingColumns=True
            )
    return query
