"""Bad data made visible (issue 17, item 9): the batch report says which reasons, where the
first bad record came from, which fields were new or missing; the console prints it in two
lines; the quarantine table's ``line`` column holds the record's line in its file."""

from __future__ import annotations

import io
import json

import pyarrow as pa
import pytest
from streamdq.connectors.sinks.console import ConsoleSink, format_report
from streamdq.connectors.sources.decode import decode_json
from streamdq.state import DeltaStateStore

from streamdq.checks.check import Check, Level
from streamdq.display import reason_kind
from streamdq.engine.bad_data import summarize
from streamdq.engine.handler import BatchHandler
from streamdq.engine.judge import BatchJudge
from streamdq.report import BadDataSummary, BatchReport

SCHEMA = "id long, amount double, email string"
FILE = "file:/data/in/orders-7.json"
LINES = [
    '{"id": 1, "amount": 2.5, "email": "a@x"}',
    '{"id": 2, "amount": 1.0, "email": "b@x", "coupon": "C1"}',  # a new field
    '{"id": 3, "amount": "abc", "email": "c@x"}',  # type error: bad
    "{oops",  # undecodable: bad
    '{"amount": 4.0, "email": "d@x"}',  # missing required id: bad
    '{"id": 6, "amount": "xyz", "email": "e@x"}',  # type error: bad
    '{"id": 7, "amount": 3.0}',  # optional email missing: drift only
]


def _decoded(spark):
    rows = [(text, FILE, i + 1) for i, text in enumerate(LINES)]
    df = spark.createDataFrame(rows, "value string, _streamdq_file string, _streamdq_line long")
    keep = [("_streamdq_file", "_streamdq_file"), ("_streamdq_line", "_streamdq_line")]
    return decode_json(df, SCHEMA, required=["id"], keep=keep)


def _handler(store=None):
    return BatchHandler(
        dataset="orders",
        query_id="q1",
        judge=BatchJudge([Check(Level.ERROR, "orders").is_complete("id")]),
        window_seconds=60,
        store=store,
    )


def test_reason_kind_drops_the_offending_value() -> None:
    assert reason_kind("field amount: expected DOUBLE got 'abc'") == "field amount: expected DOUBLE"
    assert reason_kind("undecodable JSON") == "undecodable JSON"


def test_summary_of_quarantine_rows_and_its_json_round_trip() -> None:
    rows = pa.table(
        {
            "reason": ["a got 'x'", "b", "a got 'y'; b", "c", "d"],
            "file": [None, None, None, None, None],
            "topic": ["t", "t", "t", "t", "t"],
            "partition": [2, 2, 2, 2, 2],
            "offset": [40, 41, 42, 43, 44],
        }
    )
    summary = summarize(rows, {"unknown_fields": ("coupon",)})
    assert summary.reasons == (("a", 2), ("b", 2), ("c", 1))
    assert summary.other_rows == 1 and summary.sample == "t[2]@40"
    report = BatchReport("orders", "q1", 0, __import__("datetime").datetime.now(), bad_data=summary)
    assert BatchReport.from_json(report.to_json()).bad_data == summary
    assert BatchReport.from_dict({**report.to_dict(), "bad_data": None}).bad_data == BadDataSummary()


