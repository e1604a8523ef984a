"""JSON / CSV / raw payload decoding: typed good rows, one reason per bad kind, raw kept, drift facts."""

from __future__ import annotations

import datetime as dt

import pytest
from streamdq.connectors.sources.clf import parse_clf
from streamdq.connectors.sources.decode import (
    ERROR_COL,
    MISSING_FIELDS_COL,
    RAW_COL,
    TYPE_ERRORS_COL,
    UNKNOWN_FIELDS_COL,
    decode_csv,
    decode_json,
    decode_raw,
    drift_aggregations,
    parse_schema,
)

from streamdq.errors import ConfigError

SCHEMA = "order_id STRING, ts TIMESTAMP, amount DOUBLE, country STRING"


def _rows(spark, payloads, **kw):
    df = spark.createDataFrame([(p,) for p in payloads], "value STRING")
    out = decode_json(df, SCHEMA, required=("order_id", "ts"), **kw)
    return {r[RAW_COL]: r for r in out.collect()}


def test_good_json_is_typed_and_has_no_error(spark):
    good = '{"order_id":"o1","ts":"2026-01-01T10:00:00Z","amount":12.5,"country":"DE"}'
    r = _rows(spark, [good])[good]
    assert r["order_id"] == "o1"
    assert r["ts"] == dt.datetime(2026, 1, 1, 10, 0, 0)
    assert r["amount"] == 12.5 and r["country"] == "DE"
    assert r[ERROR_COL] is None
    assert r[UNKNOWN_FIELDS_COL] == [] and r[MISSING_FIELDS_COL] == [] and r[TYPE_ERRORS_COL] == []


@pytest.mark.parametrize(
    "payload,reason",
    [
        ('{"order_id":"o1","ts":"2026-01-01T10:00:00Z",', "undecodable JSON"),
        ("[1,2,3]", "undecodable JSON"),
        ("not json at all", "undecodable JSON"),
        ("", "empty payload"),
        (
            '{"order_id":"o1","ts":"2026-01-01T10:00:00Z","amount":"abc"}',
            "field amount: expected DOUBLE got 'abc'",
        ),
        ('{"order_id":"o1","ts":"yesterday","amount":1}', "field ts: expected TIMESTAMP got 'yesterday'"),
        ('{"ts":"2026-01-01T10:00:00Z","amount":1}', "missing required field order_id"),
        ('{"order_id":null,"ts":"2026-01-01T10:00:00Z"}', "required field order_id is null"),
    ],
)
def test_each_bad_kind_has_its_reason_and_keeps_raw(spark, payload, reason):
    r = _rows(spark, [payload])[payload]
    assert r[ERROR_COL] == reason
    assert r[RAW_COL] == payload


def test_several_reasons_are_joined_and_other_fields_survive(spark):
    p = '{"amount":"x","country":"FR"}'
    r = _rows(spark, [p])[p]
    assert r[ERROR_COL] == (
        "missing required field order_id; missing required field ts; field amount: expected DOUBLE got 'x'"
    )
    assert r["country"] == "FR"  # partial result kept
    assert r[TYPE_ERRORS_COL] == ["amount"]


def test_null_payload_is_empty_payload(spark):
    df = spark.createDataFrame([(None,)], "value BINARY")
    r = decode_json(df, SCHEMA).collect()[0]
    assert r[ERROR_COL] == "empty payload" and r[RAW_COL] is None


def test_binary_payload_is_decoded_as_utf8(spark):
    df = spark.createDataFrame([(bytearray('{"order_id":"ü"}'.encode()),)], "value BINARY")
    r = decode_json(df, SCHEMA).collect()[0]
    assert r["order_id"] == "ü" and r[ERROR_COL] is None


def test_long_values_are_truncated_in_the_reason(spark):
    p = '{"order_id":"o","ts":"2026-01-01T00:00:00Z","amount":"' + "x" * 500 + '"}'
    r = _rows(spark, [p])[p]
    assert r[ERROR_COL].startswith("field amount: expected DOUBLE got 'xxx")
    assert r[ERROR_COL].endswith("...'") and len(r[ERROR_COL]) < 120


def test_schema_drift_facts(spark):
    new_field = '{"order_id":"a","ts":"2026-01-01T00:00:00Z","amount":1,"country":"DE","coupon":"X"}'
    missing = '{"order_id":"b","ts":"2026-01-01T00:00:00Z","amount":1}'
    type_change = '{"order_id":"c","ts":"2026-01-01T00:00:00Z","amount":"1.50","country":"DE"}'
    null_not_missing = '{"order_id":"d","ts":"2026-01-01T00:00:00Z","amount":null,"country":"DE"}'
    rows = _rows(spark, [new_field, missing, type_change, null_not_missing, "garbage"])
    assert rows[new_field][UNKNOWN_FIELDS_COL] == ["coupon"] and rows[new_field][ERROR_COL] is None
    assert rows[missing][MISSING_FIELDS_COL] == ["country"] and rows[missing][ERROR_COL] is None
    assert rows[type_change][TYPE_ERRORS_COL] == ["amount"]
    assert rows[null_not_missing][MISSING_FIELDS_COL] == [] and rows[null_not_missing][ERROR_COL] is None
    assert rows["garbage"][UNKNOWN_FIELDS_COL] is None


