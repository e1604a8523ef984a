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
Spark's ``startingOffsets`` JSON). Options (all strings, as Spark hands them over):

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
  range the broker had already acknowledged (e.g. while the broker restarts) before failing.

Unreachable broker: ``latestOffset`` logs a warning and returns ``start`` (no new data); the
query keeps triggering empty and resumes when the broker answers again. An empty topic yields
empty microbatches. Partitions added while running start at their earliest offset. If the
broker's earliest offset moved past a range start (retention), the read starts at the earliest
available record and logs the data loss.
"""

from __future__ import annotations

import concurrent.futures
import json
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
    admin_client,
    lookup_offsets_admin,
    read_range_confluent,
    resolve_client,
)

log = logging.getLogger("streamdq.connectors.kafka")

FORMAT_NAME = "streamdq_kafka"
WAIT_REPORT_S = 15.0  # a read task waiting for acknowledged records says so this often
KAFKA_SCHEMA = "key BINARY, value BINARY, topic STRING, partition INT, offset BIGINT, timestamp TIMESTAMP, timestampType INT"
EARLIEST, LATEST = -2, -1

Offsets = dict[str, dict[str, int]]
T = TypeVar("T")


class BrokerUnreachable(RuntimeError):
    """The broker did not answer an offset lookup in time."""


# --------------------------------------------------------------------------- option parsing
def consumer_config(options: Mapping[str, str]) -> dict[str, Any]:
    """kafka-python ``KafkaConsumer`` settings from the source options (no group, no commit)."""
    servers = options.get("bootstrap_servers") or options.get("kafka.bootstrap.servers")
    if not servers:
        raise ValueError("kafka source: option 'bootstrap_servers' is required (e.g. 127.0.0.1:9092)")
    cfg: dict[str, Any] = {
        "bootstrap_servers": [s.strip() for s in str(servers).split(",") if s.strip()],
        "enable_auto_commit": False,
        "group_id": None,
        "client_id": "streamdq-kafka-source",
        "auto_offset_reset": "earliest",
    }
    extra = options.get("kafka_options")
    if extra:
        try:
            parsed = json.loads(extra)
        except json.JSONDecodeError as e:
            raise ValueError(f"kafka source: option 'kafka_options' is not a JSON object: {e}") from e
        if not isinstance(parsed, dict):
            raise ValueError("kafka source: option 'kafka_options' must be a JSON object")
        for k, v in parsed.items():
            key = str(k).removeprefix("kafka.").replace(".", "_")
            if key in ("group_id", "enable_auto_commit"):
                continue  # offsets live in Spark's checkpoint, never in a consumer group
            cfg[key] = v
    return cfg


def parse_topics(options: Mapping[str, str]) -> list[str]:
    raw = options.get("topic") or options.get("subscribe") or ""
    topics = [t.strip() for t in str(raw).split(",") if t.strip()]
    if not topics:
        raise ValueError("kafka source: option 'topic' is required")
    return topics


def parse_starting_offsets(raw: str | None) -> str | Offsets:
    """``"earliest"``, ``"latest"`` or a validated ``{topic: {partition: offset}}`` dict."""
    text = (raw or "earliest").strip()
    if text.lower() in ("earliest", "latest"):
        return text.lower()
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(
            f"kafka source: starting_offsets {text!r} is neither earliest, latest nor JSON "
            f'like {{"topic": {{"0": 12}}}}: {e}'
        ) from e
    if not isinstance(parsed, dict) or not all(isinstance(v, dict) for v in parsed.values()):
        raise ValueError(
            f'kafka source: starting_offsets JSON must look like {{"topic": {{"0": 12}}}}, got {text!r}'
        )
    out: Offsets = {}
    for topic, parts in parsed.items():
        out[str(topic)] = {}
        for p, off in parts.items():
            try:
                out[str(topic)][str(int(p))] = int(off)
            except (TypeError, ValueError) as e:
                raise ValueError(
                    f"kafka source: starting_offsets[{topic!r}][{p!r}] must map a partition number "
                    f"to an offset (or -2 earliest, -1 latest), got {off!r}"
                ) from e
    return out


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
        self.topics = parse_topics(self.options)
        self.cfg = consumer_config(self.options)
        self.starting = parse_starting_offsets(self.options.get("starting_offsets"))
        max_records = self.options.get("max_records_per_trigger")
        self.max_records = int(max_records) if max_records not in (None, "", "None") else None
        if self.max_records is not None and self.max_records <= 0:
            raise ValueError(f"kafka source: max_records_per_trigger must be > 0, got {self.max_records}")
        self.client = resolve_client(self.options.get("client"))
        min_parts = self.options.get("min_partitions")
        self.min_partitions = int(min_parts) if min_parts not in (None, "", "None") else None
        self.offset_timeout = float(self.options.get("offset_timeout_s", "10"))
        self.read_timeout = float(self.options.get("read_timeout_s", "300"))
        self.initial_wait = float(self.options.get("initial_offset_wait_s", "60"))
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
        self.ending = parse_starting_offsets(options.get("ending_offsets") or "latest")
        if self.ending == "earliest":
            raise ValueError("kafka source: ending_offsets must be latest or JSON, not earliest")

    def partitions(self) -> list[InputPartition]:
        s = self.stream
        lo, hi = s._lookup_patiently("offsets for a batch read")
        start = resolve_offsets(s.starting, lo, hi, s.topics)
        end = resolve_offsets(self.ending, lo, hi, s.topics, default=LATEST)
        # Spark wants at least one partition: an empty range reads nothing
        return s.partitions(start, end) or [KafkaPartitionRange(s.topics[0], 0, 0, 0)]

    def read(self, partition: InputPartition) -> Iterator[Any]:
        return self.stream.read(partition)


def arrow_schema() -> Any:
    """The Arrow schema Spark expects for :data:`KAFKA_SCHEMA` batches (UTC timestamps)."""
    from pyspark.sql.pandas.types import to_arrow_schema
    from pyspark.sql.types import (
        BinaryType,
        IntegerType,
        LongType,
        StringType,
        StructField,
        TimestampType,
    )

    spark_schema = StructType(
        [
            StructField("key", BinaryType()),
            StructField("value", BinaryType()),
            StructField("topic", StringType()),
            StructField("partition", IntegerType()),
            StructField("offset", LongType()),
            StructField("timestamp", TimestampType()),
            StructField("timestampType", IntegerType()),
        ]
    )
    return to_arrow_schema(spark_schema, timezone="UTC")


def records_to_batch(records: list[Any], schema: Any) -> Any:
    """kafka-python ``ConsumerRecord`` list -> one ``pyarrow.RecordBatch`` in ``schema``."""
    import pyarrow as pa

    ts = pa.array([r.timestamp for r in records], type=pa.int64())
    return pa.RecordBatch.from_arrays(
        [
            pa.array([r.key for r in records], type=pa.binary()),
            pa.array([r.value for r in records], type=pa.binary()),
            pa.array([r.topic for r in records], type=pa.string()),
            pa.array([r.partition for r in records], type=pa.int32()),
            pa.array([r.offset for r in records], type=pa.int64()),
            ts.cast(pa.timestamp("ms", tz="UTC")).cast(schema.field("timestamp").type),
            pa.array([int(r.timestamp_type or 0) for r in records], type=pa.int32()),
        ],
        schema=schema,
    )


class ProgressWatch:
    """The read task's watchdog over one offset range, shared by both clients' readers.

    ``progressed()`` after records or gaps moved the position; ``waiting(position)`` after a
    poll that moved nothing (logs a warning every ``WAIT_REPORT_S`` seconds of such a wait: a
    silent stall looks like a hung job); ``check(position)`` raises once ``read_timeout``
    seconds passed without progress (the deadline starts when the watch is made)."""

    def __init__(self, rng: KafkaPartitionRange, read_timeout: float) -> None:
        self.rng = rng
        self.read_timeout = read_timeout
        self.deadline = time.monotonic() + read_timeout
        self._waiting_since: float | None = None
        self._next_report = 0.0

    def progressed(self) -> None:
        self.deadline = time.monotonic() + self.read_timeout
        self._waiting_since = None

    def waiting(self, position: int) -> None:
        now = time.monotonic()
        if self._waiting_since is None:
            self._waiting_since, self._next_report = now, now + WAIT_REPORT_S
        elif now >= self._next_report:
            log.warning(
                "kafka source: reading %s has waited %.0fs at offset %d for records the broker "
                "acknowledged (gives up after %.0fs without progress)",
                self.rng,
                now - self._waiting_since,
                position,
                self.read_timeout,
            )
            self._next_report = now + WAIT_REPORT_S

    def check(self, position: int) -> None:
        if time.monotonic() > self.deadline:
            raise RuntimeError(
                f"kafka source: no progress reading {self.rng} for {self.read_timeout}s (stuck at offset {position})"
            )


def read_range(cfg: dict[str, Any], rng: KafkaPartitionRange, read_timeout: float = 300.0) -> Iterator[Any]:
    """Yield ``pyarrow.RecordBatch``es (Spark kafka schema) for offsets ``[rng.start, rng.end)``.

    Opens its own consumer (assign + seek, no group) and closes it at the end. Waits for records
    the broker already acknowledged, e.g. across a broker restart, failing only after
    ``read_timeout`` seconds without progress, and logging a warning every ``WAIT_REPORT_S`` seconds
    of such a wait (a silent stall looks like a hung job). Offsets missing inside the range (compaction,
    transaction markers) are skipped; records at or after ``rng.end`` are never returned.
    """
    from kafka import KafkaConsumer, TopicPartition

    schema = arrow_schema()
    tp = TopicPartition(rng.topic, rng.partition)
    watch = ProgressWatch(rng, read_timeout)
    consumer = None
    try:
        while consumer is None:
            try:
                consumer = KafkaConsumer(**{"bootstrap_timeout_ms": 10000, **cfg})
            except Exception as e:
                if time.monotonic() > watch.deadline:
                    raise RuntimeError(f"kafka source: cannot connect to read {rng}: {e!r}") from e
                log.warning("kafka source: cannot connect to read %s (%r); retrying", rng, e)
                time.sleep(1.0)
        consumer.assign([tp])
        consumer.seek(tp, rng.start)
        position = rng.start
        while position < rng.end:
            polled = consumer.poll(timeout_ms=500, max_records=min(10000, rng.end - position))
            records = polled.get(tp, [])
            keep = []
            for r in records:
                if r.offset >= rng.end:  # a gap up to the range end
                    position = rng.end
                    break
                if r.offset < position:
                    continue
                if r.offset > position and position == rng.start:
                    log.warning(
                        "kafka source: %s starts at offset %d (records before it are gone)", rng, r.offset
                    )
                keep.append(r)
                position = r.offset + 1
            if keep:
                yield records_to_batch(keep, schema)
            if records:
                watch.progressed()
                continue
            watch.waiting(position)
            # no records: gaps (compaction, transaction markers) advance the position silently
            try:
                position = max(position, int(consumer.position(tp, timeout_ms=2000) or position))
            except Exception as e:
                log.warning("kafka source: waiting for broker while reading %s (%r)", rng, e)
            watch.check(position)
    finally:
        if consumer is not None:
            consumer.close()


def read_range_with(
    client: str, cfg: dict[str, Any], rng: KafkaPartitionRange, read_timeout: float = 300.0
) -> Iterator[Any]:
    """``read_range`` with the named client (``kafka-python`` | ``confluent-kafka``; see kafka_clients)."""
    if client == CONFLUENT:
        return read_range_confluent(cfg, rng, read_timeout)
    return read_range(cfg, rng, read_timeout)


def register(spark: Any) -> None:
    """Register the ``streamdq_kafka`` format with ``spark`` (idempotent)."""
    spark.dataSource.register(KafkaDataSource)