def test_report_console_and_quarantine_show_reason_place_and_fields(spark, tmp_path) -> None:
    store = DeltaStateStore(str(tmp_path))
    report = _handler(store).handle(_decoded(spark), 0)
    bad = report.bad_data
    assert dict(bad.reasons) == {
        "field amount: expected DOUBLE": 2,
        "undecodable JSON": 1,
        "missing required field id": 1,
    }
    assert bad.sample is not None and bad.sample.startswith("orders-7.json:")
    assert bad.unknown_fields == ("coupon",)
    assert bad.missing_fields == ("email", "id")
    # stored with the report
    assert store.report("q1", 0).bad_data == bad
    # the console: counters for every kind of drift, then the breakdown in two lines
    text = format_report(report, [])
    head, *rest = text.splitlines()
    assert "bad=4" in head and "unknown_field=1" in head and "missing_field=" in head
    assert rest[0].startswith("  bad: 2 field amount: expected DOUBLE, 1 ")
    assert "; first at orders-7.json:" in rest[0]
    assert rest[1] == "  drift: new field(s) coupon; missing field(s) email, id"
    out = io.StringIO()
    ConsoleSink(stream=out).emit(report, [])
    assert out.getvalue().rstrip("\n") == text
    # the quarantine table: each bad record's line in its file
    q = store.table("quarantine").to_pyarrow_table().sort_by("line").to_pylist()
    assert [(r["line"], r["file"]) for r in q] == [(3, FILE), (4, FILE), (5, FILE), (6, FILE)]
    assert json.loads(q[0]["source"])["line"] == 3


def test_a_clean_batch_runs_no_extra_job_and_prints_no_breakdown(spark) -> None:
    df = decode_json(spark.createDataFrame([(LINES[0],)], "value string"), SCHEMA, required=["id"])
    report = _handler().handle(df, 0)
    assert report.bad_data == BadDataSummary()
    assert len(format_report(report, []).splitlines()) == 1


@pytest.mark.parametrize("n", [7])
def test_many_new_fields_are_capped(spark, n: int) -> None:
    fields = ", ".join(f'"f{i}": {i}' for i in range(n))
    df = decode_json(spark.createDataFrame([(f'{{"id": 1, {fields}}}',)], "value string"), SCHEMA)
    report = _handler().handle(df, 0)
    assert report.bad_data.unknown_fields == ("f0", "f1", "f2", "f3", "f4", "...")


@pytest.mark.parametrize("small_batch_rows", [0, 1_000_000], ids=["fused", "arrow"])
def test_drift_names_come_from_the_compute_pass_on_both_paths(spark, small_batch_rows: int) -> None:
    # a JSON producer that leaves out NULL fields "drifts" in every batch: naming the fields
    # must not cost a Spark job of its own
    handler = BatchHandler(
        dataset="orders",
        query_id="q1",
        judge=BatchJudge([Check(Level.ERROR, "orders").is_complete("id")]),
        window_seconds=60,
        small_batch_rows=small_batch_rows,
    )
    handler.handle(_decoded(spark), 0)  # a local frame has no size: the next batch's estimate is this one
    report = handler.handle(_decoded(spark), 1)
    assert report.bad_data.unknown_fields == ("coupon",)
    assert report.bad_data.missing_fields == ("email", "id")
    if small_batch_rows:  # the one job of the small-batch path, nothing more
        assert report.counters["arrow_path"] == 1
        assert report.counters["spark_jobs"] == 1


def test_reasons_are_counted_per_distinct_text_as_row_by_row_and_ties_keep_first_appearance() -> None:
    """summarize counts each distinct reason text once, weighted by its rows: the same counts
    and the same order of ties as counting row by row."""
    import random
    from collections import Counter

    rng = random.Random(7)
    parts = [
        "late: event time behind the watermark",
        "undecodable JSON",
        "field a: expected INT got 'x'",
        "field a: expected INT got 'y'",
        "missing required field id",
        " got 'lead'",
        "",
        "b; c",
    ]
    for _ in range(30):
        texts = [
            None if rng.random() < 0.1 else "; ".join(rng.sample(parts, rng.randint(1, 3)))
            for _ in range(rng.randint(1, 40))
        ]
        by_row: Counter[str] = Counter()
        for text in texts:
            for part in dict.fromkeys((text or "unknown").split("; ")):
                by_row[reason_kind(part)] += 1
        table = pa.table({"reason": pa.chunked_array([texts[:3], texts[3:]], pa.string())})
        got = summarize(table)
        top = tuple(by_row.most_common(3))
        assert got.reasons == top
        assert got.other_rows == sum(by_row.values()) - sum(n for _, n in top)
