"""The JVM decoder (``decode_jvm``, one Jackson pass) equals the built-in decoder on any payload.

The built-in form (``decoder="spark"``) is held to its plainly-right reference in
test_sources_decode_reference.py (which also runs the JVM form on its edge cases); here
hypothesis writes hostile payloads by the hundred (known and unknown keys, repeats, every JSON
type in every field, NaN and Infinity tokens, single quotes, truncation, trailing text, long and
non-ASCII values, blanks) and every output column of every row must be equal.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from streamdq.connectors.sources.decode import RAW_COL, decode_json

from streamdq.errors import ConfigError
from tests.unit.sources.conftest import collect_rows, require_jvm_decoder

SCHEMA = (
    "id BIGINT, amount DOUBLE, name STRING, ok BOOLEAN, n INT, ts TIMESTAMP, d DATE, "
    "dec DECIMAL(8,2), tags ARRAY<STRING>, inner STRUCT<x: INT, y: STRING>, m MAP<STRING,INT>"
)
FIELDS = ["id", "amount", "name", "ok", "n", "ts", "d", "dec", "tags", "inner", "m"]
KEYS = [*FIELDS, "extra", "ID", "other", ""]

scalars = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70).map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.sampled_from(["NaN", "Infinity", "-Infinity", "true", "false", "null", "1e400", "-0", "01"]),
    st.text(max_size=70).map(json.dumps),
    st.sampled_from(
        ['"2026-01-01T10:00:00Z"', '"2026-02-30"', '"2026-02-03"', '"12.5"', '""', '"true"', "'x'"]
    ),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3).map(lambda xs: "[" + ", ".join(xs) + "]"),
        st.lists(st.tuples(st.sampled_from(["x", "y", "z"]), inner), max_size=3).map(
            lambda kv: "{" + ", ".join(f'"{k}": {v}' for k, v in kv) + "}"
        ),
    ),
    max_leaves=6,
)
objects = st.lists(st.tuples(st.sampled_from(KEYS), values), max_size=8).map(
    lambda kv: "{" + ", ".join(f"{json.dumps(k)}: {v}" for k, v in kv) + "}"
)


def spark_examples(n: int):  # type: ignore[no-untyped-def]
    """Hypothesis settings for ``n`` examples that each run Spark jobs (no deadline; the
    session fixture and large batches are expected)."""
    return settings(
        max_examples=n,
        deadline=None,
        suppress_health_check=[
            HealthCheck.function_scoped_fixture,
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
        ],
    )


@st.composite
def payloads(draw: st.DrawFn) -> str | None:
    kind = draw(st.integers(0, 9))
    if kind == 0:
        return draw(st.sampled_from([None, "", "   ", "\t\n", "[1, 2]", "42", "null", '"s"', "{"]))
    text = draw(objects)
    if kind == 1:  # truncated
        return text[: draw(st.integers(0, max(0, len(text) - 1)))]
    if kind == 2:  # trailing text
        return text + draw(st.sampled_from([" x", "{}", " ", "\n", ",", '{"id": 1}']))
    if kind == 3:  # single quotes
        return text.replace('"', "'")
    return text


@spark_examples(6)
@given(
    batch=st.lists(payloads(), min_size=1, max_size=120),
    required=st.sets(st.sampled_from(FIELDS), max_size=3),
)
def test_jvm_decoder_equals_builtin_decoder(spark, batch, required):
    require_jvm_decoder(spark)
    df = spark.createDataFrame(list(enumerate(batch)), "i INT, value STRING")
    keep = [("i", "_streamdq_i")]
    req = sorted(required)
    jvm = decode_json(df, SCHEMA, required=req, keep=keep, decoder="jvm").orderBy("_streamdq_i")
    builtin = decode_json(df, SCHEMA, required=req, keep=keep, decoder="spark").orderBy("_streamdq_i")
    assert jvm.schema == builtin.schema
    for got, want in zip(collect_rows(jvm), collect_rows(builtin), strict=True):
        assert got == want, (want[RAW_COL], got, want)


@st.composite
def byte_payloads(draw: st.DrawFn) -> bytes | None:
    """A payload's bytes: valid UTF-8 (ASCII or not), or with broken sequences spliced in at any
    offset (the decoder checks ASCII 8 bytes at a time, so the offsets straddle those words)."""
    text = draw(payloads())
    if text is None:
        return None
    raw = text.encode("utf-8")
    for _ in range(draw(st.integers(0, 2))):
        at = draw(st.integers(0, len(raw)))
        bad = draw(
            st.sampled_from(
                [b"\xff", b"\xc3", b"\xe2\x82", b"\xed\xa0\x80", b"\xc3\xa9", b"\xf0\x9f\x98\x80"]
            )
        )
        raw = raw[:at] + bad + raw[at:]
    return raw


@spark_examples(4)
@given(
    batch=st.lists(byte_payloads(), min_size=1, max_size=120),
    policy=st.sampled_from(["quarantine", "flag"]),
)
def test_jvm_decoder_equals_builtin_decoder_on_bytes(spark, batch, policy):
    """The same property over BINARY payloads (Kafka's form) and over the STRING column a text
    file gives for the same bytes (Spark keeps the broken bytes in the string)."""
    require_jvm_decoder(spark)
    rows = [(i, None if b is None else bytearray(b)) for i, b in enumerate(batch)]
    df = spark.createDataFrame(rows, "i INT, value BINARY")
    as_text = df.selectExpr("i", "cast(value as string) AS value")
    keep = [("i", "_streamdq_i")]
    for frame in (df, as_text):
        jvm = decode_json(frame, SCHEMA, keep=keep, invalid_utf8=policy, decoder="jvm")
        builtin = decode_json(frame, SCHEMA, keep=keep, invalid_utf8=policy, decoder="spark")
        assert jvm.schema == builtin.schema
        pairs = zip(
            collect_rows(jvm.orderBy("_streamdq_i")),
            collect_rows(builtin.orderBy("_streamdq_i")),
            strict=True,
        )
        for got, want in pairs:
            assert got == want, (want[RAW_COL], got, want)


def test_utf8_check_at_every_offset(spark):
    """A non-ASCII or broken sequence at each offset around the 8-byte words of the ASCII check."""
    require_jvm_decoder(spark)
    base = b'{"id": 1, "name": "abcdefghijklmnopqrstu"}'
    rows = []
    for at in range(len(base) + 1):
        for bad in (b"\xff", b"\xc3\xa9"):
            rows.append((len(rows), bytearray(base[:at] + bad + base[at:])))
    df = spark.createDataFrame(rows, "i INT, value BINARY")
    keep = [("i", "_streamdq_i")]
    jvm = collect_rows(
        decode_json(df, "id BIGINT, name STRING", keep=keep, decoder="jvm").orderBy("_streamdq_i")
    )
    builtin = decode_json(df, "id BIGINT, name STRING", keep=keep, decoder="spark").orderBy("_streamdq_i")
    assert jvm == collect_rows(builtin)
    assert [r["_streamdq_invalid_utf8"] for r in jvm[:4]] == [True, False, True, False]


def test_auto_takes_the_jvm_decoder_in_one_evaluation(spark):
    require_jvm_decoder(spark)
    df = spark.createDataFrame([('{"id": 1}',)], "value STRING")
    plan = decode_json(df, "id BIGINT, s STRING")._jdf.queryExecution().executedPlan().toString()
    assert plan.count("streamdq_decode_json(") == 1  # evaluated once, not once per output column
    assert "UDF" not in plan and "make_valid_utf8" not in plan  # the expression, UTF-8 folded in
    binary = spark.createDataFrame([(bytearray(b'{"id": 1}'),)], "value BINARY")
    plan = decode_json(binary, "id BIGINT")._jdf.queryExecution().executedPlan().toString()
    assert "streamdq_decode_json(value#" in plan and "cast(" not in plan  # the bytes as they are
    builtin = decode_json(df, "id BIGINT, s STRING", decoder="spark")._jdf.queryExecution()
    assert "streamdq_decode_json(" not in builtin.executedPlan().toString()


def test_binary_payloads_with_invalid_utf8_decode_alike(spark):
    require_jvm_decoder(spark)
    rows = [(bytearray(b'{"id": 1, "name": "caf\xc3\xa9"}'),), (bytearray(b'{"id": 2, "name": "\xff\xfe"}'),)]
    df = spark.createDataFrame(rows, "value BINARY")
    for policy in ("quarantine", "flag"):
        jvm = collect_rows(decode_json(df, "id BIGINT, name STRING", invalid_utf8=policy, decoder="jvm"))
        builtin = collect_rows(
            decode_json(df, "id BIGINT, name STRING", invalid_utf8=policy, decoder="spark")
        )
        assert jvm == builtin
        assert [r["id"] for r in jvm] == [1, 2]


def test_payloads_read_in_place_or_through_a_stream_decode_alike(spark):
    """The decoder parses a payload's bytes in place unless Jackson's encoding detection would not
    read them as plain UTF-8 (a byte order mark, a NUL among the first four bytes, a repaired
    first byte): then through a stream. Both ways equal the built-in decoder, a nested value in a
    STRING field included (rendered compactly, as from_json renders it, not copied as written)."""
    require_jvm_decoder(spark)
    payloads = [
        b'{"id": 1, "name": {"x" :  [1,  2]}}',
        b' {"id": 2, "name": ["p",  {"q": null}], "extra": 1}',
        b'\xef\xbb\xbf{"id": 3, "name": "after a byte order mark"}',
        b'\x00{"id": 4}',
        b'{\x00"id": 5}',
        b'\x00\x00\x00{"id": 6}',
        b'{"id": 7}\x00',
        b"\xef\xbb\xbf",
        b'\xef{"id": 8}',
        b"\x00",
        b'{"a',
    ]
    df = spark.createDataFrame([(i, bytearray(b)) for i, b in enumerate(payloads)], "i INT, value BINARY")
    keep = [("i", "_streamdq_i")]
    for frame in (df, df.selectExpr("i", "cast(value as string) AS value")):
        jvm = collect_rows(decode_json(frame, SCHEMA, keep=keep, decoder="jvm").orderBy("_streamdq_i"))
        builtin = decode_json(frame, SCHEMA, keep=keep, decoder="spark").orderBy("_streamdq_i")
        assert jvm == collect_rows(builtin)
        assert jvm[0]["name"] == '{"x":[1,2]}' and jvm[0]["_streamdq_error"] is None
        assert jvm[1]["name"] == '["p",{"q":null}]' and jvm[1]["_streamdq_unknown_fields"] == ["extra"]


def test_names_with_dots_and_back_quotes_decode_alike(spark):
    """The JVM form builds its frame from Column objects (JsonDecode.frame): schema fields and
    kept columns whose names hold dots, back quotes or spaces are taken as names, not syntax
    (the built-in form takes them as names too)."""
    require_jvm_decoder(spark)
    rows = [("k1", '{"a.b": 1, "c`d": "x", "e f": true, "a": {"b": 2}}'), ("k2", '{"a.b": "no"}')]
    df = spark.createDataFrame(rows, "`key.1` STRING, value STRING")
    schema = "`a.b` BIGINT, `c``d` STRING, `e f` BOOLEAN"
    keep = [("key.1", "_streamdq_key 1")]
    jvm = decode_json(df, schema, keep=keep, required=["e f"], decoder="jvm").orderBy("`_streamdq_key 1`")
    builtin = decode_json(df, schema, keep=keep, required=["e f"], decoder="spark").orderBy(
        "`_streamdq_key 1`"
    )
    assert jvm.columns == builtin.columns
    got = collect_rows(jvm)
    assert got == collect_rows(builtin)
    assert [(r["a.b"], r["c`d"], r["e f"], r["_streamdq_key 1"]) for r in got] == [
        (1, "x", True, "k1"),
        (None, None, None, "k2"),
    ]
    assert got[0]["_streamdq_unknown_fields"] == ["a"]
    assert got[1]["_streamdq_error"] == "field a.b: expected BIGINT got 'no'; missing required field e f"


def test_unknown_decoder_and_missing_jar_are_config_errors(spark, monkeypatch):
    df = spark.createDataFrame([('{"id": 1}',)], "value STRING")
    with pytest.raises(ConfigError) as bad:
        decode_json(df, "id BIGINT", decoder="fast")
    assert bad.value.key == "source.decoder"
    import streamdq.connectors.sources.decode_jvm as decode_jvm

    def unavailable(spark, struct, required, corrupt):
        decode_jvm._problems[decode_jvm._session_key(spark)] = "no javac on PATH"
        return None

    monkeypatch.setattr(decode_jvm, "json_decode_function", unavailable)
    with pytest.raises(ConfigError) as missing:
        decode_json(df, "id BIGINT", decoder="jvm")
    assert missing.value.key == "source.decoder" and "no javac on PATH" in str(missing.value)
    # auto falls back to the built-ins and decodes the same record
    assert collect_rows(decode_json(df, "id BIGINT"))[0]["id"] == 1


def test_source_config_chooses_the_decoder(spark, tmp_path):
    require_jvm_decoder(spark)
    from streamdq.connectors.sources import read_source, validate_source_spec

    (tmp_path / "a.json").write_text('{"id": 1}\n')
    base = {"type": "files", "path": str(tmp_path), "format": "json", "schema": "id BIGINT"}

    def plan(spec: dict[str, object]) -> str:
        return str(read_source(spark, spec)._jdf.queryExecution().analyzed().toString())

    assert "streamdq_decode_json(" in plan(base)  # auto: the jar is there
    assert "streamdq_decode_json(" not in plan({**base, "decoder": "spark"})
    with pytest.raises(ConfigError) as bad:
        validate_source_spec({**base, "decoder": "fast"})
    assert bad.value.key == "source.decoder"
