"""Directories of files as streaming sources (Spark file sources), decoded with bad-record capture.

Where it runs: Spark's file stream source lists new files in ``path`` at each trigger (local
directory, HDFS, or object storage such as ``s3a://bucket/prefix/`` when the cluster has the Hadoop
connector); each new file is read once and its name recorded in the checkpoint (exactly-once
file tracking). An empty directory yields empty batches.

Formats:

* ``json`` (JSON Lines: one object per line) and ``csv`` (one record per line; ``sep``,
  ``null_value`` e.g. ``NA``): files are read as text lines and decoded by
  :mod:`streamdq.connectors.sources.decode`, so each bad line gets its reason and its raw text
  (Spark's ``_corrupt_record`` would give neither a per-field reason nor the drift facts).
* ``csv`` with ``header: true``: columns are bound by NAME. Each file is read whole (Spark's
  ``wholetext``, or the name-ordered source) and split into lines in Spark, so every line knows
  its file's first line (the header) and its line number (``_streamdq_line``, 1-based). A header
  that names every schema field once and nothing else, in any order (trimmed, case-insensitive),
  binds: swapped columns are read correctly and the header line is dropped. Any other header
  (a missing column, an unknown extra column, a column named twice) quarantines the whole file:
  every line, the header included, is bad with ``file <path>: header does not match the schema
  (missing column(s) ...; unknown column(s) ...)``. The cost: a file is one row before the split,
  so a single file must fit in one task's memory (Spark's 2 GB row limit).
* ``text``: one ``value`` column per line (only a NULL line is bad).
* ``parquet``: read with the given schema (Parquet is typed, so there is no raw payload: the
  ``_streamdq_raw`` column carries the row as JSON for quarantine). A missing required field
  makes the row bad. A file whose column types contradict the schema fails the Spark read (Spark
  cannot read it), it is not a per-row fact: keep such files out of the directory or use JSON.
* access logs: see :func:`read_clf` (``type: clf``).

Order (``order``): ``mtime`` (default) is Spark's file source, which takes new files by
modification time; ``name`` reads a LOCAL directory's files in name order
(:mod:`streamdq.connectors.sources.files_ordered`), so backfilled files named by date are not late
against each other even when they share an mtime. With ``order: name`` every format but parquet is
read whole per file and split into lines (``_streamdq_line`` is set).

Every output carries ``_streamdq_file`` (the source file's path, ``file:/abs/path`` for local
files) in addition to the decode contract's metadata columns.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming import DataStreamReader
from streamdq.connectors.sources.clf import parse_clf
from streamdq.connectors.sources.decode import (
    ERROR_COL,
    RAW_COL,
    csv_header_binding_struct,
    decode_csv,
    decode_json,
    decode_raw,
    join_reasons,
    no_drift_columns,
    parse_schema,
)

from streamdq import metadata_columns
from streamdq.errors import ConfigError

FILE_COL = metadata_columns.FILE
LINE_COL = metadata_columns.LINE
HEADER_COL = "__sdq_header"
BINDING_COL = "__sdq_binding"
FILE_FORMATS = ("json", "csv", "parquet", "text")
FILE_ORDERS = ("mtime", "name")


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


def _whole_files(spark: SparkSession, spec: Mapping[str, Any]) -> DataFrame:
    """One row per file: ``value`` (the whole text) and ``_streamdq_file``, in the spec's order."""
    if str(spec.get("order", "mtime")) == "name":
        from streamdq.connectors.sources.files_ordered import SOURCE_NAME, register_files_source

        register_files_source(spark)
        reader = spark.readStream.format(SOURCE_NAME).option("path", str(spec["path"]))
        if spec.get("max_files_per_trigger") is not None:
            reader = reader.option("max_files_per_trigger", str(int(spec["max_files_per_trigger"])))
        return reader.load().select("value", F.col("file").alias(FILE_COL))
    df = _reader(spark, spec).format("text").option("wholetext", "true").load(str(spec["path"]))
    return df.select("value", F.col("_metadata.file_path").alias(FILE_COL))


