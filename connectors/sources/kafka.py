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

Spec: a :class:`~streamdq.connectors.sources.kafka_options.KafkaSpec` (the run config's source,
parsed once at load, ``SourceSpec.kafka``), or a mapping parsed here with the keys: ``bootstrap_servers`` and
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

from collections.abc import Mapping
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from streamdq.connectors.sources.kafka_options import IMPLEMENTATIONS, KafkaSpec

from streamdq.errors import ConfigError

NATIVE_PROVIDER = "org.apache.spark.sql.kafka010.KafkaSourceProvider"
__all__ = [
    "IMPLEMENTATIONS",
    "native_kafka_available",
    "native_options",
    "read_kafka_batch",
    "read_kafka_raw",
]


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


def _validate(spec: Mapping[str, Any]) -> KafkaSpec:
    """A kafka ``source`` mapping as a ``KafkaSpec`` (``KafkaSpec.from_source``; ConfigError names
    ``source.<key>``)."""
    return KafkaSpec.from_source(spec)


def _spec(spec: KafkaSpec | Mapping[str, Any]) -> KafkaSpec:
    """``spec`` as it is when parsed already (the run config's ``SourceSpec.kafka``), else the
    mapping parsed once (``KafkaSpec.from_source``; ConfigError names ``source.<key>``)."""
    return spec if isinstance(spec, KafkaSpec) else KafkaSpec.from_source(spec)


def native_options(spec: KafkaSpec) -> dict[str, str]:
    """Options of Spark's native ``kafka`` source for a parsed spec."""
    return spec.native_options()


def read_kafka_raw(spark: SparkSession, spec: KafkaSpec | Mapping[str, Any]) -> DataFrame:
    """A streaming DataFrame over the spec's topics with Spark's kafka columns (see module doc).

    ``spec``: a parsed ``KafkaSpec`` (the run config's, used as it is) or a source mapping
    (parsed here). Raises :class:`streamdq.errors.ConfigError` naming the ``source.*`` key on a
    bad mapping, or if ``implementation: native`` is asked for but the kafka jar is missing.
    """
    s = _spec(spec)
    impl = s.implementation
    if impl == "auto":
        impl = "native" if native_kafka_available(spark) else "python"
    elif impl == "native" and not native_kafka_available(spark):
        raise ConfigError(
            "source.implementation",
            "native needs the spark-sql-kafka jar, which is not on the classpath",
            "add org.apache.spark:spark-sql-kafka-0-10 to spark.jars.packages, or use auto/python",
        )
    if impl == "native":
        reader = spark.readStream.format("kafka")
        for k, v in s.native_options().items():
            reader = reader.option(k, v)
        return reader.load().select(
            "key", "value", "topic", "partition", "offset", "timestamp", "timestampType"
        )
    return _python_reader(spark.readStream, spark, s).load()


def _python_reader(reader: Any, spark: SparkSession, s: KafkaSpec) -> Any:
    """``reader`` (``spark.read`` or ``spark.readStream``) set up for the Python source; the
    client is resolved here, on the driver, so every read task uses the same one."""
    from streamdq.connectors.sources.kafka_datasource import FORMAT_NAME, register

    register(spark)  # idempotent; cheap
    return reader.format(FORMAT_NAME).options(**s.to_options())


def read_kafka_batch(
    spark: SparkSession, spec: KafkaSpec | Mapping[str, Any], ending_offsets: Any = None
) -> DataFrame:
    """The records of ``spec['topic']`` from ``starting_offsets`` to ``ending_offsets`` as a batch
    DataFrame with the same columns as :func:`read_kafka_raw` (Python source; any ``implementation``
    other than ``native`` is accepted). ``ending_offsets``: None/``latest`` or ``{topic: {partition:
    offset}}`` (-1 latest), exclusive."""
    s = _spec(spec).with_ending(ending_offsets)
    return _python_reader(spark.read, spark, s).load()
