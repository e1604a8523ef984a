"""``row_level: quarantine``: rows failing a check's row-level constraints go to quarantine with
the names of the constraints they fail, counted as metrics, capped per batch; dataset-level
constraints never stamp rows; checks without the option quarantine nothing."""

from __future__ import annotations

from datetime import datetime

import pytest
from streamdq.state import InMemoryStateStore

from streamdq.checks.check import Check, Level
from streamdq.checks.spec import loads_suite
from streamdq.engine.config import load_run_config
from streamdq.engine.handler import BatchHandler
from streamdq.engine.judge import BatchJudge
from streamdq.engine.row_level import RowLevelQuarantine

SCHEMA = "ts timestamp, name string, x double, _streamdq_error string"
T = datetime(2026, 1, 1, 12, 0, 5)
ROWS = [
    (T, "a", 1.0, None),
    (T, None, 2.0, None),  # fails is_complete(name)
    (T, "c", -3.0, None),  # fails is_non_negative(x)
    (T, None, -4.0, None),  # fails both
    (T, "e", None, "bad json"),  # a decode error: quarantined as bad, not judged
]


def _check(row_level="quarantine"):
    return (
        Check(Level.ERROR, "orders", row_level=row_level)
        .is_complete("name")
        .is_non_negative("x")
        .has_size("> 100")  # dataset-level: fails, stamps no row
        .has_mean("x", "> 100")
    )


def _handler(store, checks, **kw):
    return BatchHandler(
        dataset="orders",
        query_id="q1",
        judge=BatchJudge(checks),
        window_seconds=60,
        event_time="ts",
        store=store,
        **kw,
    )


def _metric(report, name, instance="*"):
    return next(
        m.metric.value for m in report.metrics if m.metric.name == name and m.metric.instance == instance
    )


@pytest.mark.parametrize("path_rows", [250_000, 0])  # the Arrow path and the fused path
def test_failing_rows_go_to_quarantine_with_their_constraints(spark, path_rows):
    store = InMemoryStateStore()
    report = _handler(store, [_check()], small_batch_rows=path_rows).handle(
        spark.createDataFrame(ROWS, SCHEMA), 0
    )
    rows = store.table("quarantine").to_pylist()
    reasons = sorted(r["reason"] for r in rows)
    assert reasons == [
        "bad json",
        "row-level: is_complete(column='name')",
        "row-level: is_complete(column='name') | is_non_negative(column='x')",
        "row-level: is_non_negative(column='x')",
    ]
    assert all(r["raw"] and r["batch_id"] == 0 for r in rows)
    assert report.counters["row_level_failed_rows"] == 3
    assert report.counters["row_level_quarantined_rows"] == 3
    assert report.counters["row_level_over_cap_rows"] == 0
    assert _metric(report, "RowLevelFailures", "is_complete(column='name')") == 2.0
    assert _metric(report, "RowLevelFailures", "is_non_negative(column='x')") == 2.0
    assert _metric(report, "RowLevelFailedRows") == 3.0
    # the dataset-level constraints failed, yet no row was stamped with them
    failed = [r.constraint for c in report.check_results for r in c.constraint_results if r.failed]
    assert any("has_size" in f for f in failed) and any("has_mean" in f for f in failed)
    assert not any("has_size" in r["reason"] or "has_mean" in r["reason"] for r in rows)


def test_the_cap_bounds_the_quarantine_and_counts_the_rest(spark):
    store = InMemoryStateStore()
    many = [(T, None, float(i), None) for i in range(25)]
    report = _handler(store, [_check()], row_level_max_rows=10).handle(spark.createDataFrame(many, SCHEMA), 0)
    assert store.table("quarantine").num_rows == 10
    assert report.counters["row_level_failed_rows"] == 25
    assert report.counters["row_level_over_cap_rows"] == 15
    assert _metric(report, "RowLevelRowsOverCap") == 15.0


def test_row_level_uniqueness_is_judged_within_each_microbatch(spark):
    """A key repeated across microbatches passes at row level; the merged Uniqueness metric at
    total scope counts it (docs/checks.md, Row-level outcomes)."""
    store = InMemoryStateStore()
    handler = _handler(store, [Check(Level.ERROR, "orders", row_level="quarantine").is_unique("name")])
    for batch_id, names in enumerate((["a", "b"], ["a", "c"], ["d", "d"])):
        report = handler.handle(spark.createDataFrame([(T, n, 1.0, None) for n in names], SCHEMA), batch_id)
    rows = store.table("quarantine").to_pylist()
    assert [(r["batch_id"], r["reason"]) for r in rows] == [(2, "row-level: is_unique(column='name')")] * 2
    total = [m.metric.value for m in report.metrics if m.scope == "total" and m.metric.name == "Uniqueness"]
    assert total == [2 / 6]  # only b and c occur once over the three batches


def test_checks_without_row_level_quarantine_nothing(spark):
    store = InMemoryStateStore()
    report = _handler(store, [_check(row_level=None)]).handle(spark.createDataFrame(ROWS, SCHEMA), 0)
    assert [r["reason"] for r in store.table("quarantine").to_pylist()] == ["bad json"]
    assert "row_level_failed_rows" not in report.counters
    assert not any(m.metric.name.startswith("RowLevel") for m in report.metrics)


def test_config_key_and_checks_file():
    suite = loads_suite(
        """
checks:
  - description: orders
    row_level: quarantine
    constraints:
      - is_complete: name
"""
    )
    assert suite.checks[0].row_level == "quarantine"
    cfg = load_run_config(
        {
            "dataset": "d",
            "source": {"type": "generator"},
            "checkpoint": "/tmp/cp",
            "row_level_quarantine_max_rows": 5,
        }
    )
    assert cfg.row_level_quarantine_max_rows == 5
    with pytest.raises(Exception, match="row_level_quarantine_max_rows"):
        load_run_config(
            {
                "dataset": "d",
                "source": {"type": "generator"},
                "checkpoint": "/tmp/cp",
                "row_level_quarantine_max_rows": -1,
            }
        )
    with pytest.raises(Exception, match="row_level"):
        loads_suite(
            "checks:\n  - description: x\n    row_level: everything\n    constraints:\n      - is_complete: a\n"
        )
    with pytest.raises(ValueError):
        RowLevelQuarantine([], max_rows=-1)
