"""Common / Combined Log Format parsing, including malformed lines."""

from __future__ import annotations

import datetime as dt

import pytest
from streamdq.connectors.sources import validate_source_spec
from streamdq.connectors.sources.clf import CLF_COLUMNS, parse_clf
from streamdq.connectors.sources.decode import ERROR_COL, INVALID_UTF8_COL, RAW_COL, TYPE_ERRORS_COL

from streamdq.errors import ConfigError

COMMON = '127.0.0.1 - frank [10/Oct/2000:13:55:36 -0700] "GET /apache_pb.gif HTTP/1.0" 200 2326'
COMBINED = (
    '10.0.0.2 - - [22/Nov/2026:22:40:01 +0000] "POST /api/orders?id=7 HTTP/1.1" 201 - '
    '"https://shop.example.com/cart" "Mozilla/5.0 (X11; Linux x86_64) \\"quoted\\""'
)
BAD_REQUEST = '192.168.1.9 - - [22/Nov/2026:22:40:02 +0000] "-" 408 -'
GARBAGE = "this is not an access log line"
BAD_TIME = '127.0.0.1 - - [32/Foo/2000:99:55:36 -0700] "GET / HTTP/1.0" 200 1'
TRUNCATED = '127.0.0.1 - frank [10/Oct/2000:13:55:36 -0700] "GET /apache_pb.gif HTTP/1.0" 2'


def _parse(spark, lines):
    df = spark.createDataFrame([(x,) for x in lines], "value STRING")
    out = parse_clf(df)
    assert out.columns[: len(CLF_COLUMNS)] == list(CLF_COLUMNS)
    return {r[RAW_COL]: r for r in out.collect()}


def test_common_line(spark):
    r = _parse(spark, [COMMON])[COMMON]
    assert r["host"] == "127.0.0.1" and r["ident"] is None and r["user"] == "frank"
    assert r["timestamp"] == dt.datetime(2000, 10, 10, 20, 55, 36)  # -0700 -> UTC
    assert (r["method"], r["path"], r["protocol"]) == ("GET", "/apache_pb.gif", "HTTP/1.0")
    assert r["status"] == 200 and r["bytes"] == 2326
    assert r["referrer"] is None and r["user_agent"] is None
    assert r[ERROR_COL] is None


def test_combined_line_with_dash_bytes_and_escaped_quotes(spark):
    r = _parse(spark, [COMBINED])[COMBINED]
    assert r["user"] is None and r["method"] == "POST" and r["path"] == "/api/orders?id=7"
    assert r["status"] == 201 and r["bytes"] == 0  # '-' -> 0
    assert r["referrer"] == "https://shop.example.com/cart"
    assert r["user_agent"] == 'Mozilla/5.0 (X11; Linux x86_64) \\"quoted\\"'
    assert r[ERROR_COL] is None


def test_request_line_that_is_not_method_path_protocol_is_kept(spark):
    r = _parse(spark, [BAD_REQUEST])[BAD_REQUEST]
    assert r[ERROR_COL] is None and r["status"] == 408
    assert r["method"] is None and r["path"] is None


def test_malformed_lines_are_flagged_with_raw_kept(spark):
    rows = _parse(spark, [GARBAGE, TRUNCATED, BAD_TIME, ""])
    assert rows[GARBAGE][ERROR_COL] == "unparseable log line"
    assert rows[GARBAGE]["host"] is None and rows[GARBAGE]["status"] is None
    assert rows[TRUNCATED][ERROR_COL] == "unparseable log line"
    assert rows[BAD_TIME][ERROR_COL] == "unparseable timestamp '32/Foo/2000:99:55:36 -0700'"
    assert rows[BAD_TIME][TYPE_ERRORS_COL] == ["timestamp"]
    assert rows[""][ERROR_COL] == "empty payload"


BROKEN = b'127.0.0.1 - fr\xc3\x28nk [10/Oct/2000:13:55:36 -0700] "GET /a.gif HTTP/1.0" 200 2326'


def test_invalid_utf8_is_quarantined_by_default_or_flagged(spark):
    df = spark.createDataFrame([(bytearray(COMMON.encode()),), (bytearray(BROKEN),)], "value BINARY")
    out = parse_clf(df).collect()
    assert [r[ERROR_COL] for r in out] == [None, "invalid UTF-8"]
    assert [r[INVALID_UTF8_COL] for r in out] == [False, True]
    assert out[1][RAW_COL] == BROKEN.decode("utf-8", errors="replace")  # Arrow-safe raw
    kept = parse_clf(df, invalid_utf8="flag").collect()
    assert [r[ERROR_COL] for r in kept] == [None, None]
    assert [r[INVALID_UTF8_COL] for r in kept] == [False, True]
    assert kept[1]["user"] == "fr\ufffd(nk" and kept[1]["status"] == 200
    with pytest.raises(ConfigError, match="invalid_utf8"):
        parse_clf(df, invalid_utf8="drop")


def test_clf_files_source_flags_invalid_utf8_lines(spark, tmp_path):
    """Through the clf source's text reader (``read_clf``), the broken bytes reach the flag."""
    from streamdq.connectors.sources.files import read_clf

    (tmp_path / "access.log").write_bytes(COMMON.encode() + b"\n" + BROKEN + b"\n")
    spec = {"type": "clf", "path": str(tmp_path), "invalid_utf8": "flag"}
    validate_source_spec(spec)
    stream = read_clf(spark, spec)
    name = f"clf_utf8_{abs(hash(str(tmp_path)))}"
    query = stream.writeStream.format("memory").queryName(name).trigger(availableNow=True).start()
    try:
        query.awaitTermination(120)
        out = spark.table(name).collect()
    finally:
        query.stop()
    assert sorted((r["user"], r[INVALID_UTF8_COL], r[ERROR_COL]) for r in out) == [
        ("frank", False, None),
        ("fr\ufffd(nk", True, None),
    ]
