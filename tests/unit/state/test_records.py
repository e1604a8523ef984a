"""Records, Arrow conversion and SQL literals of the state store (no Delta I/O)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pyarrow as pa
import pytest
from streamdq.state import StateRecord, metric_records, result_records, state_records
from streamdq.state import schemas as S
from streamdq.state import tables as T
from streamdq.state.records import dedupe_keys, join_value, split_value
from streamdq.state.sql import lit

from streamdq.analyzers import Mean, Size
from streamdq.analyzers.basic_states import NumMatches
from streamdq.analyzers.metric import Metric
from streamdq.report import ScopedMetric
from tests.unit.state.state_testkit import T0, report, size_metric, window


def test_state_record_validates_scope_and_window() -> None:
    with pytest.raises(ValueError, match="unknown scope"):
        StateRecord("weekly", None, None, "k", "{}", NumMatches(1))
    with pytest.raises(ValueError, match="window_start"):
        StateRecord("window", None, None, "k", "{}", NumMatches(1))
    with pytest.raises(ValueError, match="window_start"):
        StateRecord("total", T0, window(0).end, "k", "{}", NumMatches(1))
    with pytest.raises(ValueError, match="timezone"):
        StateRecord(
            "window", T0.replace(tzinfo=None), window(0).end.replace(tzinfo=None), "k", "{}", NumMatches(1)
        )


def test_state_records_store_a_shared_state_once_and_rebuild_the_analyzer() -> None:
    recs = state_records({Size(): NumMatches(3), Mean("x"): NumMatches(0)}, "window", window(0))
    assert len(recs) == 2
    assert recs[0].analyzer() == Size()
    assert recs[0].window_start == window(0).start
    with pytest.raises(ValueError, match="two state records"):
        dedupe_keys([recs[0], recs[0]])


def test_metric_values_split_into_double_and_json() -> None:
    assert split_value(0.5) == (0.5, None)
    assert split_value(3) == (3.0, None)
    assert split_value(None) == (None, None)
    value, text = split_value({"0.5": 1.0})
    assert value is None and text is not None and join_value(value, text) == {"0.5": 1.0}


def test_tables_follow_the_schemas_and_date_partitions() -> None:
    late_window = window(60 * 24)  # the next day
    rep = report(
        "orders",
        "q1",
        4,
        metrics=(
            ScopedMetric("batch", size_metric(4.0)),
            ScopedMetric(
                "window",
                Metric("Column", "Histogram", "c", value={"number_of_bins": 0, "values": {}}),
                window=late_window,
            ),
        ),
    )
    m = T.metric_table(metric_records(rep), rep)
    assert m.schema == S.SCHEMAS[S.METRICS]
    assert m.column("date").to_pylist() == [T0.date(), late_window.start.date()]
    assert m.column("time").to_pylist()[1] == late_window.start
    assert json.loads(m.column("value_json")[1].as_py()) == {"number_of_bins": 0, "values": {}}
    r = T.result_table(result_records(rep), rep)
    assert r.schema == S.SCHEMAS[S.RESULTS]
    assert r.column("metric_value").to_pylist() == [4.0]
    assert r.column("bound").to_pylist() == ['">= 1"']
    st = T.state_table(
        [StateRecord.of(Size(), NumMatches(2), "total")],
        dataset="d",
        batch_id=1,
        query_id="q",
        committed_at=T0,
    )
    assert st.schema == S.SCHEMAS[S.STATES]
    assert st.column("state_type").to_pylist() == ["NumMatches"]
    assert T.report_table(rep, T0).column("status").to_pylist() == ["Success"]


def test_quarantine_normalization() -> None:
    now = datetime(2026, 2, 3, tzinfo=UTC)
    q = T.quarantine_table(
        pa.table({"reason": ["bad"], "raw": [b"\xff{"], "line": [7]}),
        dataset="d",
        batch_id=2,
        query_id="q",
        ingested_at=now,
    )
    assert q.schema == S.SCHEMAS[S.QUARANTINE]
    row = q.to_pylist()[0]
    assert (
        row["raw"] == "\ufffd{"
        and row["line"] == 7
        and row["ingested_at"] == now
        and row["date"] == now.date()
    )
    with pytest.raises(ValueError, match="required"):
        T.quarantine_table(
            pa.table({"reason": ["bad"]}), dataset="d", batch_id=2, query_id="q", ingested_at=now
        )
    with pytest.raises(ValueError, match="'line'"):
        T.quarantine_table(
            pa.table({"reason": ["x"], "raw": ["y"], "line": ["seven"]}),
            dataset="d",
            batch_id=2,
            query_id="q",
            ingested_at=now,
        )


def test_sql_literals() -> None:
    assert lit("o'rders") == "'o''rders'"
    assert lit(T0) == "CAST('2026-01-01T00:00:00.000000Z' AS TIMESTAMP)"
    assert lit(T0.date()) == "CAST('2026-01-01' AS DATE)"
    assert lit(None) == "NULL" and lit(True) == "true" and lit(3) == "3"
    with pytest.raises(ValueError):
        lit(T0.replace(tzinfo=None))


def test_records_for_batch_marks_closed_windows_final() -> None:
    from streamdq.state import records_for_batch

    size, mean = Size(), Mean("x")
    w0, w1 = window(0), window(1)
    rep = report("orders", "q1", 1, metrics=(ScopedMetric("batch", size_metric(2.0)),))
    out = records_for_batch(
        rep,
        total={size.state_key(): NumMatches(5), "unknown-key": NumMatches(1)},
        open_windows={w0: {size.state_key(): NumMatches(2)}, w1: {size.state_key(): NumMatches(3)}},
        closed_windows=[(w0, {size.state_key(): NumMatches(2), mean.state_key(): NumMatches(0)})],
        analyzers=[size, mean],
    )
    got = {(r.scope, r.window_start, r.state_key, r.final) for r in out.states}
    assert got == {
        ("total", None, size.state_key(), False),
        ("total", None, "unknown-key", False),
        ("window", w1.start, size.state_key(), False),
        ("window", w0.start, size.state_key(), True),
        ("window", w0.start, mean.state_key(), True),
    }
    specs = {r.state_key: r.analyzer_spec for r in out.states}
    assert specs[size.state_key()] == size.key() and specs["unknown-key"] == ""
    assert len(out.metrics) == 1 and len(out.results) == 1


def test_quarantine_accepts_the_runner_columns_when_consistent() -> None:
    now = datetime(2026, 2, 3, tzinfo=UTC)
    runner = pa.table(
        {
            "dataset": ["d"],
            "batch_id": pa.array([2], pa.int64()),
            "reason": ["late"],
            "raw": ['{"a":1}'],
            "source": ['{"topic":"t","partition":0,"offset":5}'],
        }
    )
    q = T.quarantine_table(runner, dataset="d", batch_id=2, query_id="q", ingested_at=now)
    assert q.to_pylist()[0]["source"] == '{"topic":"t","partition":0,"offset":5}'
    with pytest.raises(ValueError, match="'batch_id'"):
        T.quarantine_table(runner, dataset="d", batch_id=3, query_id="q", ingested_at=now)
