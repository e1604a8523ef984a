"""Generated records written as JSON Lines and Combined Log Format files that the sources read back."""

from __future__ import annotations

import datetime as dt
import json

from streamdq.connectors.sources.clf import parse_clf
from streamdq.connectors.sources.decode import ERROR_COL
from streamdq.connectors.sources.generator import GeneratorConfig, Incident, generate
from streamdq.connectors.sources.generator_files import to_clf_line, write_clf_files, write_json_files

CFG = GeneratorConfig(seed=3, rows_per_second=100, start_ms=1_800_000_000_000)


def test_json_files_hold_the_records_in_order(tmp_path):
    paths = write_json_files(CFG, tmp_path, 0, 250, records_per_file=100)
    assert [p.name for p in paths] == [
        "part-000000000000.json",
        "part-000000000100.json",
        "part-000000000200.json",
    ]
    lines = [json.loads(x) for p in paths for x in p.read_text().splitlines()]
    assert lines == [rec for _, rec in generate(CFG, 0, 250)]
    assert not list(tmp_path.glob(".*"))  # no temporary files left behind
    assert write_json_files(CFG, tmp_path, 250, 250) == []


def test_dropped_records_make_fewer_lines(tmp_path):
    cfg = GeneratorConfig(
        seed=3,
        rows_per_second=100,
        start_ms=CFG.start_ms,
        incidents=(Incident(kind="volume_drop", start=0, duration=10, factor=0.0),),
    )
    assert write_json_files(cfg, tmp_path, 0, 100) == []


def test_clf_lines_parse_back(spark, tmp_path):
    recs = [rec for _, rec in generate(CFG, 0, 50)]
    paths = write_clf_files(CFG, tmp_path, 0, 50)
    lines = [x for p in paths for x in p.read_text().splitlines()]
    assert lines == [to_clf_line(r) for r in recs]
    parsed = parse_clf(spark.createDataFrame([(x,) for x in lines], "value STRING")).collect()
    assert all(r[ERROR_COL] is None for r in parsed)
    for rec, row in zip(recs, parsed, strict=True):
        assert row["status"] == rec["status_code"]
        assert row["path"] == f"/api/orders/{rec['order_id']}" and row["method"] == "POST"
        ts = dt.datetime.fromisoformat(rec["ts"].replace("Z", "+00:00")).replace(microsecond=0, tzinfo=None)
        assert row["timestamp"] == ts
        assert row["user"] == rec["user_id"] and row["user_agent"] is not None