def test_drift_aggregations_count_facts(spark):
    payloads = [
        '{"order_id":"a","ts":"2026-01-01T00:00:00Z","amount":1,"country":"DE","coupon":"X"}',
        '{"order_id":"b","ts":"2026-01-01T00:00:00Z","amount":1}',
        '{"order_id":"c","ts":"2026-01-01T00:00:00Z","amount":"bad","country":"DE"}',
        "garbage",
    ]
    df = decode_json(
        spark.createDataFrame([(p,) for p in payloads], "value STRING"), SCHEMA, required=["order_id"]
    )
    agg = df.agg(*drift_aggregations("sdq_")).collect()[0].asDict()
    assert agg == {
        "sdq_records": 4,
        "sdq_bad_records": 2,
        "sdq_records_with_unknown_fields": 1,
        "sdq_records_with_missing_fields": 1,
        "sdq_records_with_type_errors": 1,
    }
    empty = df.limit(0).agg(*drift_aggregations()).collect()[0]
    assert empty["records"] == 0 and empty["bad_records"] == 0


def test_keep_passes_columns_through(spark):
    df = spark.createDataFrame([('{"order_id":"a"}', 7)], "value STRING, offset BIGINT")
    r = decode_json(df, SCHEMA, keep=[("offset", "_streamdq_offset")]).collect()[0]
    assert r["_streamdq_offset"] == 7


def test_kept_names_with_dots_and_back_quotes_are_names(spark):
    """A kept column is taken by its name in every format (access logs too): ``a.b`` is the
    column called so, not field ``b`` of a struct ``a``."""
    df = spark.createDataFrame(
        [('{"order_id":"a"}', 7, "t")], "value STRING, `offset.n` BIGINT, `to``pic` STRING"
    )
    keep = [("offset.n", "_streamdq_offset"), ("to`pic", "_streamdq_topic")]
    for decoded in (
        decode_json(df, SCHEMA, keep=keep, decoder="spark"),
        decode_csv(df, SCHEMA, keep=keep),
        decode_raw(df, keep=keep),
        parse_clf(df, keep=keep),
    ):
        r = decoded.collect()[0]
        assert (r["_streamdq_offset"], r["_streamdq_topic"]) == (7, "t")


def test_csv_good_and_bad(spark):
    lines = [
        "o1,2026-01-01 10:00:00,12.5,DE",
        "o2,2026-01-01 10:00:00,abc,DE",
        ",2026-01-01 10:00:00,1,DE",
        "o4,2026-01-01 10:00:00,1",
        "o5,2026-01-01 10:00:00,1,DE,extra",
        '"o,6",2026-01-01 10:00:00,2,',
    ]
    df = spark.createDataFrame([(x,) for x in lines], "value STRING")
    rows = {r[RAW_COL]: r for r in decode_csv(df, SCHEMA, required=["order_id", "ts"]).collect()}
    good = rows[lines[0]]
    assert good["order_id"] == "o1" and good["amount"] == 12.5 and good[ERROR_COL] is None
    assert good["ts"] == dt.datetime(2026, 1, 1, 10, 0, 0)
    assert rows[lines[1]][ERROR_COL] == "field amount: expected DOUBLE got 'abc'"
    assert rows[lines[1]][TYPE_ERRORS_COL] == ["amount"]
    assert rows[lines[2]][ERROR_COL] == "required field order_id is null"  # empty token = NULL
    assert rows[lines[3]][MISSING_FIELDS_COL] == ["country"] and rows[lines[3]][ERROR_COL] is None
    assert rows[lines[4]][UNKNOWN_FIELDS_COL] == ["_c4"] and rows[lines[4]]["country"] == "DE"
    quoted = rows[lines[5]]
    assert quoted["order_id"] == "o,6" and quoted["country"] is None and quoted[MISSING_FIELDS_COL] == []


def test_csv_header_line_is_dropped(spark):
    lines = ["order_id,ts,amount,country", "o1,2026-01-01 10:00:00,1.0,DE"]
    df = spark.createDataFrame([(x,) for x in lines], "value STRING")
    out = decode_csv(df, SCHEMA, header=True).collect()
    assert [r["order_id"] for r in out] == ["o1"]


def test_raw_format(spark):
    df = spark.createDataFrame([("hello",), (None,)], "value STRING")
    out = decode_raw(df).collect()
    assert out[0]["value"] == "hello" and out[0][ERROR_COL] is None
    assert out[1][ERROR_COL] == "empty payload"


def test_bad_schema_and_required_are_config_errors(spark):
    with pytest.raises(ConfigError, match=r"source.schema: not a valid Spark DDL schema"):
        parse_schema("order_id STRNG,, ts")
    df = spark.createDataFrame([("{}",)], "value STRING")
    with pytest.raises(ConfigError, match=r"source.required: required field 'nope' is not in the schema"):
        decode_json(df, SCHEMA, required=["nope"])


def test_csv_escaped_quote_inside_quoted_token(spark):
    line = '"o\\"7,x",2026-01-01 10:00:00,3,DE'
    df = spark.createDataFrame([(line,)], "value STRING")
    r = decode_csv(df, SCHEMA).collect()[0]
    assert r["order_id"] == 'o"7,x' and r["country"] == "DE"
    assert r[MISSING_FIELDS_COL] == [] and r[UNKNOWN_FIELDS_COL] == []


def test_invalid_utf8_payload_is_repaired_not_fatal(spark):
    df = spark.createDataFrame(
        [(bytearray(b'\xff\xfe{"order_id":"a"}'),), (bytearray(b'{"order_id":"\xc3\x28"}'),)], "value BINARY"
    )
    # policy "flag": kept and only flagged (the default, "quarantine", is in test_sources_utf8.py)
    out = decode_json(df, SCHEMA, invalid_utf8="flag").toPandas()  # Arrow fails on invalid UTF-8
    assert list(out[ERROR_COL]) == ["undecodable JSON", None]
    assert out["order_id"][1] == "\ufffd("
