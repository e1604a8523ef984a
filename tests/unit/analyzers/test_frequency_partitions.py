"""A grouping sizes its own shuffle: not the session's ``spark.sql.shuffle.partitions``.

With Spark's default of 200 shuffle partitions, every partition of the bounded query's
TakeOrderedAndProject kept up to ``max_groups + 3`` rows and one task merged them all (at
1M distinct ids, every group went through that task). ``compute_frequency_state`` now runs
its query on ``grouping_partitions`` partitions, in one job, and leaves the session's
settings as it found them.
"""

from __future__ import annotations

import re

import pytest
from pyspark.sql import functions as F

from streamdq.analyzers import FrequencySpec
from streamdq.analyzers.frequency import query as frequency_module
from streamdq.analyzers.frequency.query import compute_frequency_state, grouping_partitions, smallest_limit
from streamdq.engine.plan import count_jobs

ROWS = 6000
KEYS = 4000
MAX_GROUPS = 512
AQE = "spark.sql.adaptive.enabled"
SHUFFLE = "spark.sql.shuffle.partitions"


@pytest.mark.parametrize(
    ("cores", "rows", "limit", "expected"),
    [
        (2, None, 100_003, 2),  # rows unknown: one partition per core
        (2, 1_000_000, None, 2),  # no limit (the unbounded query): one per core
        (2, 100_003, 100_003, 1),  # at most the limit: everything in one partition
        (2, 50_000, 100_003, 1),
        (2, 0, 100_003, 1),
        (2, 1_000_000, 100_003, 2),  # floor(sqrt(10)) = 3, capped by the cores
        (64, 100_000_000, 100_003, 31),  # floor(sqrt(999.97)) = 31 of 64 cores
        (64, 10_000_000, 100_003, 9),
        (0, None, 100_003, 1),
    ],
)
def test_grouping_partitions(cores, rows, limit, expected):
    assert grouping_partitions(cores, rows, limit) == expected


def test_smallest_limit():
    assert smallest_limit(100_000) == 100_003
    assert smallest_limit(8) == 32 + 3  # k = 2**5 at the smallest lg_k


@pytest.fixture(scope="module")
def df(spark):
    return spark.range(ROWS).select((F.col("id") % KEYS).alias("k"), (F.col("id") % 7).alias("m"))


@pytest.fixture
def default_session(spark):
    """The session as a user's Spark defaults leave it: 200 shuffle partitions, AQE on."""
    before = {key: spark.conf.get(key, None) for key in (AQE, SHUFFLE)}
    spark.conf.set(AQE, "true")
    spark.conf.set(SHUFFLE, "200")
    yield spark
    for key, value in before.items():
        if value is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, value)


def _shuffle_partitions(plan_text: str) -> list[int]:
    """The partition counts of the hash exchanges in an executed plan."""
    return [int(n) for n in re.findall(r", (\d+)\), ENSURE_REQUIREMENTS", plan_text)]


def _capture_queries(monkeypatch) -> list:
    seen: list = []
    original = frequency_module.bounded_query

    def spy(*args, **kwargs):
        query = original(*args, **kwargs)
        seen.append(query)
        return query

    monkeypatch.setattr(frequency_module, "bounded_query", spy)
    return seen


@pytest.mark.parametrize(
    ("max_groups", "totals"), [(MAX_GROUPS, None), (MAX_GROUPS, (ROWS, ROWS)), (KEYS, None)]
)
def test_bounded_query_ignores_the_sessions_shuffle_partitions(
    default_session, df, monkeypatch, max_groups, totals
):
    spark = default_session
    seen = _capture_queries(monkeypatch)
    spec = FrequencySpec(("k",))
    with count_jobs(spark) as jobs:
        state = compute_frequency_state(df, spec, max_groups=max_groups, totals=totals)
    expected = grouping_partitions(
        spark.sparkContext.defaultParallelism,
        None if totals is None else totals[1],
        smallest_limit(max_groups),
    )
    plan = seen[0]._jdf.queryExecution().executedPlan().toString()
    partitions = _shuffle_partitions(plan)
    assert partitions and set(partitions) == {expected}, plan
    assert jobs[0] == 1  # adaptive execution stays off for the query: one job
    # the session's own settings are back
    assert spark.conf.get(SHUFFLE) == "200" and spark.conf.get(AQE) == "true"
    # the partitioning changes the cost, never the state
    spark.conf.set(SHUFFLE, "3")
    spark.conf.set(AQE, "false")
    again = compute_frequency_state(df, spec, max_groups=max_groups, totals=totals)
    assert again == state
    assert again.to_bytes() == state.to_bytes()
    assert state.is_sketch == (max_groups == MAX_GROUPS)


def test_unbounded_query_runs_in_one_job_on_its_own_partitions(default_session, df):
    spark = default_session
    spec = FrequencySpec(("k",))
    with count_jobs(spark) as jobs:
        state = compute_frequency_state(df, spec, max_groups=None)
    assert jobs[0] == 1
    assert spark.conf.get(SHUFFLE) == "200" and spark.conf.get(AQE) == "true"
    assert not state.is_sketch and state.n == ROWS and len(state.counts()) == KEYS


def test_settings_restored_after_a_failing_query(default_session, spark):
    bad = spark.range(10).select(F.raise_error(F.lit("boom")).alias("k"))
    with pytest.raises(Exception, match="boom"):
        compute_frequency_state(bad, FrequencySpec(("k",)), max_groups=MAX_GROUPS)
    assert spark.conf.get(SHUFFLE) == "200" and spark.conf.get(AQE) == "true"


def test_collect_grouping_of_a_limited_grouped_counts(default_session, df):
    # the plan's segmented grouping collects ``grouped_counts(...).limit(n)``: the same
    # helper runs it in one job on its own partitions
    from streamdq.analyzers.frequency.query import collect_grouping, grouped_counts

    spark = default_session
    grouped, _ = grouped_counts(df, FrequencySpec(("k",)), [F.col("m") % 2])
    query = grouped.limit(10 * KEYS)
    with count_jobs(spark) as jobs:
        arrow = collect_grouping(query, rows=None, limit=None)
    assert jobs[0] == 1
    assert arrow.num_rows == len({(i % KEYS, (i % 7) % 2) for i in range(ROWS)})
    plan = query._jdf.queryExecution().executedPlan().toString()
    assert set(_shuffle_partitions(plan)) == {spark.sparkContext.defaultParallelism}, plan
    assert spark.conf.get(SHUFFLE) == "200" and spark.conf.get(AQE) == "true"
