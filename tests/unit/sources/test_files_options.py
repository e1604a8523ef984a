"""Files-source options: ``order`` / ``null_value`` / ``sep`` / ``header`` validation, the name-ordered
listing source's offsets (no Spark), and CSV header binding by name in ``decode_csv``."""

from __future__ import annotations

import os

import pytest
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxFiles
from streamdq.connectors.sources import (
    ERROR_COL,
    MISSING_FIELDS_COL,
    UNKNOWN_FIELDS_COL,
    validate_source_spec,
)
from streamdq.connectors.sources.decode import decode_csv
from streamdq.connectors.sources.files_ordered import OrderedFilesStreamReader, list_files

from streamdq.errors import ConfigError


def _spec(tmp_path, **kw):
    return {"type": "files", "path": str(tmp_path), "format": "csv", "schema": "a INT", **kw}


def test_file_options_are_validated_naming_the_key(tmp_path):
    validate_source_spec(_spec(tmp_path, order="name", null_value="NA", sep=";", header=True))
    validate_source_spec(_spec(tmp_path, order="mtime"))
    cases = [
        (_spec(tmp_path, order="size"), "source.order", "unknown value 'size'"),
        ({**_spec(tmp_path, order="name"), "format": "parquet"}, "source.order", "json, csv and text"),
        ({**_spec(tmp_path, order="name"), "path": "s3a://b/in/"}, "source.order", "local directory"),
        (
            _spec(tmp_path, order="name", options={"pathGlobFilter": "*.csv"}),
            "source.options",
            "do not apply",
        ),
        (_spec(tmp_path, null_value=0), "source.null_value", "must be a string"),
        (_spec(tmp_path, sep=""), "source.sep", "is empty"),
        (_spec(tmp_path, header="yes"), "source.header", "true or false"),
    ]
    for spec, key, problem in cases:
        with pytest.raises(ConfigError) as err:
            validate_source_spec(spec)
        assert err.value.key == key and problem in err.value.problem


def test_listing_is_in_name_order_whatever_the_mtimes(tmp_path):
    for name, mtime in [("2013-01-03.csv", 100), ("2013-01-01.csv", 300), ("2013-01-02.csv", 200)]:
        (tmp_path / name).write_text("x\n")
        os.utime(tmp_path / name, (mtime, mtime))
    (tmp_path / "day=2013-01-04").mkdir()
    (tmp_path / "day=2013-01-04" / "part-0.csv").write_text("x\n")
    (tmp_path / "_SUCCESS").write_text("")
    (tmp_path / ".hidden.csv").write_text("")
    assert list_files(tmp_path) == [
        "2013-01-01.csv",
        "2013-01-02.csv",
        "2013-01-03.csv",
        "day=2013-01-04/part-0.csv",
    ]


def test_offsets_take_files_in_name_order_and_replay_the_same_files(tmp_path):
    for day in ("03", "01", "04", "02"):
        (tmp_path / f"2013-01-{day}.json").write_text("{}\n")
    reader = OrderedFilesStreamReader({"path": str(tmp_path), "max_files_per_trigger": "2"})
    assert reader.getDefaultReadLimit() == ReadMaxFiles(2)
    start = reader.initialOffset()
    first = reader.latestOffset(start, reader.getDefaultReadLimit())
    assert first == {"upto": "2013-01-02.json", "files": ["2013-01-01.json", "2013-01-02.json"]}
    (tmp_path / "2013-01-00.json").write_text("{}\n")  # sorts before what was read: not read
    second = reader.latestOffset(first, reader.getDefaultReadLimit())
    assert second["files"] == ["2013-01-03.json", "2013-01-04.json"]
    assert reader.latestOffset(second, ReadAllAvailable()) == second  # nothing new
    parts = reader.partitions(first, second)
    assert [os.path.basename(p.path) for p in parts] == ["2013-01-03.json", "2013-01-04.json"]
    ((uri, text),) = list(reader.read(parts[0]))
    assert uri == "file:" + str(tmp_path / "2013-01-03.json") and text == "{}\n"


def test_available_now_stops_at_the_files_listed_at_start(tmp_path):
    (tmp_path / "a.json").write_text("{}\n")
    reader = OrderedFilesStreamReader({"path": str(tmp_path)})
    reader.prepareForTriggerAvailableNow()
    (tmp_path / "b.json").write_text("{}\n")
    end = reader.latestOffset(reader.initialOffset(), ReadAllAvailable())
    assert end["files"] == ["a.json"]


SCHEMA = "species STRING, bill_length_mm DOUBLE, year INT"


def _decode(spark, lines, header, null_value=None):
    df = spark.createDataFrame(
        [(line, header, n == 0, "file:/in/x.csv") for n, line in enumerate(lines)],
        "value STRING, h STRING, is_h BOOLEAN, f STRING",
    )
    out = decode_csv(
        df,
        SCHEMA,
        keep=[("f", "f")],
        null_value=null_value,
        header_col="h",
        is_header_col="is_h",
        source_col="f",
    )
    return out.collect()


def test_decode_csv_binds_tokens_by_the_header_names(spark):
    header = "year,species,bill_length_mm"
    rows = _decode(
        spark, [header, '2007,"Adelie, Torgersen",39.1', "2008,Gentoo,NA", "2009,Chinstrap"], header, "NA"
    )
    assert [(r["species"], r["bill_length_mm"], r["year"], r[ERROR_COL]) for r in rows] == [
        ("Adelie, Torgersen", 39.1, 2007, None),
        ("Gentoo", None, 2008, None),
        ("Chinstrap", None, 2009, None),
    ]
    assert rows[2][MISSING_FIELDS_COL] == ["bill_length_mm"]  # the short line's absent token
    bad = _decode(spark, [header, "2007,Adelie,x"], header)  # the header line binds: dropped
    assert bad[0][ERROR_COL] == "field bill_length_mm: expected DOUBLE got 'x'"


def test_decode_csv_quarantines_a_file_whose_header_does_not_bind(spark):
    for header, detail, missing, unknown in [
        ("species,year", "missing column(s) bill_length_mm", ["bill_length_mm"], []),
        ("species,bill_length_mm,year,sex", "unknown column(s) sex", [], ["sex"]),
        (
            "species,species,year",
            "missing column(s) bill_length_mm; a column named twice",
            ["bill_length_mm"],
            [],
        ),
    ]:
        rows = _decode(spark, [header, "Adelie,39.1,2007"], header)
        assert len(rows) == 2, header  # the header line is kept: the file is quarantined whole
        for r in rows:
            assert r[ERROR_COL] == f"file file:/in/x.csv: header does not match the schema ({detail})"
            assert r[MISSING_FIELDS_COL] == missing and r[UNKNOWN_FIELDS_COL] == unknown
            assert r["species"] is None and r["year"] is None
