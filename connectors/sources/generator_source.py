"""The generator as a Spark streaming source: Python Data Source ``streamdq_generator``.

Where it runs: the reader plans offsets on the driver; ``read`` runs in Python workers and
regenerates its index range from the configuration (records are a pure function of the index, see
``generator``), so a replayed batch after a restart yields exactly the same rows.

Output schema: ``offset BIGINT, value STRING`` (``value`` = the record's JSON text, decoded by
``read_source`` like a Kafka payload, so schema-drift incidents are visible as drift facts).

Offsets are ``{"index": N, "start_ms": S}``: ``N`` records generated so far, ``S`` the stream's
event-time origin, fixed at the first batch (option ``start``, default: the wall clock when the
query first starts) and kept in the checkpoint, so a restarted query continues the same stream.

Options (all strings, as Spark passes them): ``seed`` (1), ``rows_per_second`` (200),
``start`` (ISO-8601 or epoch ms), ``incidents`` (JSON list of incident dicts), ``rows_per_batch``
(if set: deterministic mode, every batch advances exactly this many indices regardless of the
clock; otherwise real time: the stream is available up to ``now``), ``max_rows`` (stop after this
many indices), ``max_records_per_trigger`` (a ``ReadMaxRows`` limit), ``num_partitions`` (2).
An empty range (no new data) plans no partitions.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadLimit, ReadMaxRows
from pyspark.sql.types import StructType
from streamdq.connectors.sources.generator import GeneratorConfig, generate, now_ms, parse_start_ms, to_json

SOURCE_NAME = "streamdq_generator"
SOURCE_SCHEMA = "offset BIGINT, value STRING"


class GeneratorPartition(InputPartition):
    """Indices ``[start, end)`` of the stream whose origin is ``start_ms``."""

    def __init__(self, start: int, end: int, start_ms: int) -> None:
        super().__init__((start, end, start_ms))
        self.start = start
        self.end = end
        self.start_ms = start_ms


def _int_opt(options: dict[str, str], key: str, default: int | None) -> int | None:
    value = options.get(key)
    return default if value in (None, "") else int(float(str(value)))


class GeneratorStreamReader(DataSourceStreamReader):
    """Stream reader over generated records; see the module docstring."""

    def __init__(self, options: dict[str, str]) -> None:
        self.seed = _int_opt(options, "seed", 1) or 0
        self.rows_per_second = float(options.get("rows_per_second") or 200.0)
        self.start_opt = options.get("start") or None
        self.incidents_json = options.get("incidents") or "[]"
        self.rows_per_batch = _int_opt(options, "rows_per_batch", None)
        self.max_rows = _int_opt(options, "max_rows", None)
        self.max_per_trigger = _int_opt(options, "max_records_per_trigger", None)
        self.num_partitions = max(1, _int_opt(options, "num_partitions", 2) or 1)
        GeneratorConfig.incidents_from_json(self.incidents_json)  # fail at start-up on bad incidents

    def config(self, start_ms: int) -> GeneratorConfig:
        return GeneratorConfig(
            seed=self.seed,
            rows_per_second=self.rows_per_second,
            start_ms=start_ms,
            incidents=GeneratorConfig.incidents_from_json(self.incidents_json),
        )

    def initialOffset(self) -> dict:
        start_ms = parse_start_ms(self.start_opt, "source.start") if self.start_opt else now_ms()
        return {"index": 0, "start_ms": start_ms}

    def getDefaultReadLimit(self) -> ReadLimit:
        return ReadMaxRows(self.max_per_trigger) if self.max_per_trigger else ReadAllAvailable()

    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
        index, start_ms = int(start["index"]), int(start["start_ms"])
        if self.rows_per_batch is not None:
            end = index + self.rows_per_batch
        else:
            end = max(index, self.config(start_ms).index_at(now_ms()))
        if self.max_rows is not None:
            end = min(end, self.max_rows)
        if isinstance(limit, ReadMaxRows):
            end = min(end, index + limit.max_rows)
        return {"index": max(index, end), "start_ms": start_ms}

    def partitions(self, start: dict, end: dict) -> Sequence[InputPartition]:
        lo, hi, start_ms = int(start["index"]), int(end["index"]), int(end["start_ms"])
        if hi <= lo:
            return []
        n = min(self.num_partitions, hi - lo)
        bounds = [lo + (hi - lo) * k // n for k in range(n + 1)]
        return [GeneratorPartition(bounds[k], bounds[k + 1], start_ms) for k in range(n)]

    def read(self, partition: InputPartition) -> Iterator[tuple[Any, ...]]:
        assert isinstance(partition, GeneratorPartition)
        cfg = self.config(partition.start_ms)
        for index, rec in generate(cfg, partition.start, partition.end):
            yield (index, to_json(rec))


class GeneratorDataSource(DataSource):
    """PySpark data source ``streamdq_generator`` (streaming read only)."""

    @classmethod
    def name(cls) -> str:
        return SOURCE_NAME

    def schema(self) -> str:
        return SOURCE_SCHEMA

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        return GeneratorStreamReader(dict(self.options))


def register_generator_source(spark: SparkSession) -> None:
    """Register ``streamdq_generator`` with the session (idempotent)."""
    spark.dataSource.register(GeneratorDataSource)