def file_lines(files: DataFrame, binding: Callable[[Column, Column], Column] | None = None) -> DataFrame:
    """Whole-file rows (``value``, ``_streamdq_file``) split into lines, in Spark (no UDF).

    Output: ``value`` (one line, without its ``\n`` / ``\r\n``), ``_streamdq_file``,
    ``_streamdq_line`` (1-based line number) and ``__sdq_header`` (the file's first line). A final
    newline does not make an empty last line (as Spark's text reader); an empty file gives no row.
    ``binding(header, file)``: a column computed once per FILE (before the split) and carried to
    each of its lines as ``__sdq_binding`` (the CSV header binding).
    """
    lines = F.split(F.col("value"), r"\r?\n", -1)
    lines = F.when(F.element_at(lines, -1) == "", F.slice(lines, 1, F.size(lines) - 1)).otherwise(lines)
    # The per-file columns (header, binding) are computed in the projection BELOW the explode,
    # so that the explode carries them, not the file's whole line array, to every line (computed
    # beside the explode, Spark evaluates them above it and keeps the array on each output row:
    # memory quadratic in the file's length).
    staged = files.select(F.col(FILE_COL), lines.alias("__sdq_lines"))
    header = F.element_at(F.col("__sdq_lines"), 1)
    per_file = [] if binding is None else [binding(header, F.col(FILE_COL)).alias(BINDING_COL)]
    staged = staged.select(F.col(FILE_COL), F.col("__sdq_lines"), header.alias(HEADER_COL), *per_file)
    carried = [F.col(HEADER_COL), *([] if binding is None else [F.col(BINDING_COL)])]
    return staged.select(
        F.col(FILE_COL),
        *carried,
        F.posexplode(F.col("__sdq_lines")).alias("__sdq_pos", "value"),
    ).select(
        "value",
        F.col(FILE_COL),
        (F.col("__sdq_pos") + 1).cast("bigint").alias(LINE_COL),
        *carried,
    )


def _lines(
    spark: SparkSession,
    spec: Mapping[str, Any],
    whole: bool,
    binding: Callable[[Column, Column], Column] | None = None,
) -> DataFrame:
    if whole or str(spec.get("order", "mtime")) == "name":
        return file_lines(_whole_files(spark, spec), binding)
    return _text_lines(spark, spec)


def read_files(spark: SparkSession, spec: Mapping[str, Any]) -> DataFrame:
    """A decoded streaming DataFrame over ``spec['path']`` (``type: files``; see module doc)."""
    fmt = str(spec.get("format", "json"))
    required = list(spec.get("required") or [])
    keep = [(FILE_COL, FILE_COL)]
    by_name = fmt == "csv" and bool(spec.get("header", False))
    utf8 = str(spec.get("invalid_utf8") or "quarantine")
    if fmt in ("json", "csv", "text"):
        sep = str(spec.get("sep", ","))
        binding = None
        if by_name:
            struct = parse_schema(spec["schema"])

            def binding(header: Column, file: Column) -> Column:
                return csv_header_binding_struct(header, struct, sep, file)

        lines = _lines(spark, spec, whole=by_name, binding=binding)
        if LINE_COL in lines.columns:
            keep.append((LINE_COL, LINE_COL))
        if fmt == "json":
            decoder = str(spec.get("decoder") or "auto")
            return decode_json(
                lines, spec["schema"], required=required, keep=keep, invalid_utf8=utf8, decoder=decoder
            )
        if fmt == "text":
            return decode_raw(lines, keep=keep, invalid_utf8=utf8)
        null_value = spec.get("null_value")
        if by_name:
            lines = lines.withColumn("__sdq_is_header", F.col(LINE_COL) == 1)
        return decode_csv(
            lines,
            spec["schema"],
            required=required,
            keep=keep,
            sep=sep,
            null_value=None if null_value is None else str(null_value),
            binding_col=BINDING_COL if by_name else None,
            is_header_col="__sdq_is_header" if by_name else None,
            source_col=FILE_COL if by_name else None,
            invalid_utf8=utf8,
        )
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
    raise ConfigError("source.format", f"unknown file format {fmt!r}")  # parse_source_spec catches it first


def read_clf(spark: SparkSession, spec: Mapping[str, Any]) -> DataFrame:
    """Access-log text files (Common/Combined Log Format) in ``spec['path']``, parsed (``type: clf``)."""
    utf8 = str(spec.get("invalid_utf8") or "quarantine")
    return parse_clf(_text_lines(spark, spec), keep=[(FILE_COL, FILE_COL)], invalid_utf8=utf8)
