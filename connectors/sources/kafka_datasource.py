"""A Python Kafka source (PySpark Python Data Source API over kafka-python or confluent-kafka).

Used by :func:`streamdq.connectors.sources.kafka.read_kafka_raw` when Spark's own ``kafka``
format (a JVM jar) is not on the classpath. Registered as format ``streamdq_kafka`` (streaming
and batch reads); its rows have Spark's kafka schema: ``key BINARY, value BINARY, topic STRING,
partition INT, offset BIGINT, timestamp TIMESTAMP, timestampType INT``.

Where it runs: :class:`KafkaStreamReader` lives in a Python process next to the driver and only
asks the broker for offsets (``initialOffset``/``latestOffset``); each :class:`KafkaPartitionRange`
(one per Kafka partition with new records) is one Spark task, read by an executor's Python
worker with the ``client`` option's library (:mod:`streamdq.connectors.sources.kafka_clients`):
it ``assign``s the single partition at the range start and yields ``pyarrow.RecordBatch``es up
to (excluding) the range end, so Spark takes whole Arrow batches, never Python rows. With
confluent-kafka the worker keeps its consumer for the partition's next range (``ConsumerPool``)
(unassigned between ranges, so an idle pooled consumer fetches nothing) and the driver side
keeps one admin client for its lookups, dropped when the query stops. No consumer group is used: Spark's
checkpoint holds the offsets, so every record is delivered exactly once into ``foreachBatch``
across restarts from the same checkpoint.

Offsets are a per-partition dict ``{"<topic>": {"<partition>": next_offset}}`` (the format of
Spark's ``startingOffsets`` JSON). Options (all strings, as Spark hands them over), parsed once by
``KafkaSpec.from_options`` (:mod:`streamdq.connectors.sources.kafka_options`; a mistake is a
``ConfigError`` naming ``source.<key>``):

* ``bootstrap_servers`` (required), ``topic`` (required; comma-separated for several topics);
* ``starting_offsets``: ``earliest`` (default) | ``latest`` | JSON ``{"t": {"0": 12}}``, where
  ``-2`` means earliest and ``-1`` latest; partitions absent from the JSON start at earliest;
* ``max_records_per_trigger``: cap on records per microbatch, spread over partitions in
  proportion to their backlog (every partition with a backlog makes progress);
* ``kafka_options``: JSON dict of extra consumer settings (``security.protocol`` or
  ``security_protocol`` spellings both accepted; mapped to librdkafka names for confluent-kafka);
* ``client``: ``auto`` (default: confluent-kafka when installed, else kafka-python) |
  ``kafka-python`` | ``confluent-kafka``;
* ``min_partitions``: read tasks per microbatch at least (a partition's range is cut into pieces;
  default one task per partition);
* ``ending_offsets`` (batch reads only): ``latest`` (default) | JSON ``{"t": {"0": 50}}``;
* ``offset_timeout_s`` (default 10): how long an offset lookup may take before the broker is
  considered unreachable; ``read_timeout_s`` (default 300): how long a read task waits for a
  range the broker had already acknowledged (e.g. while the broker restarts) before failing;
  ``initial_offset_wait_s`` (default 60): how long the first offset lookup waits for the broker.

Unreachable broker: ``latestOffset`` logs a warning and returns ``start`` (no new data); the
query keeps triggering empty and resumes when the broker answers again. An empty topic yields
empty microbatches. Partitions added while running start at their earliest offset. If the
broker's earliest offset moved past a range start (retention), the read starts at the earliest
available record and logs the data loss.
"""

from __future__ import annotations

import concurrent.futures
import logging
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeVar

from pyspark.sql.datasource import DataSource, DataSourceReader, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxRows,
    SupportsTriggerAvailableNow,
)
from pyspark.sql.types import StructType
from streamdq.connectors.sources.kafka_clients import (
    CONFLUENT,
    WAIT_REPORT_S,
    ProgressWatch,
    admin_client,
    arrow_schema,
    lookup_offsets_admin,
    read_range,
    read_range_with,
    records_to_batch,
)
from streamdq.connectors.sources.kafka_options import (
    EARLIEST,
    LATEST,
    KafkaSpec,
    Offsets,
    consumer_config,
    parse_offsets,
)

