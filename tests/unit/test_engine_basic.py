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


# -- totals of bounded groupings ride along in the fused scan -----------------------------


def _record_with_totals(monkeypatch) -> list[tuple[str | None, bool]]:
    """(where, with_totals) of every bounded grouping query built from now on."""
    import streamdq.analyzers.frequency.query as frequency

    seen: list[tuple[str | None, bool]] = []
    original = frequency.bounded_query

    def spy(df, spec, **kwargs):
        seen.append((spec.where, kwargs.get("with_totals", True)))
        return original(df, spec, **kwargs)

    monkeypatch.setattr(frequency, "bounded_query", spy)
    return seen


def test_grouping_totals_come_from_the_fused_scan(df, monkeypatch):
    from streamdq.analyzers import Histogram, Uniqueness

    unique, hist = Uniqueness(("name",), where="id <> 3"), Histogram("name")
    alone = analyze(df, [unique, hist])  # no scan analyzer: each grouping counts its own totals
    seen = _record_with_totals(monkeypatch)
    fused = analyze(df, [Size(), unique, hist])
    assert [t for _, t in seen] == [False, False]  # the grouping queries scanned nothing for totals
    assert fused.jobs == alone.jobs + _fused_agg_jobs(df)
    for a in (unique, hist):
        assert fused.states[a] == alone.states[a]
        assert fused.states[a].to_bytes() == alone.states[a].to_bytes()
        assert fused.metric(a) == alone.metric(a)
    assert fused.metric(unique).value == 1.0 and fused.metric(Size()).value == 4.0
    assert fused.states[unique].n == 2 and fused.states[hist].total == 4


def test_grouping_with_a_bad_where_fails_alone_next_to_the_scan(df, monkeypatch):
    from streamdq.analyzers import Uniqueness

    bad = Uniqueness(("name",), where="no_such_col > 1")
    seen = _record_with_totals(monkeypatch)
    ctx = analyze(df, [Size(), Mean("x"), bad, Uniqueness(("id",))])
    assert ctx.metric(Size()).value == 4.0 and ctx.metric(Mean("x")).ok
    assert ctx.metric(Uniqueness(("id",))).value == 1.0
    assert not ctx.metric(bad).ok
    assert (None, False) in seen  # the good spec's totals came from the scan
    assert all(t for where, t in seen if where is not None)  # the bad one's stayed out of it


def test_unbounded_grouping_adds_nothing_to_the_scan(df):
    from streamdq.analyzers import Uniqueness

    ctx = analyze(df, [Size(), Uniqueness(("name",))], max_groups=None)
    assert ctx.metric(Uniqueness(("name",))).value == 1.0
