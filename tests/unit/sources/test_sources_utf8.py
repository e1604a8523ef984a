"""Invalid UTF-8 is counted and, by the ``invalid_utf8`` policy, quarantined (``"invalid UTF-8"``,
the default) or kept and flagged; a payload of only whitespace is an ``"empty payload"``."""

from __future__ import annotations

from typing import Any

import pytest
from streamdq.connectors.sources import validate_source_spec
from streamdq.connectors.sources.decode import (
    ERROR_COL,
    INVALID_UTF8_COL,
    RAW_COL,
    decode_csv,
    decode_json,
    decode_raw,
)
from streamdq.state import InMemoryStateStore

from streamdq.checks.check import Check, Level
from streamdq.engine.handler import BatchHandler
from streamdq.engine.judge import BatchJudge
from streamdq.errors import ConfigError

SCHEMA = "order_id STRING, amount DOUBLE"
GOOD = b'{"order_id":"a","amount":1.0}'
BROKEN_VALUE = b'{"order_id":"\xc3\x28","amount":2.0}'  # invalid inside a string value
BROKEN_START = b'\xff\xfe{"order_id":"b"}'


def _binary(spark: Any, payloads: list[bytes | None]) -> Any:
    return spark.createDataFrame([(None if p is None else bytearray(p),) for p in payloads], "value BINARY")


def test_invalid_utf8_is_quarantined_by_default(spark):
    out = decode_json(_binary(spark, [GOOD, BROKEN_VALUE, BROKEN_START, None]), SCHEMA).toPandas()
    assert list(out[ERROR_COL]) == [None, "invalid UTF-8", "invalid UTF-8; undecodable JSON", "empty payload"]
    assert list(out[INVALID_UTF8_COL]) == [False, True, True, False]
    assert out[RAW_COL][1] == '{"order_id":"\ufffd(","amount":2.0}'  # the raw stays Arrow-safe


def test_invalid_utf8_flag_policy_keeps_and_counts(spark):
    out = decode_json(_binary(spark, [GOOD, BROKEN_VALUE]), SCHEMA, invalid_utf8="flag").collect()
    assert [r[ERROR_COL] for r in out] == [None, None]
    assert [r[INVALID_UTF8_COL] for r in out] == [False, True]
    assert out[1]["order_id"] == "\ufffd(" and out[1]["amount"] == 2.0


def test_csv_and_raw_decoders_apply_the_policy(spark):
    df = _binary(spark, [b"a,1", b"\xc3\x28,2"])
    csv = decode_csv(df, SCHEMA).collect()
    assert [r[ERROR_COL] for r in csv] == [None, "invalid UTF-8"]
    raw = decode_raw(df, invalid_utf8="flag").collect()
    assert [r[ERROR_COL] for r in raw] == [None, None]
    assert [r[INVALID_UTF8_COL] for r in raw] == [False, True]
    with pytest.raises(ConfigError, match="invalid_utf8"):
        decode_json(df, SCHEMA, invalid_utf8="drop")


@pytest.mark.parametrize("payload", [" ", "\n", " \t\r\n ", "\r\n"])
def test_whitespace_payload_is_an_empty_payload(spark, payload):
    df = spark.createDataFrame([(payload,)], "value STRING")
    assert decode_json(df, SCHEMA).collect()[0][ERROR_COL] == "empty payload"
    assert decode_csv(df, SCHEMA).collect()[0][ERROR_COL] == "empty payload"


def test_source_spec_validates_the_policy(tmp_path):
    spec = {"type": "files", "path": str(tmp_path), "format": "json", "schema": SCHEMA}
    validate_source_spec({**spec, "invalid_utf8": "flag"})
    with pytest.raises(ConfigError, match=r"source.invalid_utf8: unknown policy 'drop'"):
        validate_source_spec({**spec, "invalid_utf8": "drop"})


@pytest.mark.parametrize("small_batch_rows", [250_000, 0], ids=["arrow", "fused"])
def test_handler_counts_and_quarantines_invalid_utf8(spark, small_batch_rows):
    store = InMemoryStateStore()
    handler = BatchHandler(
        dataset="d",
        query_id="q",
        judge=BatchJudge([Check(Level.ERROR, "c").has_size(">= 0")]),
        window_seconds=60,
        store=store,
        small_batch_rows=small_batch_rows,
        rows_cap=1000,
    )
    report = handler.handle(decode_json(_binary(spark, [GOOD, BROKEN_VALUE, BROKEN_START]), SCHEMA), 0)
    assert report.counters["invalid_utf8_rows"] == 2
    metrics = {m.metric.name: m.metric.value for m in report.metrics if m.scope == "batch"}
    assert metrics["InvalidUtf8Rows"] == 2.0 and metrics["Size"] == 1.0
    reasons = sorted(r["reason"] for r in store.table("quarantine").to_pylist())
    assert reasons == ["invalid UTF-8", "invalid UTF-8; undecodable JSON"]
    flagged = BatchHandler(
        dataset="d",
        query_id="q2",
        judge=BatchJudge([Check(Level.ERROR, "c").has_size(">= 0")]),
        window_seconds=60,
        small_batch_rows=small_batch_rows,
        rows_cap=1000,
    )
    frame = decode_json(_binary(spark, [GOOD, BROKEN_VALUE]), SCHEMA, invalid_utf8="flag")
    kept = flagged.handle(frame, 0)
    assert kept.counters["invalid_utf8_rows"] == 1 and kept.counters["bad_rows"] == 0
