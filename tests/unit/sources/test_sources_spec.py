"""validate_source_spec: every mistake names the key path and the fix."""

from __future__ import annotations

import pytest
from streamdq.connectors.sources import validate_source_spec

from streamdq.errors import ConfigError

KAFKA = {
    "type": "kafka",
    "bootstrap_servers": "127.0.0.1:9092",
    "topic": "orders",
    "format": "json",
    "schema": "order_id STRING, ts TIMESTAMP, amount DOUBLE",
    "required": ["order_id", "ts"],
}


def test_valid_specs_pass(tmp_path, spark):
    validate_source_spec(KAFKA)
    validate_source_spec(
        {"type": "files", "path": str(tmp_path), "format": "csv", "schema": "a INT", "header": True}
    )
    validate_source_spec(
        {"type": "files", "path": "s3a://bucket/in/", "format": "parquet", "schema": "a INT"}
    )
    validate_source_spec({"type": "clf", "path": str(tmp_path), "required": ["status"]})
    validate_source_spec(
        {"type": "generator", "rows_per_second": 50, "seed": 3, "incidents": [{"kind": "null_burst"}]}
    )
    validate_source_spec({"type": "generator", "incidents": {"every": "3 minutes", "duration": 60}})


@pytest.mark.parametrize(
    "patch,message",
    [
        (
            {"type": "kinesis"},
            r"source.type: unknown source type 'kinesis' \(fix: use one of kafka, files, clf, generator\)",
        ),
        ({"format": "xml"}, r"source.format: unknown value 'xml' \(fix: use one of json, csv, clf, raw\)"),
        ({"topic": None}, r"source.topic: is required for a kafka source"),
        ({"max_records_per_trigger": -5}, r"source.max_records_per_trigger: must be a positive integer"),
        ({"starting_offsets": "yesterday"}, r"source.starting_offsets: unknown value 'yesterday'"),
        ({"schema": None}, r"source.schema: is required for this source"),
        ({"schema": "order_id STRNG ts"}, r"source.schema: not a valid Spark DDL schema"),
        ({"required": ["customer"]}, r"source.required: field 'customer' is not in the schema"),
        ({"required": "order_id"}, r"source.required: must be a list of field names"),
        ({"bootstrap": "x"}, r"source.bootstrap: unknown key for a kafka source \(fix: allowed keys: "),
    ],
)
def test_kafka_mistakes(spark, patch, message):
    spec = {**KAFKA, **patch}
    with pytest.raises(ConfigError, match=message):
        validate_source_spec(spec)


def test_files_and_clf_mistakes(tmp_path, spark):
    missing = tmp_path / "nope"
    with pytest.raises(
        ConfigError, match=rf"source.path: directory {missing} does not exist \(fix: create it"
    ):
        validate_source_spec({"type": "files", "path": str(missing), "schema": "a INT"})
    with pytest.raises(ConfigError, match=r"source.path: is required"):
        validate_source_spec({"type": "clf"})
    with pytest.raises(ConfigError, match=r"source.format: unknown value 'avro'"):
        validate_source_spec({"type": "files", "path": str(tmp_path), "format": "avro", "schema": "a INT"})
    with pytest.raises(ConfigError, match=r"source.max_files_per_trigger: must be a positive integer"):
        validate_source_spec(
            {"type": "files", "path": str(tmp_path), "schema": "a INT", "max_files_per_trigger": 0}
        )
    with pytest.raises(ConfigError, match=r"source.required: field 'ts' is not in the schema"):
        validate_source_spec({"type": "clf", "path": str(tmp_path), "required": ["ts"]})
    with pytest.raises(ConfigError, match=r"source.format: a clf source has a fixed format"):
        validate_source_spec({"type": "clf", "path": str(tmp_path), "format": "json"})


def test_schema_file(tmp_path, spark):
    ddl = tmp_path / "schema.ddl"
    ddl.write_text("order_id STRING, ts TIMESTAMP\n")
    validate_source_spec({**KAFKA, "schema": None, "schema_file": str(ddl), "required": ["ts"]})
    with pytest.raises(ConfigError, match=r"source.schema_file: cannot read"):
        validate_source_spec({**KAFKA, "schema": None, "schema_file": str(tmp_path / "missing.ddl")})


def test_generator_mistakes(spark):
    with pytest.raises(ConfigError, match=r"source.rows_per_second: must be a positive number"):
        validate_source_spec({"type": "generator", "rows_per_second": 0})
    with pytest.raises(ConfigError, match=r"source.incidents\[1\].kind: unknown kind 'meteor'"):
        validate_source_spec({"type": "generator", "incidents": [{"kind": "null_burst"}, {"kind": "meteor"}]})
    with pytest.raises(ConfigError, match=r"source.incidents.kinds: unknown kind 'x'"):
        validate_source_spec({"type": "generator", "incidents": {"kinds": ["x"]}})
    with pytest.raises(ConfigError, match=r"source.start: not an ISO-8601 time"):
        validate_source_spec({"type": "generator", "start": "noon"})


def test_where_prefix_is_used(spark):
    with pytest.raises(ConfigError, match=r"^sources\[0\].format: unknown value"):
        validate_source_spec({**KAFKA, "format": "xml"}, where="sources[0]")
    with pytest.raises(ConfigError, match=r"^src.max_records_per_trigger"):
        validate_source_spec({**KAFKA, "max_records_per_trigger": 0}, where="src")


def test_a_schema_file_that_cannot_be_read_is_said_once(tmp_path, spark):
    with pytest.raises(ConfigError) as err:
        validate_source_spec(
            {**KAFKA, "schema": None, "schema_file": str(tmp_path / "missing.ddl"), "topic": None}
        )
    keys = [e.key for e in err.value.errors_list()]
    assert sorted(keys) == ["source.schema_file", "source.topic"], keys


def test_the_parsed_spec_holds_what_the_readers_need(tmp_path, spark):
    from streamdq.connectors.sources import SourceSpec, parse_source_spec

    ddl = tmp_path / "schema.ddl"
    ddl.write_text("order_id STRING, ts TIMESTAMP\n")
    spec = parse_source_spec({**KAFKA, "schema": None, "schema_file": str(ddl), "required": ["ts"]})
    assert isinstance(spec, SourceSpec) and spec.format == "json"
    assert spec.schema_ddl == "order_id STRING, ts TIMESTAMP"
    assert spec.kafka is not None and spec.kafka.topics == ("orders",)
    assert spec.values["required"] == ("ts",) and spec.values["invalid_utf8"] == "quarantine"
    assert spec.schema is not None and "_streamdq_kafka_offset" in spec.schema.fieldNames()
    with pytest.raises(TypeError):
        spec.options["topic"] = "other"  # read-only


def test_a_missing_kafka_key_is_said_once_beside_other_mistakes(spark):
    spec = {k: v for k, v in KAFKA.items() if k != "bootstrap_servers"}
    with pytest.raises(ConfigError) as err:
        validate_source_spec({**spec, "min_partitions": 0})
    assert [(e.key, e.problem) for e in err.value.errors_list()] == [
        ("source.min_partitions", "must be a positive integer, got 0"),
        ("source.bootstrap_servers", "is required for a kafka source"),
    ]
