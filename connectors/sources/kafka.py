"""Kafka topic -> streaming DataFrame with Spark's kafka columns.

``read_kafka_raw(spark, spec)`` returns an unbounded DataFrame with the columns
``key BINARY, value BINARY, topic STRING, partition INT, offset BIGINT, timestamp TIMESTAMP,
timestampType INT`` (Spark's own kafka source schema minus the optional headers). Decoding the
payload (json/csv/...) is the caller's job (``streamdq.connectors.sources.read_source``).

Implementation, chosen once per call:

* Spark's native ``kafka`` format when ``org.apache.spark.sql.kafka010.KafkaSourceProvider`` is
  loadable in the JVM (a cluster with the spark-sql-kafka jar);
* otherwise the pure-Python source of :mod:`streamdq.connectors.sources.kafka_datasource`
  (Python Data Source API over kafka-python), registered on first use.

Spec keys (a dict, e.g. the run config's ``source`` section): ``bootstrap_servers`` and
``topic`` (required), ``starting_offsets`` (``earliest`` default | ``latest`` | JSON string or
dict ``{"topic": {"0": 12}}``), ``max_records_per_trigger`` (int), ``kafka_options`` (dict passed
through: to the native source as ``kafka.<key>`` options, to kafka-python as consumer settings),
``implementation`` (``auto`` default | ``native`` | ``python``), and ``client`` (the Python
source's Kafka client: ``auto`` default = confluent-kafka when installed, else kafka-python |
``kafka-python`` | ``confluent-kafka``; see :mod:`streamdq.connectors.sources.kafka_clients`), ``min_partitions`` (int: at least this
many read tasks per microbatch, cutting a partition's range into pieces; Spark's ``minPartitions``).
Both implementations keep
offsets in the query's checkpoint (no consumer group), deliver each record exactly once into
``foreachBatch`` across restarts, and keep the query alive while the broker is unreachable.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from streamdq.connectors.sources.kafka_clients import (
    CLIENTS,
    CONFLUENT,
    FAST_EXTRA_HINT,
    confluent_available,
    resolve_client,
)

from streamdq.errors import ConfigError

NATIVE_PROVIDER = "org.apache.spark.sql.kafka010.KafkaSourceProvider"
IMPLEMENTATIONS = ("auto", "native", "python")


def native_kafka_available(spark: SparkSession) -> bool:
    """True if Spark's own kafka source class can be loaded by the driver JVM."""
    try:
        jvm = spark.sparkContext._jvm
        assert jvm is not None
        loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
        jvm.java.lang.Class.forName(NATIVE_PROVIDER, False, loader)
        return True
    except Exception:
        return False


def _starting_offsets(value: Any) -> str:
    if value is None:
        return "earliest"
    if isinstance(value, Mapping):
        return json.dumps({str(t): {str(p): int(o) for p, o in parts.items()} for t, parts in value.items()})
    return str(value).strip()


def _validate(spec: Mapping[str, Any]) -> dict[str, Any]:
    for key in ("bootstrap_servers", "topic"):
        if not spec.get(key):
            raise ConfigError(f"source.{key}", "is required for a kafka source", fix=f"set source.{key}")
    impl = str(spec.get("implementation", "auto"))
    if impl not in IMPLEMENTATIONS:
        raise ConfigError(
            "source.implementation", f"unknown value {impl!r}", fix="use auto, native or python"
        )
    client = spec.get("client", "auto")
    if not isinstance(client, str) or client not in CLIENTS:
        raise ConfigError(
            "source.client", f"unknown value {client!r}", fix="use auto, kafka-python or confluent-kafka"
        )
    if client == CONFLUENT and not confluent_available():
        raise ConfigError(
            "source.client", "confluent-kafka is not installed", fix=f"{FAST_EXTRA_HINT}, or use auto"
        )
    mrt = spec.get("max_records_per_trigger")
    if mrt is not None and (isinstance(mrt, bool) or not isinstance(mrt, int) or mrt <= 0):
        raise ConfigError("source.max_records_per_trigger", f"must be a positive integer, got {mrt!r}")
    min_parts = spec.get("min_partitions")
    if min_parts is not None and (
        isinstance(min_parts, bool) or not isinstance(min_parts, int) or min_parts <= 0
    ):
        raise ConfigError(
            "source.min_partitions",
            f"must be a positive integer, got {min_parts!r}",
            fix="e.g. min_partitions: 4",
        )
    extra = spec.get("kafka_options") or {}
    if not isinstance(extra, Mapping):
        raise ConfigError("source.kafka_options", f"must be a mapping, got {type(extra).__name__}")
    start = _starting_offsets(spec.get("starting_offsets"))
    if start not in ("earliest", "latest"):
        try:
            parsed = json.loads(start)
        except json.JSONDecodeError:
            parsed = None
        if not isinstance(parsed, dict):
            raise ConfigError(
                "source.starting_offsets",
                f"unknown value {start!r}",
                fix='use earliest, latest or JSON like {"orders": {"0": 12}} (-2 earliest, -1 latest)',
            )
    topic = spec["topic"]
    topics = ",".join(topic) if isinstance(topic, list | tuple) else str(topic)
    return {
        "bootstrap_servers": str(spec["bootstrap_servers"]),
        "topic": topics,
        "starting_offsets": start,
        "max_records_per_trigger": mrt,
        "kafka_options": dict(extra),
        "implementation": impl,
        "client": client,
        "min_partitions": min_parts,
    }


