"""A plain grouping of many rows whose keys are expected distinct looks first at the keys with
the smallest hashes (query.py, ``_prefiltered_sample``): the same state as the full query, byte
for byte, or the full query."""

from __future__ import annotations

import pytest
from pyspark.sql import functions as F

from streamdq.analyzers import (
    CountDistinct,
    Distinctness,
    Entropy,
    FrequencySpec,
    Size,
    Uniqueness,
    UniqueValueRatio,
)
from streamdq.analyzers.frequency import query
from streamdq.analyzers.frequency.query import compute_frequency_state, hash_threshold, smallest_limit
from streamdq.engine import plan as plan_module
from streamdq.engine.plan import AnalysisPlan

ROWS = 5000
MAX_GROUPS = 100  # limit 103: the prefilter runs from 1,648 rows kept


@pytest.fixture(scope="module")
def df(spark):
    return spark.range(ROWS).select(
        F.col("id"),
        (F.col("id") % 300).alias("rep"),  # 300 keys, ~17 rows each
        (F.col("id") % 5).alias("few"),
        F.when(F.col("id") % 3 == 0, F.lit(None)).otherwise(F.col("id") % 2000).alias("nul"),
        (F.col("id") % 7).alias("m"),
    )


def _totals(df, spec):
    own = compute_frequency_state(df, spec, max_groups=MAX_GROUPS)
    return own.total, own.n


def _states(df, spec, monkeypatch):
    """(state with the prefilter, state of the full query, whether the prefilter served it)."""
    totals = _totals(df, spec)
    served = []
    real = query._prefiltered_sample

    def spy(*args, **kwargs):
        out = real(*args, **kwargs)
        served.append(out is not None)
        return out

    with monkeypatch.context() as m:
        m.setattr(query, "_prefiltered_sample", spy)
        with_prefilter = compute_frequency_state(
            df, spec, max_groups=MAX_GROUPS, totals=totals, prefilter=True
        )
    with monkeypatch.context() as m:
        m.setattr(query, "PREFILTER_MIN", 10**12)
        full = compute_frequency_state(df, spec, max_groups=MAX_GROUPS, totals=totals, prefilter=True)
    return with_prefilter, full, served


@pytest.mark.parametrize(
    "columns,where,served",
    [
        (("id",), None, True),  # one key per row: the prefilter's groups suffice
        (("id",), "m > 0", True),  # in scope only
        (("id", "nul"), None, True),  # two keys, NULLs in one
        (("nul",), None, True),  # all-NULL keys are not kept (1,667 rows): 2,000 keys of 3,333 rows
        (("rep",), None, False),  # keys repeat: too few below the threshold, the full query
        (("few",), None, False),  # five keys: an exact state, from the full query
    ],
)
def test_the_prefiltered_state_is_the_full_querys(df, monkeypatch, columns, where, served):
    spec = FrequencySpec(columns, where=where)
    with_prefilter, full, used = _states(df, spec, monkeypatch)
    assert used == [served]
    assert with_prefilter == full
    assert with_prefilter.to_bytes() == full.to_bytes()
    assert with_prefilter.is_sketch == (columns != ("few",))


def test_histograms_small_groupings_and_keys_not_expected_distinct_never_prefilter(df, monkeypatch):
    calls = []
    monkeypatch.setattr(query, "_prefiltered_sample", lambda *a, **k: calls.append(1))
    histogram = FrequencySpec(("id",), histogram=True)
    totals = _totals(df, histogram)
    compute_frequency_state(df, histogram, max_groups=MAX_GROUPS, totals=totals, prefilter=True)
    compute_frequency_state(df, FrequencySpec(("id",)), max_groups=MAX_GROUPS, prefilter=True)  # no totals
    plain = FrequencySpec(("id",))
    compute_frequency_state(df, plain, max_groups=MAX_GROUPS, totals=_totals(df, plain))  # not asked
    assert calls == []
    assert (
        hash_threshold(query.PREFILTER_MIN * smallest_limit(MAX_GROUPS) - 1, smallest_limit(MAX_GROUPS))
        is None
    )
    assert (
        hash_threshold(query.PREFILTER_MIN * smallest_limit(MAX_GROUPS), smallest_limit(MAX_GROUPS))
        is not None
    )


@pytest.mark.parametrize(
    "analyzers,asked",
    [
        ([Uniqueness(("id",))], True),
        ([Distinctness(("id",)), CountDistinct(("id",))], True),  # one member expects distinct keys
        ([UniqueValueRatio(("id",))], True),
        ([CountDistinct(("id",)), Entropy("id")], False),  # a categorical column's usual analyzers
    ],
)
def test_the_plan_prefilters_for_analyzers_that_expect_distinct_keys(df, monkeypatch, analyzers, asked):
    """A wasted first pass (keys that repeat) costs a scan; the analyzers that ask whether keys
    are distinct (KEYS_EXPECTED_DISTINCT) are the ones users point at key columns."""
    seen = []
    real = query.compute_frequency_state

    def spy(*args, **kwargs):
        seen.append(kwargs.get("prefilter", False))
        return real(*args, **kwargs)

    monkeypatch.setattr(plan_module, "compute_frequency_state", spy)
    result = AnalysisPlan([Size(), *analyzers], max_groups=MAX_GROUPS).run(df)
    assert seen == [asked]
    assert not result.failures