from streamdq.errors import StreamdqError

# the read tasks' parts and the option parsing live in kafka_clients and kafka_options; these names
# stay importable from here
__all__ = [
    "FORMAT_NAME",
    "KAFKA_SCHEMA",
    "WAIT_REPORT_S",
    "BrokerUnreachable",
    "KafkaBatchReader",
    "KafkaDataSource",
    "KafkaPartitionRange",
    "KafkaStreamReader",
    "ProgressWatch",
    "arrow_schema",
    "consumer_config",
    "parse_starting_offsets",
    "read_range",
    "read_range_with",
    "records_to_batch",
    "register",
    "resolve_offsets",
    "split_ranges",
    "spread_limit",
]

log = logging.getLogger("streamdq.connectors.kafka")

FORMAT_NAME = "streamdq_kafka"
KAFKA_SCHEMA = "key BINARY, value BINARY, topic STRING, partition INT, offset BIGINT, timestamp TIMESTAMP, timestampType INT"
T = TypeVar("T")


def parse_starting_offsets(raw: str | None) -> str | Offsets:
    """``"earliest"``, ``"latest"`` or a validated ``{topic: {partition: offset}}`` dict
    (:func:`streamdq.connectors.sources.kafka_options.parse_offsets`)."""
    return parse_offsets(raw, "starting_offsets")


class BrokerUnreachable(StreamdqError, RuntimeError):
    """The broker did not answer an offset lookup in time (the driver side treats it as no new
    data this trigger)."""


# --------------------------------------------------------------------------- offset math
def spread_limit(start: Offsets, end: Offsets, max_rows: int) -> Offsets:
    """Cap ``end`` so that at most ``max_rows`` records lie between ``start`` and the result.

    The budget is shared in proportion to each partition's backlog (largest remainders get the
    leftover records), so every partition with a backlog moves when the budget allows.
    """
    backlog: dict[tuple[str, str], int] = {}
    for topic, parts in end.items():
        for p, e in parts.items():
            s = start.get(topic, {}).get(p, 0)
            backlog[(topic, p)] = max(0, e - s)
    total = sum(backlog.values())
    capped: Offsets = {t: dict(parts) for t, parts in end.items()}
    if total <= max_rows:
        return capped
    budget = max(0, max_rows)
    shares = {k: budget * b / total for k, b in backlog.items()}
    take = {k: int(v) for k, v in shares.items()}
    leftover = budget - sum(take.values())
    for k in sorted(shares, key=lambda k: (shares[k] - take[k], backlog[k]), reverse=True):
        if leftover <= 0:
            break
        if take[k] < backlog[k]:
            take[k] += 1
            leftover -= 1
    for (topic, p), n in take.items():
        capped[topic][p] = start.get(topic, {}).get(p, 0) + n
    return capped


# --------------------------------------------------------------------------- broker access
# at most this many lookups may hang at once (a broker that accepts connections but never
# answers); further triggers count as "unreachable" instead of piling up threads
_LOOKUP_SLOTS = threading.BoundedSemaphore(4)


def _with_deadline(fn: Callable[[], T], timeout: float, what: str) -> T:
    """Run ``fn`` in a daemon thread; raise BrokerUnreachable if it takes longer than ``timeout``.

    kafka-python can block without bound on metadata when the broker is gone; this guarantees
    that the driver-side offset lookups never hang the query.
    """
    if not _LOOKUP_SLOTS.acquire(blocking=False):
        raise BrokerUnreachable(f"{what}: earlier lookups are still hanging; not starting another")
    box: concurrent.futures.Future[T] = concurrent.futures.Future()

    def run() -> None:
        try:
            box.set_result(fn())
        except BaseException as e:  # delivered to the caller below
            box.set_exception(e)
        finally:
            _LOOKUP_SLOTS.release()

    threading.Thread(target=run, name=f"streamdq-kafka-{what}", daemon=True).start()
    try:
        return box.result(timeout=timeout)
    except concurrent.futures.TimeoutError as e:
        raise BrokerUnreachable(f"{what}: no answer within {timeout}s") from e


