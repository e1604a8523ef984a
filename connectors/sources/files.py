"""Directories of files as streaming sources (Spark file sources), decoded with bad-record capture.

Where it runs: Spark's file stream source lists new files in ``path`` at each trigger (local
directory, HDFS, or object storage such as ``s3a://bucket/prefix/`` when the cluster has the Hadoop
connector); each new file is read once and its name recorded in the checkpoint (exactly-once
file tracking). An empty directory yields empty batches.

Formats:

* ``json`` (JSON Lines: one object per line) and ``csv`` (one record per line; ``header: true``
  drops header lines; ``sep``): files are read as text lines and decoded by
  :mod:`streamdq.connectors.sources.decode`, so each bad line gets its reason and its raw text
  (Spark's ``_corrupt_record`` would give neither a per-field reason nor the drift facts).
* ``text``: one ``value`` column per line (only a NULL line is bad).
* ``parquet``: read with the given schema (Parquet is typed, so there is no raw payload: the
  ``_streamdq_raw`` column carries the row as JSON for quarantine). A missing required field
  makes the row bad. A file whose column types contradict the schema fails the Spark read (Spark
  cannot read it), it is not a per-row fact: keep such files out of the directory or use JSON.
* access logs: see :func:`read_clf` (``type: clf``).

Every output carries ``_streamdq_file`` (the source file's path) in addition to the decode
contract's metadata columns.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming import DataStreamReader
from streamdq.connectors.sources.clf import parse_clf
from streamdq.connectors.sources.decode import (
    ERROR_COL,
    RAW_COL,
    decode_csv,
    decode_json,
    decode_raw,
    join_reasons,
    no_drift_columns,
    parse_schema,
)

FILE_COL = "_streamdq_file"
FILE_FORMATS = ("json", "csv", "parquet", "text")


def _reader(spark: SparkSession, spec: Mapping[str, Any]) -> DataStreamReader:
    reader = spark.readStream
    if spec.get("max_files_per_trigger") is not None:
        reader = reader.option("maxFilesPerTrigger", str(int(spec["max_files_per_trigger"])))
    for k, v in (spec.get("options") or {}).items():
        reader = reader.option(str(k), str(v))
    return reader


def _text_lines(spark: SparkSession, spec: Mapping[str, Any]) -> DataFrame:
    df = _reader(spark, spec).format("text").load(str(spec["path"]))
    return df.select("value", F.col("_metadata.file_path").alias(FILE_COL))


def read_files(spark: SparkSession, spec: Mapping[str, Any]) -> DataFrame:
    """A decoded streaming DataFrame over ``spec['path']`` (``type: files``; see module doc)."""
    fmt = str(spec.get("format", "json"))
    required = list(spec.get("required") or [])
    keep = [(FILE_COL, FILE_COL)]
    if fmt == "json":
        return decode_json(_text_lines(spark, spec), spec["schema"], required=required, keep=keep)
    if fmt == "csv":
        return decode_csv(
            _text_lines(spark, spec),
            spec["schema"],
            required=required,
            keep=keep,
            sep=str(spec.get("sep", ",")),
            header=bool(spec.get("header", False)),
        )
    if fmt == "text":
        return decode_raw(_text_lines(spark, spec), keep=keep)
    if fmt == "parquet":
        struct = parse_schema(spec["schema"])
        df = _reader(spark, spec).schema(struct).format("parquet").load(str(spec["path"]))
        reasons = [F.when(F.col(name).isNull(), F.lit(f"missing required field {name}")) for name in required]
        return df.select(
            *[F.col(f.name) for f in struct.fields],
            join_reasons(reasons).alias(ERROR_COL),
            F.to_json(F.struct(*[F.col(f.name) for f in struct.fields])).alias(RAW_COL),
            *no_drift_columns(),
            F.col("_metadata.file_path").alias(FILE_COL),
        )
    raise ValueError(f"source.format: unknown file format {fmt!r}")  # validate_source_spec catches it first


def read_clf(spark: SparkSession, spec: Mapping[str, Any]) -> DataFrame:
    """Access-log text files (Common/Combined Log Format) in ``spec['path']``, parsed (``type: clf``)."""
    return parse_clf(_text_lines(spark, spec), keep=[(FILE_COL, FILE_COL)])