def native_options(s: Mapping[str, Any]) -> dict[str, str]:
    """Options of Spark's native ``kafka`` source for a validated spec (see ``_validate``)."""
    opts = {
        "kafka.bootstrap.servers": str(s["bootstrap_servers"]),
        "subscribe": str(s["topic"]),
        "startingOffsets": str(s["starting_offsets"]),
        "failOnDataLoss": "false",
    }
    if s.get("max_records_per_trigger") is not None:
        opts["maxOffsetsPerTrigger"] = str(s["max_records_per_trigger"])
    if s.get("min_partitions") is not None:
        opts["minPartitions"] = str(s["min_partitions"])
    for k, v in (s.get("kafka_options") or {}).items():
        opts[str(k) if str(k).startswith("kafka.") else f"kafka.{k}"] = str(v)
    return opts


def read_kafka_raw(spark: SparkSession, spec: Mapping[str, Any]) -> DataFrame:
    """A streaming DataFrame over ``spec['topic']`` with Spark's kafka columns (see module doc).

    Raises :class:`streamdq.errors.ConfigError` naming the ``source.*`` key on a bad spec, or if
    ``implementation: native`` is asked for but the kafka jar is missing.
    """
    s = _validate(spec)
    impl = s["implementation"]
    if impl == "auto":
        impl = "native" if native_kafka_available(spark) else "python"
    elif impl == "native" and not native_kafka_available(spark):
        raise ConfigError(
            "source.implementation",
            "native needs the spark-sql-kafka jar, which is not on the classpath",
            fix="add org.apache.spark:spark-sql-kafka-0-10 to spark.jars.packages, or use auto/python",
        )
    if impl == "native":
        reader = spark.readStream.format("kafka")
        for k, v in native_options(s).items():
            reader = reader.option(k, v)
        return reader.load().select(
            "key", "value", "topic", "partition", "offset", "timestamp", "timestampType"
        )

    return _python_reader(spark.readStream, spark, spec, s).load()


def _python_reader(reader: Any, spark: SparkSession, spec: Mapping[str, Any], s: Mapping[str, Any]) -> Any:
    """``reader`` (``spark.read`` or ``spark.readStream``) set up for the Python source."""
    from streamdq.connectors.sources.kafka_datasource import FORMAT_NAME, register

    register(spark)  # idempotent; cheap
    reader = (
        reader.format(FORMAT_NAME)
        .option("bootstrap_servers", s["bootstrap_servers"])
        .option("topic", s["topic"])
        .option("starting_offsets", s["starting_offsets"])
        # resolved here, on the driver, so every read task uses the same client
        .option("client", resolve_client(s["client"]))
    )
    if s["max_records_per_trigger"] is not None:
        reader = reader.option("max_records_per_trigger", str(s["max_records_per_trigger"]))
    if s["min_partitions"] is not None:
        reader = reader.option("min_partitions", str(s["min_partitions"]))
    if s["kafka_options"]:
        reader = reader.option("kafka_options", json.dumps(s["kafka_options"]))
    for k in ("offset_timeout_s", "read_timeout_s", "initial_offset_wait_s"):
        if spec.get(k) is not None:
            reader = reader.option(k, str(spec[k]))
    return reader


def read_kafka_batch(spark: SparkSession, spec: Mapping[str, Any], ending_offsets: Any = None) -> DataFrame:
    """The records of ``spec['topic']`` from ``starting_offsets`` to ``ending_offsets`` as a batch
    DataFrame with the same columns as :func:`read_kafka_raw` (Python source; any ``implementation``
    other than ``native`` is accepted). ``ending_offsets``: None/``latest`` or ``{topic: {partition:
    offset}}`` (-1 latest), exclusive."""
    s = _validate(spec)
    end = "latest" if ending_offsets is None else _starting_offsets(ending_offsets)
    return _python_reader(spark.read, spark, spec, s).option("ending_offsets", end).load()