def _lookup_offsets(cfg: dict[str, Any], topics: list[str], timeout: float) -> tuple[Offsets, Offsets]:
    """(earliest, latest) offsets of every partition of ``topics``, from a short-lived consumer."""
    from kafka import KafkaConsumer, TopicPartition

    timeout_ms = int(timeout * 1000)

    def fetch() -> tuple[Offsets, Offsets]:
        consumer = KafkaConsumer(**{"bootstrap_timeout_ms": timeout_ms, **cfg})
        try:
            tps = []
            for topic in topics:
                parts = consumer.partitions_for_topic(topic) or set()
                tps += [TopicPartition(topic, p) for p in sorted(parts)]
            if not tps:
                return {t: {} for t in topics}, {t: {} for t in topics}
            begin = consumer.beginning_offsets(tps, timeout_ms=timeout_ms)
            end = consumer.end_offsets(tps, timeout_ms=timeout_ms)
        finally:
            consumer.close()
        lo: Offsets = {t: {} for t in topics}
        hi: Offsets = {t: {} for t in topics}
        for tp in tps:
            lo[tp.topic][str(tp.partition)] = int(begin[tp])
            hi[tp.topic][str(tp.partition)] = int(end[tp])
        return lo, hi

    return _with_deadline(fetch, timeout + 2.0, "offset-lookup")


# --------------------------------------------------------------------------- Spark data source
class KafkaPartitionRange(InputPartition):
    """Records ``[start, end)`` of one Kafka partition; one Spark task reads one range."""

    def __init__(self, topic: str, partition: int, start: int, end: int) -> None:
        super().__init__((topic, partition, start, end))
        self.topic = topic
        self.partition = partition
        self.start = start
        self.end = end

    def __repr__(self) -> str:
        return f"KafkaPartitionRange({self.topic}[{self.partition}] {self.start}..{self.end})"


class KafkaDataSource(DataSource):
    """``spark.readStream.format("streamdq_kafka")``: see the module docstring for options."""

    @classmethod
    def name(cls) -> str:
        return FORMAT_NAME

    def schema(self) -> str:
        return KAFKA_SCHEMA

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        return KafkaStreamReader(dict(self.options))

    def reader(self, schema: StructType) -> DataSourceReader:
        return KafkaBatchReader(dict(self.options))


class KafkaStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Offsets from the broker on the driver side; records read by executors (see module doc).

    ``Trigger.AvailableNow``: the log-end offsets at query start are the target; the query
    reads up to them (respecting the per-trigger limit, without asking the broker again, so an
    outage cannot end it early) and then stops.

    Picklable: holds plain options; the confluent-kafka lookup client (``_admin``) is dropped when
    pickled, and every consumer is opened (or taken from the worker's pool) by the read task.
    """

    def __init__(self, options: Mapping[str, str]) -> None:
        self.options = dict(options)
        self.spec = KafkaSpec.from_options(self.options)  # ConfigError names source.<key>
        self.topics = list(self.spec.topics)
        self.cfg = self.spec.consumer_config()
        self.starting = self.spec.starting_offsets
        self.max_records = self.spec.max_records_per_trigger
        self.client = self.spec.client  # resolved by KafkaSpec.from_options
        self.min_partitions = self.spec.min_partitions
        self.offset_timeout = self.spec.offset_timeout_s
        self.read_timeout = self.spec.read_timeout_s
        self.initial_wait = self.spec.initial_offset_wait_s
        self._admin: Any = None  # confluent-kafka only: a lookup client kept for the query's life
        self._unreachable_since: float | None = None
        self._last_latest: Offsets | None = None
        self._target: Offsets | None = None

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_admin"] = None  # a live client never travels to a read task
        return state

    # -- driver side ---------------------------------------------------------
    def _lookup(self) -> tuple[Offsets, Offsets]:
        """(earliest, latest) offsets now. With confluent-kafka, one admin client is kept for the
        query's life (a lookup then takes ~1-2 ms instead of a new kafka-python consumer's ~60 ms)
        and dropped after any failure; with kafka-python, a short-lived consumer per lookup."""
        if self.client != CONFLUENT:
            return _lookup_offsets(self.cfg, self.topics, self.offset_timeout)
        if self._admin is None:
            self._admin = admin_client(self.cfg)
        admin = self._admin
        try:
            return _with_deadline(
                lambda: lookup_offsets_admin(admin, self.topics, self.offset_timeout),
                self.offset_timeout + 2.0,
                "offset-lookup",
            )
        except Exception:
            self._admin = None
            raise

    def _lookup_patiently(self, what: str) -> tuple[Offsets, Offsets]:
        """Offsets from the broker, retrying for up to ``initial_offset_wait_s`` seconds."""
        deadline = time.monotonic() + self.initial_wait
        while True:
            try:
                lo, hi = self._lookup()
                self._last_latest = hi
                return lo, hi
            except Exception as e:
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"kafka source: cannot resolve {what} of {self.topics} on "
                        f"{self.cfg['bootstrap_servers']}: {e!r}"
                    ) from e
                log.warning("kafka source: broker not answering yet (%r); retrying", e)
                time.sleep(1.0)

    def initialOffset(self) -> dict:
        """Resolve ``starting_offsets`` against the broker (waits up to ``initial_offset_wait_s``)."""
        lo, hi = self._lookup_patiently("starting offsets")
        return resolve_offsets(self.starting, lo, hi, self.topics)

    def getDefaultReadLimit(self) -> ReadLimit:
        if self.max_records is not None:
            return ReadMaxRows(self.max_records)
        return ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:
        """Fix the target: the log-end offsets now (waits up to ``initial_offset_wait_s``)."""
        _, self._target = self._lookup_patiently("the AvailableNow target offsets")

    def reportLatestOffset(self) -> dict | None:
        """The log-end offsets seen by the last successful lookup (for query progress)."""
        return self._last_latest

    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
        """End offset of the next microbatch; ``start`` unchanged (no data) if the broker is down."""
        if self._target is not None:  # AvailableNow: read up to the fixed target, no broker call
            end_t: Offsets = {
                t: {p: max(int(start.get(t, {}).get(p, 0)), e) for p, e in parts.items()}
                for t, parts in self._target.items()
            }
            start_t: Offsets = {
                t: {p: int(start.get(t, {}).get(p, 0)) for p in parts} for t, parts in end_t.items()
            }
            return spread_limit(start_t, end_t, limit.max_rows) if isinstance(limit, ReadMaxRows) else end_t
        try:
            lo, hi = self._lookup()
            self._last_latest = hi
        except Exception as e:
            if self._unreachable_since is None:
                self._unreachable_since = time.monotonic()
            log.warning(
                "kafka source: broker %s unreachable for %.0fs (%r); no new data this trigger",
                ",".join(self.cfg["bootstrap_servers"]),
                time.monotonic() - self._unreachable_since,
                e,
            )
            return start
        if self._unreachable_since is not None:
            log.warning("kafka source: broker reachable again; resuming")
            self._unreachable_since = None
        end: Offsets = {}
        for topic in self.topics:
            end[topic] = {}
            known = start.get(topic, {})
            for p, latest in hi.get(topic, {}).items():
                s = int(known.get(p, lo[topic][p]))  # a new partition starts at earliest
                end[topic][p] = max(s, latest)  # never go backwards (topic truncated/recreated)
            for p, s in known.items():  # a partition the broker no longer lists: keep position
                end[topic].setdefault(p, int(s))
        start_full: Offsets = {t: {p: int(start.get(t, {}).get(p, lo[t][p])) for p in end[t]} for t in end}
        if isinstance(limit, ReadMaxRows):
            return spread_limit(start_full, end, limit.max_rows)
        return end

    def partitions(self, start: dict, end: dict) -> list[InputPartition]:
        ranges: list[KafkaPartitionRange] = []
        for topic in sorted(end):
            for p in sorted(end[topic], key=int):
                s = int(start.get(topic, {}).get(p, 0))
                e = int(end[topic][p])
                if e > s:
                    ranges.append(KafkaPartitionRange(topic, int(p), s, e))
        return list(split_ranges(ranges, self.min_partitions))

    def commit(self, end: dict) -> None:
        """Nothing to do: offsets live in Spark's checkpoint, not in a consumer group."""

    def stop(self) -> None:
        """The query stopped (Spark's streaming source runner calls this): drop the lookup client,
        so its librdkafka threads and connections end with the query, not with the process."""
        self._admin = None

    # -- executor side -------------------------------------------------------
    def read(self, partition: InputPartition) -> Iterator[Any]:
        assert isinstance(partition, KafkaPartitionRange)
        return read_range_with(self.client, self.cfg, partition, self.read_timeout)


