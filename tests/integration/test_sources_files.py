"""File sources (json / csv / parquet directories, CLF access logs) as streaming queries over a temp
dir: typed good rows, bad lines with reason + raw text + file name, new files picked up per trigger."""

from __future__ import annotations

import datetime as dt

from streamdq.connectors.sources import ERROR_COL, RAW_COL, UNKNOWN_FIELDS_COL, read_source
from streamdq.connectors.sources.files import FILE_COL

SCHEMA = "order_id STRING, ts TIMESTAMP, amount DOUBLE"


def _drain(spark, spec, checkpoint, between=None):
    """Run the query until all available input is processed (twice if ``between`` adds files)."""
    batches: list[list] = []
    q = (
        read_source(spark, spec)
        .writeStream.foreachBatch(lambda df, _b: batches.append(df.collect()))
        .option("checkpointLocation", str(checkpoint))
        .start()
    )
    try:
        q.processAllAvailable()
        if between is not None:
            between()
            q.processAllAvailable()
    finally:
        q.stop()
    return batches


def test_json_lines_directory(spark, tmp_path):
    src = tmp_path / "in"
    src.mkdir()
    (src / "a.json").write_text(
        '{"order_id":"o1","ts":"2026-01-01T00:00:00Z","amount":1.5}\n'
        '{"order_id":"o2","ts":"2026-01-01T00:00:01Z","amount":"abc"}\n'
        "{broken\n"
        '{"ts":"2026-01-01T00:00:02Z","amount":2,"coupon":"X"}\n'
    )

    def add_file():
        (src / "b.json").write_text('{"order_id":"o5","ts":"2026-01-01T00:01:00Z","amount":5}\n')

    spec = {"type": "files", "path": str(src), "format": "json", "schema": SCHEMA, "required": ["order_id"]}
    spec["max_files_per_trigger"] = 1
    batches = _drain(spark, spec, tmp_path / "chk", between=add_file)
    assert [len(b) for b in batches if b] == [4, 1]  # one file per trigger, the new file picked up
    rows = {r[RAW_COL]: r for b in batches for r in b}
    good = rows['{"order_id":"o1","ts":"2026-01-01T00:00:00Z","amount":1.5}']
    assert good["amount"] == 1.5 and good["ts"] == dt.datetime(2026, 1, 1) and good[ERROR_COL] is None
    assert good[FILE_COL].endswith("/a.json")
    assert rows['{"order_id":"o2","ts":"2026-01-01T00:00:01Z","amount":"abc"}'][ERROR_COL] == (
        "field amount: expected DOUBLE got 'abc'"
    )
    assert rows["{broken"][ERROR_COL] == "undecodable JSON"
    drift = rows['{"ts":"2026-01-01T00:00:02Z","amount":2,"coupon":"X"}']
    assert drift[ERROR_COL] == "missing required field order_id" and drift[UNKNOWN_FIELDS_COL] == ["coupon"]
    assert rows['{"order_id":"o5","ts":"2026-01-01T00:01:00Z","amount":5}'][FILE_COL].endswith("/b.json")


def test_csv_with_header_parquet_and_clf(spark, tmp_path):
    csv_dir, pq_dir, log_dir = tmp_path / "csv", tmp_path / "pq", tmp_path / "logs"
    for d in (csv_dir, log_dir):
        d.mkdir()
    (csv_dir / "x.csv").write_text(
        "order_id,ts,amount\no1,2026-01-01 00:00:00,3.5\no2,2026-01-01 00:00:00,oops\n"
    )
    spark.createDataFrame(
        [("p1", dt.datetime(2026, 1, 1), 1.0), (None, dt.datetime(2026, 1, 1), 2.0)], SCHEMA
    ).write.parquet(str(pq_dir))
    (log_dir / "access.log").write_text(
        '1.2.3.4 - - [22/Nov/2026:10:00:00 +0000] "GET / HTTP/1.1" 200 512 "-" "curl/8.0"\ngarbage line\n'
    )

    csv_rows = [
        r
        for b in _drain(
            spark,
            {"type": "files", "path": str(csv_dir), "format": "csv", "schema": SCHEMA, "header": True},
            tmp_path / "c1",
        )
        for r in b
    ]
    assert sorted((r["order_id"], r["amount"], r[ERROR_COL]) for r in csv_rows) == [
        ("o1", 3.5, None),
        ("o2", None, "field amount: expected DOUBLE got 'oops'"),
    ]

    pq_rows = [
        r
        for b in _drain(
            spark,
            {
                "type": "files",
                "path": str(pq_dir),
                "format": "parquet",
                "schema": SCHEMA,
                "required": ["order_id"],
            },
            tmp_path / "c2",
        )
        for r in b
    ]
    by_amount = {r["amount"]: r for r in pq_rows}
    assert by_amount[1.0][ERROR_COL] is None and by_amount[1.0]["order_id"] == "p1"
    assert by_amount[2.0][ERROR_COL] == "missing required field order_id"
    assert '"amount":2.0' in by_amount[2.0][RAW_COL]

    log_rows = [r for b in _drain(spark, {"type": "clf", "path": str(log_dir)}, tmp_path / "c3") for r in b]
    by_raw = {r[RAW_COL]: r for r in log_rows}
    assert by_raw["garbage line"][ERROR_COL] == "unparseable log line"
    ok = next(r for r in log_rows if r[ERROR_COL] is None)
    assert ok["status"] == 200 and ok["user_agent"] == "curl/8.0" and ok["referrer"] is None
    assert ok[FILE_COL].endswith("/access.log")
