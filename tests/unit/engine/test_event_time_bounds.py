"""Implausible event times (engine/event_time.py): quarantined with the reason, counted, kept
out of every metric, never moving the watermark; year 0001 and 9999-12-31T23:59:55Z do not
crash either engine path; the bounds are configurable (relative and absolute)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from pyspark.sql import functions as F
from streamdq.state import InMemoryStateStore

from streamdq.checks.check import Check, Level
from streamdq.engine.event_time import HARD_MAX, EventTimeBounds
from streamdq.engine.handler import BatchHandler
from streamdq.engine.judge import BatchJudge
from streamdq.engine.scopes import ScopeStates
from streamdq.engine.stages import BatchStates

NOW = datetime.now(UTC).replace(microsecond=0)
HOSTILE = {
    "0001-01-01T00:00:00Z": "before 1900-01-01T00:00:00Z",
    "9999-12-31T23:59:55Z": "not before 9000-01-01T00:00:00Z",
    "9999-06-01T00:00:00Z": "not before 9000-01-01T00:00:00Z",
    (NOW + timedelta(days=2)).strftime("%Y-%m-%dT%H:%M:%SZ"): "more than 1 hour after processing time",
}


def _handler(store: Any, small_batch_rows: int, bounds: EventTimeBounds | None = None) -> BatchHandler:
    return BatchHandler(
        dataset="events",
        query_id="q",
        judge=BatchJudge([Check(Level.ERROR, "c").has_size(">= 0").has_max("x", "<= 100")]),
        window_seconds=60,
        watermark_seconds=0,
        event_time="ts",
        store=store,
        small_batch_rows=small_batch_rows,
        rows_cap=1000,
        event_time_bounds=bounds,
    )


def _frame(spark: Any, stamps: list[str | None]) -> Any:
    rows = [(s, float(i)) for i, s in enumerate(stamps)]
    df = spark.createDataFrame(rows, "ts_text string, x double")
    return df.select(F.to_timestamp("ts_text").alias("ts"), "x")


def _value(report: Any, name: str, scope: str = "batch") -> Any:
    return next(m.metric.value for m in report.metrics if m.metric.name == name and m.scope == scope)


@pytest.mark.parametrize("small_batch_rows", [250_000, 0], ids=["arrow", "fused"])
def test_implausible_event_times_are_quarantined_and_never_move_the_watermark(spark, small_batch_rows):
    store = InMemoryStateStore()
    handler = _handler(store, small_batch_rows)
    good = (NOW - timedelta(minutes=5)).strftime("%Y-%m-%dT%H:%M:%SZ")
    report = handler.handle(_frame(spark, [good, *HOSTILE, None]), 0)
    assert report.counters["implausible_event_time_rows"] == len(HOSTILE)
    assert _value(report, "ImplausibleEventTimeRows") == len(HOSTILE)
    assert report.counters["bad_rows"] == len(HOSTILE)
    assert _value(report, "Size") == 2.0  # the good row and the NULL-time row
    assert _value(report, "Maximum") == 5.0  # x of the good row (0.0) and of the NULL-time row (5.0)
    assert handler.watermark is not None and handler.watermark <= NOW
    quarantined = store.table("quarantine").to_pylist()
    assert len(quarantined) == len(HOSTILE)
    reasons = sorted(r["reason"] for r in quarantined)
    for text in HOSTILE.values():
        assert any(r.startswith("implausible event time ") and r.endswith(text) for r in reasons), (
            text,
            reasons,
        )
    # a later ordinary record is not late
    later = handler.handle(_frame(spark, [(NOW - timedelta(minutes=1)).strftime("%Y-%m-%dT%H:%M:%SZ")]), 1)
    assert later.counters["late_rows"] == 0
    assert later.counters["implausible_event_time_rows"] == 0


def test_relative_past_and_absolute_bounds_are_configurable(spark):
    store = InMemoryStateStore()
    bounds = EventTimeBounds(
        past=timedelta(days=30), future=None, min=None, max=datetime(2100, 1, 1, tzinfo=UTC)
    )
    handler = _handler(store, 250_000, bounds)
    old = (NOW - timedelta(days=31)).strftime("%Y-%m-%dT%H:%M:%SZ")
    recent = (NOW - timedelta(days=29)).strftime("%Y-%m-%dT%H:%M:%SZ")
    future = (NOW + timedelta(days=3)).strftime("%Y-%m-%dT%H:%M:%SZ")  # no future bound now
    report = handler.handle(_frame(spark, [old, recent, future, "2100-01-01T00:00:00Z"]), 0)
    assert report.counters["implausible_event_time_rows"] == 2
    reasons = sorted(r["reason"] for r in store.table("quarantine").to_pylist())
    assert reasons[0].endswith("more than 30 days before processing time")
    assert reasons[1].endswith("not before 2100-01-01T00:00:00Z")


def test_bounds_validate_their_values():
    with pytest.raises(ValueError, match="outside the supported range"):
        EventTimeBounds(max=datetime(9999, 12, 31, tzinfo=UTC))
    with pytest.raises(ValueError, match="not before max"):
        EventTimeBounds(min=datetime(2030, 1, 1, tzinfo=UTC), max=datetime(2020, 1, 1, tzinfo=UTC))
    with pytest.raises(ValueError, match=">= 0"):
        EventTimeBounds(past=timedelta(days=-1))
    assert EventTimeBounds().describe() == "future 1 hour, min 1900-01-01T00:00:00Z"
    assert EventTimeBounds().highest == HARD_MAX


def test_scope_arithmetic_saturates_instead_of_overflowing():
    scopes = ScopeStates(timedelta(hours=1), watermark_delay=timedelta(minutes=1))
    edge = datetime(9999, 12, 31, 23, 30, tzinfo=UTC)
    update = scopes.advance(BatchStates(windows={edge: {}}, event_time_max=edge))
    assert scopes.window_end(edge).year == 9999
    assert update.watermark == edge - timedelta(minutes=1)
    low = ScopeStates(timedelta(hours=1), watermark_delay=timedelta(hours=2))
    assert low.advance(BatchStates(event_time_max=datetime(1, 1, 1, tzinfo=UTC))).watermark is not None


def _config(bounds: Any) -> dict[str, Any]:
    return {
        "dataset": "d",
        "source": {"type": "generator", "rows_per_second": 10},
        "checkpoint": "/tmp/chk",
        "event_time_bounds": bounds,
    }


def test_run_config_reads_event_time_bounds():
    from streamdq.engine.config import load_run_config

    default = load_run_config({k: v for k, v in _config(None).items() if k != "event_time_bounds"})
    assert default.event_time_bounds == EventTimeBounds()
    cfg = load_run_config(_config({"past": "30d", "future": "none", "max": "2100-01-01T00:00:00Z"}))
    assert cfg.event_time_bounds == EventTimeBounds(
        past=timedelta(days=30), future=None, max=datetime(2100, 1, 1, tzinfo=UTC)
    )
    yaml_time = load_run_config(_config({"min": datetime(2020, 1, 1), "future": "2 hours"}))
    assert yaml_time.event_time_bounds.min == datetime(2020, 1, 1, tzinfo=UTC)
    assert yaml_time.event_time_bounds.future == timedelta(hours=2)


@pytest.mark.parametrize(
    "bounds, key, problem",
    [
        ({"past": "a month"}, "event_time_bounds.past", "positive duration"),
        ({"min": "yesterday"}, "event_time_bounds.min", "not an ISO-8601 instant"),
        ({"max": "9999-12-31T00:00:00Z"}, "event_time_bounds.max", "outside the supported range"),
        ({"futur": "1h"}, "event_time_bounds.futur", "unknown key"),
        ("30d", "event_time_bounds", "expected a mapping"),
    ],
)
def test_run_config_rejects_bad_event_time_bounds(bounds, key, problem):
    from streamdq.engine.config import load_run_config
    from streamdq.errors import ConfigError

    with pytest.raises(ConfigError) as err:
        load_run_config(_config(bounds))
    assert err.value.key == key and problem in err.value.problem, str(err.value)


def test_the_streaming_runner_hands_the_bounds_to_its_handler(spark, tmp_path):
    import streamdq

    (tmp_path / "in").mkdir()
    cfg = {
        "dataset": "d",
        "source": {"type": "files", "path": str(tmp_path / "in"), "format": "json", "schema": "ts TIMESTAMP"},
        "event_time": "ts",
        "checkpoint": str(tmp_path / "chk"),
        "sinks": [{"type": "jsonl", "path": str(tmp_path / "r.jsonl")}],
        "event_time_bounds": {"past": "7d", "max": "2200-01-01T00:00:00Z"},
    }
    handler = streamdq.stream(spark, cfg).make_handler("q")
    assert handler.event_time_bounds == EventTimeBounds(
        past=timedelta(days=7), max=datetime(2200, 1, 1, tzinfo=UTC)
    )


def test_a_stored_far_future_watermark_is_reset_on_restore(spark):
    """A watermark an older run pushed to the far future (before bounds existed) would make
    every later record late for good; on restore it is dropped and set again by plausible rows."""
    store = InMemoryStateStore()
    first = _handler(store, 250_000)
    first.scopes.max_event_time = datetime(8999, 6, 1, tzinfo=UTC)
    first.scopes.watermark = datetime(8999, 6, 1, tzinfo=UTC)
    first.handle(_frame(spark, []), 0)  # an empty batch commits the report with that watermark
    again = _handler(store, 250_000)
    recent = (NOW - timedelta(minutes=2)).strftime("%Y-%m-%dT%H:%M:%SZ")
    report = again.handle(_frame(spark, [recent]), 1)
    assert report.counters["late_rows"] == 0
    assert again.watermark is not None and again.watermark <= NOW
    assert EventTimeBounds().plausible(NOW, NOW)
    assert not EventTimeBounds().plausible(NOW + timedelta(hours=2), NOW)
    assert not EventTimeBounds(past=timedelta(days=1)).plausible(NOW - timedelta(days=2), NOW)


def _codegen_compiles(spark: Any) -> int:
    metrics = spark.sparkContext._jvm.org.apache.spark.metrics.source.CodegenMetrics
    return int(metrics.METRIC_COMPILATION_TIME().getCount())


def test_the_small_batch_path_compiles_its_projection_once_with_relative_bounds(spark, monkeypatch):
    """Spark folds current_timestamp() into a literal that its generated code inlines: a
    relative bound tested in Spark would compile the projection anew for every microbatch.
    The Arrow path tests those bounds on the driver, so a second microbatch with the same
    schema compiles nothing, and its relatively implausible rows are still quarantined."""
    store = InMemoryStateStore()
    handler = _handler(store, 250_000, EventTimeBounds(past=timedelta(days=1)))
    good = (NOW - timedelta(minutes=5)).strftime("%Y-%m-%dT%H:%M:%SZ")
    future = (NOW + timedelta(hours=3)).strftime("%Y-%m-%dT%H:%M:%SZ")
    past = (NOW - timedelta(days=3)).strftime("%Y-%m-%dT%H:%M:%SZ")
    first = handler.handle(_frame(spark, [good, future]), 0)
    assert first.counters["implausible_event_time_rows"] == 1
    before = _codegen_compiles(spark)
    second = handler.handle(_frame(spark, [good, None, "9999-06-01T00:00:00Z", good]), 1)
    assert _codegen_compiles(spark) == before  # the one job's projection was compiled by batch 0
    assert second.counters["arrow_path"] == 1
    assert second.counters["implausible_event_time_rows"] == 1
    # rows implausible by a relative bound only: counted, kept out, quarantined (their own job)
    third = handler.handle(_frame(spark, [good, past, future, None, "9999-06-01T00:00:00Z"]), 2)
    assert third.counters["input_rows"] == 5
    assert third.counters["implausible_event_time_rows"] == 3
    assert third.counters["bad_rows"] == 3
    assert _value(third, "Size") == 2.0
    reasons = sorted(r["reason"] for r in store.table("quarantine").to_pylist() if r["batch_id"] == 2)
    assert len(reasons) == 3
    assert sum(r.endswith("more than 1 hour after processing time") for r in reasons) == 1
    assert sum(r.endswith("more than 1 day before processing time") for r in reasons) == 1
    assert sum(r.endswith("not before 9000-01-01T00:00:00Z") for r in reasons) == 1


def test_relative_bounds_on_the_driver_match_spark(spark):
    """The driver's relative test (EventTimeBounds.relative_implausible) flags exactly the rows
    Spark's expression flags at the same processing time, NULL and edges included."""
    import pyarrow as pa

    from streamdq.engine.event_time import epoch_micros

    bounds = EventTimeBounds(past=timedelta(hours=2), future=timedelta(minutes=30))
    now = NOW
    edge = [now + timedelta(minutes=30), now - timedelta(hours=2)]
    moments = [now, *edge, *(e + timedelta(microseconds=d) for e in edge for d in (-1, 1))]
    micros = [epoch_micros(m) for m in moments] + [None]
    df = spark.createDataFrame([(m,) for m in micros], "m long")
    spark_flags = [
        r[0] for r in df.select(bounds.implausible(F.col("m"), now=F.lit(epoch_micros(now)))).collect()
    ]
    driver = bounds.relative_implausible(pa.array(micros, pa.int64()), now).to_pylist()
    assert driver == spark_flags
    assert driver == [False, False, False, False, True, True, False, False]