def split_ranges(ranges: list[KafkaPartitionRange], min_partitions: int | None) -> list[KafkaPartitionRange]:
    """At least ``min_partitions`` ranges (Spark's ``minPartitions``): each Kafka partition's range
    is cut into pieces in proportion to its share of the records, so one busy partition is read
    by several tasks in parallel. Fewer records than ``min_partitions`` are never cut below one
    record per piece; None or a count already reached returns ``ranges`` unchanged."""
    if not min_partitions or len(ranges) >= min_partitions:
        return ranges
    total = sum(r.end - r.start for r in ranges)
    out: list[KafkaPartitionRange] = []
    for r in ranges:
        size = r.end - r.start
        pieces = max(1, min(size, round(size / total * min_partitions)))
        bounds = [r.start + size * i // pieces for i in range(pieces + 1)]
        pairs = zip(bounds, bounds[1:], strict=False)
        out += [KafkaPartitionRange(r.topic, r.partition, a, b) for a, b in pairs]
    return out


def resolve_offsets(
    wanted: str | Offsets, lo: Offsets, hi: Offsets, topics: list[str], default: int = EARLIEST
) -> Offsets:
    """``earliest`` | ``latest`` | ``{topic: {partition: offset}}`` (-2 earliest, -1 latest; absent
    partitions take ``default``) -> concrete offsets, clamped into each partition's [earliest, latest]."""
    out: Offsets = {}
    for topic in topics:
        out[topic] = {}
        for p in hi.get(topic, {}):
            earliest, latest = lo[topic][p], hi[topic][p]
            if wanted == "earliest":
                off = earliest
            elif wanted == "latest":
                off = latest
            else:
                assert isinstance(wanted, dict)
                w = wanted.get(topic, {}).get(p, default)
                off = earliest if w == EARLIEST else latest if w == LATEST else w
                off = min(max(off, earliest), latest)
            out[topic][p] = off
    return out


class KafkaBatchReader(DataSourceReader):
    """``spark.read.format("streamdq_kafka")``: the records between two offsets, as a batch.

    Options as for streaming, plus ``ending_offsets``: ``latest`` (default) | JSON
    ``{"t": {"0": 50}}`` (-1 latest; absent partitions end at latest). Offsets are resolved when
    Spark plans the read; one task reads one partition's range, with the chosen ``client``.
    """

    def __init__(self, options: Mapping[str, str]) -> None:
        self.stream = KafkaStreamReader(options)
        self.ending = self.stream.spec.ending_offsets

    def partitions(self) -> list[InputPartition]:
        s = self.stream
        lo, hi = s._lookup_patiently("offsets for a batch read")
        start = resolve_offsets(s.starting, lo, hi, s.topics)
        end = resolve_offsets(self.ending, lo, hi, s.topics, default=LATEST)
        # Spark wants at least one partition: an empty range reads nothing
        return s.partitions(start, end) or [KafkaPartitionRange(s.topics[0], 0, 0, 0)]

    def read(self, partition: InputPartition) -> Iterator[Any]:
        return self.stream.read(partition)


def register(spark: Any) -> None:
    """Register the ``streamdq_kafka`` format with ``spark`` (idempotent)."""
    spark.dataSource.register(KafkaDataSource)
