"""Measures in the streaming handler on static frames: a failing SQL measure fails alone and the
batch commits; bad records are not ``data``; an empty microbatch runs no measure job; a replayed
batch re-emits its stored measures; both engine paths give the same compiled values."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest
from streamdq.state import InMemoryStateStore

from streamdq.checks.check import Check, Level
from streamdq.checks.measure import Measure
from streamdq.engine.handler import BatchHandler
from streamdq.engine.judge import BatchJudge
from streamdq.engine.measures import MeasureRunner
from streamdq.engine.plan import count_jobs

SCHEMA = "ts timestamp, name string, x int, _streamdq_error string, _streamdq_raw string"
MEASURES = [
    Measure("nulls", "select sum(cast((x is null) as int)) as n, max(x) as top from data", "map"),
    Measure("distinct", "select count(distinct name) from data", "single_value"),
    Measure("several", "select name from data", "single_value"),
]


def _handler(
    store: Any, schema: Any, small_batch_rows: int = 250_000, measures: list[Measure] = MEASURES
) -> BatchHandler:
    return BatchHandler(
        dataset="orders",
        query_id="q1",
        judge=BatchJudge([Check(Level.ERROR, "c").has_size(">= 0")]),
        window_seconds=60,
        event_time="ts",
        store=store,
        small_batch_rows=small_batch_rows,
        rows_cap=1000,
        measures=MeasureRunner(measures, schema),
    )


@pytest.mark.parametrize("small_batch_rows", [250_000, 0], ids=["arrow", "fused"])
def test_measures_of_a_batch_on_its_good_rows_failures_alone_and_replay(spark, small_batch_rows):
    rows = [
        (datetime(2026, 1, 1, 12, 0, 1), "a", 1, None, None),
        (datetime(2026, 1, 1, 12, 0, 2), "a", None, None, None),
        (datetime(2026, 1, 1, 12, 0, 3), "b", 5, None, None),
        (None, None, None, "malformed json", "{"),  # a bad record: not data
    ]
    df = spark.createDataFrame(rows, SCHEMA)
    store = InMemoryStateStore()
    handler = _handler(store, df.schema, small_batch_rows)
    report = handler.handle(df, 0)
    assert report.counters["arrow_path"] == int(small_batch_rows > 0)
    batch = {m.name: m for m in report.measures_at("batch")}
    assert batch["nulls"].value == {"n": 1, "top": 5}
    assert batch["distinct"].value == 2
    assert not batch["several"].ok and "returned several rows" in (batch["several"].failure or "")
    assert {m.name: m.value for m in report.measures_at("total")} == {"nulls": {"n": 1, "top": 5}}
    assert store.last_committed_batch("q1") == 0

    # an empty microbatch: no batch-scope measure, no Spark job for them; total as it stands
    with count_jobs(spark) as jobs:
        empty = handler.handle(df.limit(0), 1)
    assert jobs[0] == 0
    assert empty.measures_at("batch") == []
    assert [m.value for m in empty.measures_at("total")] == [{"n": 1, "top": 5}]

    # a replayed batch re-emits the stored report with its measures
    again = _handler(store, df.schema, small_batch_rows).handle(df, 0)
    assert again.replayed and again.measures == report.measures


def test_after_a_restart_an_empty_first_batch_still_names_map_values_as_spark_does(spark):
    measures = [Measure("plain", "select count(*), max(x) from data", "map")]
    df = spark.createDataFrame([(datetime(2026, 1, 1, 12, 0, 1), "a", 5, None, None)], SCHEMA)
    store = InMemoryStateStore()

    first = _handler(store, df.schema, measures=measures).handle(df, 0)
    assert [m.value for m in first.measures_at("total")] == [{"count(1)": 1, "max(x)": 5}]
    restarted = _handler(store, df.schema, measures=measures).handle(
        df.limit(0), 1
    )  # restored totals, no rows in this batch
    assert [m.value for m in restarted.measures_at("total")] == [{"count(1)": 1, "max(x)": 5}]
