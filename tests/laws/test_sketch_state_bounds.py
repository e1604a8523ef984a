"""Merged sketch states stay inside the sketch's own error bounds.

HLL: the true distinct count of A ∪ B lies within the merged sketch's 3-sigma bounds,
merge order does not change the estimate beyond those bounds, and the empty state is an
identity. KLL: for the merged sketch, the true rank of each returned quantile is within
the sketch's normalized rank error of q. Sketches are built on the driver with
datasketches (cheap, several examples) and once through Spark (the production path) to
check that Spark's bytes merge with them.
"""

from __future__ import annotations

import datasketches as ds
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from pyspark.sql import functions as F

from streamdq.analyzers import HllState, KllState
from streamdq.analyzers.sketch_states import HLL_LG_K

sizes = st.integers(min_value=0, max_value=30_000)
seeds = st.integers(min_value=0, max_value=2**31 - 1)


def _hll(values: np.ndarray) -> HllState:
    sk = ds.hll_sketch(HLL_LG_K)
    for v in values.tolist():
        sk.update(int(v))
    return HllState.of_sketch(sk)


def _kll(values: np.ndarray) -> KllState:
    sk = ds.kll_doubles_sketch(200)
    if len(values):
        sk.update(np.ascontiguousarray(values, dtype=np.float64))
    return KllState.of_sketch(sk)


@settings(max_examples=8, deadline=None)
@given(sizes, sizes, seeds)
def test_hll_merge_within_bounds(n_a, n_b, seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 40_000, n_a)
    b = rng.integers(20_000, 60_000, n_b)
    sa, sb = _hll(a), _hll(b)
    merged, swapped = sa.merge(sb), sb.merge(sa)
    truth = len(set(a.tolist()) | set(b.tolist()))
    lo, hi = merged.bounds(3)
    assert lo <= truth <= hi
    lo2, hi2 = swapped.bounds(3)
    assert lo2 <= truth <= hi2
    assert abs(merged.estimate() - truth) <= max(1.0, merged.relative_error() * 2 * max(truth, 1))
    assert sa.merge(HllState.empty()) == sa and HllState.empty().merge(sa) == sa


@settings(max_examples=8, deadline=None)
@given(sizes, sizes, seeds)
def test_kll_merge_within_rank_error(n_a, n_b, seed):
    rng = np.random.default_rng(seed)
    a = rng.normal(0.0, 1.0, n_a)
    b = rng.exponential(2.0, n_b)
    merged = _kll(a).merge(_kll(b)).merge(KllState.empty())
    data = np.sort(np.concatenate([a, b]))
    if len(data) == 0:
        assert merged == KllState.empty()
        return
    eps = merged.rank_error()
    assert merged.n == len(data)
    for q in (0.0, 0.01, 0.25, 0.5, 0.9, 0.99, 1.0):
        value = merged.quantile(q)
        rank = np.searchsorted(data, value, side="right") / len(data)
        assert rank - eps <= q <= rank + eps or (q == 0.0 and value == data[0]), (q, value, rank, eps)


def test_spark_built_sketches_merge_with_driver_sketches(spark):
    n = 20_000
    df = spark.range(0, n, numPartitions=2).select(F.col("id"), F.col("id").cast("double").alias("x"))
    row = df.agg(F.hll_sketch_agg("id", HLL_LG_K), F.kll_sketch_agg_double("x")).collect()[0]
    spark_hll, spark_kll = HllState.from_sketch_bytes(row[0]), KllState.from_sketch_bytes(row[1])
    other = np.arange(n // 2, n + n // 2)
    hll = spark_hll.merge(_hll(other))
    lo, hi = hll.bounds(3)
    assert lo <= n + n // 2 <= hi
    kll = spark_kll.merge(_kll(other.astype(np.float64)))
    data = np.sort(np.concatenate([np.arange(n, dtype=np.float64), other.astype(np.float64)]))
    eps = kll.rank_error()
    for q in (0.1, 0.5, 0.9):
        rank = np.searchsorted(data, kll.quantile(q), side="right") / len(data)
        assert abs(rank - q) <= eps
