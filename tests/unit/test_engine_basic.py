"""Engine smoke tests: fused pass, job count, isolation of a failing analyzer."""

from __future__ import annotations

import pytest

from streamdq import analyze
from streamdq.analyzers import Completeness, Mean, Size


@pytest.fixture(scope="module")
def df(spark):
    return spark.createDataFrame(
        [(1, "a", 1.0), (2, None, 2.0), (3, "c", None), (4, "d", 5.0)], "id int, name string, x double"
    )


def _fused_agg_jobs(df) -> int:
    """Jobs of ONE hand-written aggregation (AQE submits a map-stage job plus a result job)."""
    from pyspark.sql import functions as F

    from streamdq.engine.plan import count_jobs

    with count_jobs(df.sparkSession) as jobs:
        df.agg(F.count("*")).collect()
    return jobs[0]


def test_scan_shareable_analyzers_run_in_one_job(df):
    baseline = _fused_agg_jobs(df)
    one = analyze(df, [Size()])
    ctx = analyze(df, [Size(), Completeness("name"), Mean("x"), Size()])
    assert one.jobs == baseline
    assert ctx.jobs == baseline
    assert ctx.metric(Size()).value == 4.0
    assert ctx.metric(Completeness("name")).value == 0.75
    assert ctx.metric(Mean("x")).value == pytest.approx(8.0 / 3)


def test_where_filter_and_empty_scope(df):
    ctx = analyze(df, [Size(where="id > 2"), Completeness("name", where="id > 100")])
    assert ctx.metric(Size(where="id > 2")).value == 2.0
    m = ctx.metric(Completeness("name", where="id > 100"))
    assert not m.ok and m.empty


def test_failing_analyzer_does_not_stop_others(df):
    bad_col = Completeness("nope")
    bad_type = Mean("name")
    bad_where = Size(where="no_such_col > 1")
    ctx = analyze(df, [Size(), bad_col, bad_type, bad_where])
    assert ctx.metric(Size()).value == 4.0
    assert "does not exist" in (ctx.metric(bad_col).failure or "")
    assert "numeric" in (ctx.metric(bad_type).failure or "")
    assert not ctx.metric(bad_where).ok
