"""Streaming sources: ``read_source(spark, spec)`` -> a decoded streaming DataFrame.

``spec`` is the run config's ``source`` mapping; ``spec["type"]`` picks the source:

* ``kafka``: ``read_kafka_raw`` (native Spark kafka source or the Python data source), then the
  payload (``value``) is decoded per ``format`` (json | csv | clf | raw);
* ``files``: a directory of json / csv / parquet / text files (Spark file source);
* ``clf``: a directory of access logs in Common or Combined Log Format;
* ``generator``: the synthetic order stream with incidents (Python data source
  ``streamdq_generator``), decoded like a JSON Kafka payload.

Every result has the typed columns of the schema, ``_streamdq_error`` (NULL = good record, else
the reason), ``_streamdq_raw`` (raw payload), and the drift arrays ``_streamdq_unknown_fields``,
``_streamdq_missing_fields``, ``_streamdq_type_errors`` (see ``decode``); plus source metadata:
``_streamdq_kafka_{topic,partition,offset,timestamp}`` (kafka), ``_streamdq_file`` (files, clf),
``_streamdq_offset`` (generator). Columns starting with ``_streamdq_`` are metadata, never data.
A bad record never stops the stream. See docs/sources.md.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from streamdq.connectors.sources.decode import (
    DRIFT_COLS,
    ERROR_COL,
    METADATA_PREFIX,
    MISSING_FIELDS_COL,
    RAW_COL,
    TYPE_ERRORS_COL,
    UNKNOWN_FIELDS_COL,
    data_columns,
    decode_csv,
    decode_json,
    decode_raw,
    drift_aggregations,
)
from streamdq.connectors.sources.spec import (
    SOURCE_TYPES,
    SourceSpec,
    parse_source_spec,
    validate_source_spec,
)

from streamdq import metadata_columns

KAFKA_KEEP = [
    ("topic", metadata_columns.KAFKA_TOPIC),
    ("partition", metadata_columns.KAFKA_PARTITION),
    ("offset", metadata_columns.KAFKA_OFFSET),
    ("timestamp", metadata_columns.KAFKA_TIMESTAMP),
]

__all__ = [
    "DRIFT_COLS",
    "ERROR_COL",
    "METADATA_PREFIX",
    "MISSING_FIELDS_COL",
    "RAW_COL",
    "SOURCE_TYPES",
    "SourceSpec",
    "TYPE_ERRORS_COL",
    "UNKNOWN_FIELDS_COL",
    "data_columns",
    "drift_aggregations",
    "parse_source_spec",
    "read_source",
    "validate_source_spec",
]


def _decode_payload(
    df: DataFrame, fmt: str, schema_ddl: str | None, values: Mapping[str, Any], keep: list[tuple[str, str]]
) -> DataFrame:
    """``df``'s ``value`` decoded per ``fmt`` with the parsed keys ``values`` (``required``,
    ``invalid_utf8``, ``decoder``, ``sep``)."""
    required = list(values.get("required") or [])
    utf8 = str(values.get("invalid_utf8") or "quarantine")
    if fmt == "json":
        return decode_json(
            df,
            str(schema_ddl),
            required=required,
            keep=keep,
            invalid_utf8=utf8,
            decoder=str(values.get("decoder") or "auto"),
        )
    if fmt == "csv":
        return decode_csv(
            df,
            str(schema_ddl),
            required=required,
            keep=keep,
            sep=str(values.get("sep") or ","),
            header=False,
            invalid_utf8=utf8,
        )
    if fmt == "clf":
        from streamdq.connectors.sources.clf import parse_clf

        return parse_clf(df, keep=keep, invalid_utf8=utf8)
    return decode_raw(df, keep=keep, invalid_utf8=utf8)


def python_worker_modules(spark: SparkSession, spec: SourceSpec) -> tuple[str, ...]:
    """The modules a source's reads import in Spark's Python workers, or ``()`` for a source
    read by the JVM (files, access logs, Spark's own kafka source). The generator and the
    Python Kafka source are Python data sources: each microbatch's read tasks run in Python
    workers, whose start the first batch pays (``streamdq.spark.prewarm_python_workers``).

    >>> from streamdq.spark import get_spark
    >>> spec = parse_source_spec({"type": "generator"})
    >>> python_worker_modules(get_spark(), spec)
    ('streamdq.connectors.sources.generator_source',)
    >>> python_worker_modules(get_spark(), parse_source_spec({"type": "clf", "path": "/tmp"}))
    ()
    """
    if spec.type == "generator":
        return ("streamdq.connectors.sources.generator_source",)
    if spec.type == "kafka" and spec.kafka is not None:
        from streamdq.connectors.sources.kafka import native_kafka_available

        impl = spec.kafka.implementation
        if impl == "python" or (impl == "auto" and not native_kafka_available(spark)):
            return ("streamdq.connectors.sources.kafka_datasource",)
    return ()


def read_source(spark: SparkSession, spec: SourceSpec | Mapping[str, Any]) -> DataFrame:
    """The decoded streaming DataFrame for ``spec`` (see the module docstring).

    ``spec`` is the run config's parsed source (``RunConfig.source_spec``), read as it is: it is
    not validated again. A bare mapping is parsed first (``parse_source_spec``), which raises
    ConfigError (naming ``source.<key>``) for a bad spec; a bad record never raises.
    """
    parsed = spec if isinstance(spec, SourceSpec) else parse_source_spec(spec)
    kind = parsed.type
    if kind == "kafka":
        from streamdq.connectors.sources.kafka import read_kafka_raw

        assert parsed.kafka is not None  # a parsed kafka source has its KafkaSpec
        raw = read_kafka_raw(spark, parsed.kafka)
        return _decode_payload(raw, parsed.format, parsed.schema_ddl, parsed.values, KAFKA_KEEP)
    if kind in ("files", "clf"):
        from streamdq.connectors.sources.files import read_clf, read_files

        if kind == "clf":
            return read_clf(spark, parsed.options)
        resolved = dict(parsed.options)
        if parsed.schema_ddl is not None:
            resolved["schema"] = parsed.schema_ddl
            resolved.pop("schema_file", None)
        return read_files(spark, resolved)
    from streamdq.connectors.sources.generator import GENERATOR_REQUIRED, GENERATOR_SCHEMA_DDL
    from streamdq.connectors.sources.generator_source import SOURCE_NAME, register_generator_source

    register_generator_source(spark)
    reader = spark.readStream.format(SOURCE_NAME).option(
        "incidents", json.dumps([i.to_dict() for i in parsed.incidents])
    )
    for key in (
        "seed",
        "rows_per_second",
        "start",
        "rows_per_batch",
        "max_rows",
        "max_records_per_trigger",
        "num_partitions",
    ):
        if parsed.values.get(key) is not None:
            reader = reader.option(key, str(parsed.values[key]))
    values = {
        "required": parsed.values.get("required") or list(GENERATOR_REQUIRED),
        "decoder": parsed.values.get("decoder"),
    }
    schema = parsed.schema_ddl or GENERATOR_SCHEMA_DDL
    return _decode_payload(reader.load(), "json", schema, values, [("offset", metadata_columns.OFFSET)])
