"""The read tasks of the Python Kafka source: which client reads a partition range, and how.

``read_range_with(client, cfg, rng)`` yields the records of offsets ``[rng.start, rng.end)`` of
one partition as ``pyarrow.RecordBatch``es in Spark's kafka schema (``arrow_schema``), with
``read_range`` (kafka-python) or ``read_range_confluent`` (confluent-kafka); both watch their
progress with ``ProgressWatch``. :mod:`streamdq.connectors.sources.kafka_datasource` (the Spark
data source: offsets, partitions) calls them; the settings come from
:mod:`streamdq.connectors.sources.kafka_options`.

Two clients can read a partition range:

* ``kafka-python`` (always installed): pure Python. Its record decoding is the wall: ~40k
  records/s per read task on the benchmark machine (bench/README.md, ``## kafka_source``).
* ``confluent-kafka`` (the ``kafka-fast`` extra: ``pip install 'streamdq[kafka-fast]'``):
  librdkafka, a C client; ~10x kafka-python's rate per read task.

The source option / config key ``client`` is ``auto`` (default: confluent-kafka when it is
importable, else kafka-python), ``kafka-python`` or ``confluent-kafka``. Both clients give the same
records, the same Arrow schema and the same offset semantics (a range ``[start, end)`` of one
partition, no consumer group, nothing committed); driver-side offset lookups always use
kafka-python.

``kafka_options`` are one dict for both clients: keys are Kafka's dotted (Java / librdkafka)
names, and kafka-python's underscore spellings are accepted too. For confluent-kafka they are
passed to librdkafka with underscores turned into dots, and kafka-python's SSL / SASL names are
renamed to librdkafka's (:data:`LIBRDKAFKA_RENAMES`).
"""

from __future__ import annotations

import atexit
import importlib.util
import logging
import os
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from streamdq.connectors.sources.librdkafka_log import librdkafka_logger

from streamdq.errors import ConfigError

log = logging.getLogger("streamdq.connectors.kafka")

WAIT_REPORT_S = 15.0  # a read task waiting for acknowledged records says so this often

CLIENTS = ("auto", "kafka-python", "confluent-kafka")
KAFKA_PYTHON, CONFLUENT = "kafka-python", "confluent-kafka"
FAST_EXTRA_HINT = "pip install 'streamdq[kafka-fast]' (or pip install confluent-kafka)"

# kafka-python setting name -> librdkafka property
LIBRDKAFKA_RENAMES = {
    "ssl_cafile": "ssl.ca.location",
    "ssl_certfile": "ssl.certificate.location",
    "ssl_keyfile": "ssl.key.location",
    "ssl_password": "ssl.key.password",
    "sasl_plain_username": "sasl.username",
    "sasl_plain_password": "sasl.password",
    "sasl_mechanism": "sasl.mechanism",
    "security_protocol": "security.protocol",
}
# kafka-python-only settings with no librdkafka meaning (dropped for confluent-kafka)
_KAFKA_PYTHON_ONLY = {"api_version", "bootstrap_timeout_ms", "consumer_timeout_ms", "auto_offset_reset"}
# librdkafka properties whose own name has an underscore
_UNDERSCORE_PROPS = {"log_level"}
# librdkafka properties the reader owns: offsets live in Spark's checkpoint
_OWNED = {"group.id", "enable.auto.commit", "enable.auto.offset.store", "enable.partition.eof"}

# Spark's timestampType: 0 CreateTime, 1 LogAppendTime; librdkafka: 1 create, 2 log append, 0 none
_TS_TYPE = {0: 0, 1: 0, 2: 1}


def confluent_available() -> bool:
    """True if the ``confluent_kafka`` module can be imported in this Python."""
    return importlib.util.find_spec("confluent_kafka") is not None


def resolve_client(name: str | None) -> str:
    """``auto``/None -> the fastest installed client; other names are returned unchanged.

    Raises ConfigError (key ``source.client``) for an unknown name or for ``confluent-kafka``
    when it is not installed.
    """
    value = (name or "auto").strip().lower()
    if value not in CLIENTS:
        raise ConfigError("source.client", f"unknown client {name!r}", f"use one of {', '.join(CLIENTS)}")
    if value == "auto":
        return CONFLUENT if confluent_available() else KAFKA_PYTHON
    if value == CONFLUENT and not confluent_available():
        raise ConfigError(
            "source.client", "client confluent-kafka is not installed", f"{FAST_EXTRA_HINT}, or use auto"
        )
    return value


def librdkafka_config(cfg: Mapping[str, Any]) -> dict[str, Any]:
    """librdkafka consumer properties from kafka-python-style settings (see ``consumer_config``)."""
    servers = cfg["bootstrap_servers"]
    out: dict[str, Any] = {
        "bootstrap.servers": ",".join(servers) if isinstance(servers, list | tuple) else str(servers),
        "client.id": str(cfg.get("client_id") or "streamdq-kafka-source"),
        "auto.offset.reset": "earliest",
        "fetch.wait.max.ms": 100,
        # a pooled consumer keeps prefetching the next records: bound that buffer (default 64 MB)
        "queued.max.messages.kbytes": 16384,
        # librdkafka's own log through Python logging (a user can silence or raise it), errors only:
        # an unreachable broker is reported by the reader's warnings, not by every reconnect
        # (librdkafka_log.py mutes the repeats)
        "logger": librdkafka_logger(),
        "log_level": 3,
    }
    for key, value in cfg.items():
        if key in ("bootstrap_servers", "client_id", "group_id", "enable_auto_commit"):
            continue
        if key in _KAFKA_PYTHON_ONLY:
            continue
        prop = key if key in _UNDERSCORE_PROPS else LIBRDKAFKA_RENAMES.get(key, key.replace("_", "."))
        if prop in _OWNED:
            continue
        out[prop] = value
    # librdkafka needs a group id even for assign(); nothing is ever committed to it
    out.update(
        {
            "group.id": "streamdq-kafka-source",
            "enable.auto.commit": False,
            "enable.auto.offset.store": False,
            "enable.partition.eof": True,
        }
    )
    return out


# --------------------------------------------------------------------------- consumer pool
POOL_MAX = 16  # consumers kept per Python worker process
POOL_IDLE_S = 120.0  # a consumer unused this long is closed on the next acquire


@dataclass
class _Pooled:
    consumer: Any
    last_used: float


class ConsumerPool:
    """confluent-kafka consumers kept across read tasks of one Python worker (Spark reuses workers).

    A consumer is keyed by its settings and one topic-partition. Reading the next microbatch's
    range then skips creating the client, connecting and the metadata round trip: the pooled
    consumer is assigned the partition at the range start (exact offset, also for a replayed
    range) and fetches from there. A consumer released to the pool is *unassigned*: an idle
    pooled consumer fetches nothing. (Kept assigned, librdkafka goes on fetching at the log end
    for as long as the consumer lives; against a broker that answers an empty fetch at once,
    e.g. the embedded test broker, every idle consumer then spins a core's fraction in its
    broker thread and the broker with it, until a stopped query's consumers starved the next
    query's Python processes of CPU: "Python worker failed to connect back".) A consumer whose
    read failed or stopped early is closed, never pooled. Idle consumers are closed after
    ``POOL_IDLE_S``; at most ``POOL_MAX`` are kept (least recently used closed first); all are
    closed at interpreter exit. A forked child never uses (or closes) its parent's consumers:
    the pool belongs to the process that filled it.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: dict[tuple, _Pooled] = {}
        self._pid = os.getpid()

    def _own(self) -> None:
        """Forget consumers inherited through fork (their threads stayed in the parent); caller holds the lock."""
        if self._pid != os.getpid():
            self._idle = {}
            self._pid = os.getpid()

    def acquire(self, conf: Mapping[str, Any], topic: str, partition: int, start: int) -> tuple[tuple, Any]:
        """(key, consumer) positioned so that its next record is ``start`` (or the first after it)."""
        import confluent_kafka as ck

        key = (tuple(sorted((k, str(v)) for k, v in conf.items())), topic, partition)
        now = time.monotonic()
        with self._lock:
            self._own()
            entry = self._idle.pop(key, None)
            stale = [k for k, e in self._idle.items() if now - e.last_used > POOL_IDLE_S]
            expired = [self._idle.pop(k) for k in stale]
        for e in expired:
            _close_quietly(e.consumer)
        consumer = ck.Consumer(dict(conf)) if entry is None else entry.consumer
        consumer.assign([ck.TopicPartition(topic, partition, start)])
        return key, consumer

    def release(self, key: tuple, consumer: Any) -> None:
        """Keep ``consumer`` for the next range of its partition, unassigned (it fetches nothing
        while idle; a consumer that cannot be unassigned is closed instead)."""
        try:
            consumer.unassign()
        except Exception as err:
            log.debug("kafka source: unassigning a consumer for the pool: %r", err)
            _close_quietly(consumer)
            return
        with self._lock:
            self._own()
            old = self._idle.pop(key, None)
            self._idle[key] = _Pooled(consumer, time.monotonic())
            evicted = []
            while len(self._idle) > POOL_MAX:
                oldest = min(self._idle, key=lambda k: self._idle[k].last_used)
                evicted.append(self._idle.pop(oldest))
        for e in ([old] if old is not None else []) + evicted:
            _close_quietly(e.consumer)

    def close_all(self) -> None:
        with self._lock:
            self._own()
            entries = list(self._idle.values())
            self._idle.clear()
        for e in entries:
            _close_quietly(e.consumer)

    def __len__(self) -> int:
        return len(self._idle)


def _close_quietly(consumer: Any) -> None:
    try:
        consumer.close()
    except Exception as e:  # a consumer of a broker that is gone: nothing to release
        log.debug("kafka source: closing a pooled consumer: %r", e)


POOL = ConsumerPool()
atexit.register(POOL.close_all)


def _clean_prefix(polled: list[Any], position: int, end: int) -> int:
    """How many leading messages of ``polled`` are records numbered ``position, position+1, ...``
    below ``end`` (the common case, checked with list passes, not a Python loop per record)."""
    if not polled:
        return 0
    errors = [i for i, m in enumerate(polled) if m.error() is not None]
    n = errors[0] if errors else len(polled)
    if n == 0:
        return 0
    first, last = polled[0].offset(), polled[n - 1].offset()
    if first != position or last >= end or last - first != n - 1:
        return 0
    return n


# librdkafka properties only a consumer understands (left out of the admin client's settings)
_CONSUMER_ONLY = {
    "group.id",
    "enable.auto.commit",
    "enable.auto.offset.store",
    "enable.partition.eof",
    "auto.offset.reset",
    "fetch.wait.max.ms",
    "fetch.min.bytes",
    "fetch.max.bytes",
    "max.partition.fetch.bytes",
    "queued.max.messages.kbytes",
    "queued.min.messages",
    "isolation.level",
}


def admin_client(cfg: Mapping[str, Any]) -> Any:
    """A confluent-kafka ``AdminClient`` with the source's connection settings (offset lookups)."""
    from confluent_kafka.admin import AdminClient

    conf = {k: v for k, v in librdkafka_config(cfg).items() if k not in _CONSUMER_ONLY}
    return AdminClient(conf)


def lookup_offsets_admin(admin: Any, topics: list[str], timeout: float) -> tuple[dict, dict]:
    """(earliest, latest) offsets ``{topic: {"partition": offset}}`` of every partition of
    ``topics``: one metadata request and two batched ListOffsets requests. A topic the broker does
    not know (yet) has no partitions. Raises on a timeout or a broker error."""
    import confluent_kafka as ck
    from confluent_kafka.admin import OffsetSpec

    md = admin.list_topics(timeout=timeout)
    lo: dict[str, dict[str, int]] = {t: {} for t in topics}
    hi: dict[str, dict[str, int]] = {t: {} for t in topics}
    tps = []
    for topic in topics:
        meta = md.topics.get(topic)
        if meta is None or meta.error is not None:
            continue
        tps += [ck.TopicPartition(topic, p) for p in sorted(meta.partitions)]
    if not tps:
        return lo, hi
    early = admin.list_offsets({tp: OffsetSpec.earliest() for tp in tps}, request_timeout=timeout)
    late = admin.list_offsets({tp: OffsetSpec.latest() for tp in tps}, request_timeout=timeout)
    for tp in tps:
        lo[tp.topic][str(tp.partition)] = int(early[tp].result(timeout=timeout).offset)
        hi[tp.topic][str(tp.partition)] = int(late[tp].result(timeout=timeout).offset)
    return lo, hi


def messages_to_batch(
    messages: list[Any], topic: str, partition: int, schema: Any, offsets: list[int] | None = None
) -> Any:
    """confluent-kafka ``Message`` list (one partition) -> one ``pyarrow.RecordBatch`` in ``schema``."""
    import pyarrow as pa

    if offsets is None:
        offsets = [m.offset() for m in messages]

    n = len(messages)
    stamps = [m.timestamp() for m in messages]
    ts = pa.array([s[1] if s[0] else None for s in stamps], type=pa.int64())
    return pa.RecordBatch.from_arrays(
        [
            pa.array([m.key() for m in messages], type=pa.binary()),
            pa.array([m.value() for m in messages], type=pa.binary()),
            pa.repeat(pa.scalar(topic, pa.string()), n),
            pa.repeat(pa.scalar(partition, pa.int32()), n),
            pa.array(offsets, type=pa.int64()),
            ts.cast(pa.timestamp("ms", tz="UTC")).cast(schema.field("timestamp").type),
            pa.array([_TS_TYPE.get(s[0], 0) for s in stamps], type=pa.int32()),
        ],
        schema=schema,
    )


def read_range_confluent(cfg: Mapping[str, Any], rng: Any, read_timeout: float = 300.0) -> Iterator[Any]:
    """``read_range`` with confluent-kafka: ``pyarrow.RecordBatch``es for offsets ``[rng.start, rng.end)``.

    Same contract as :func:`read_range`: assign +
    seek, no group, nothing committed; waits for acknowledged records (e.g. across a broker
    restart) and fails only after ``read_timeout`` seconds without progress, warning every
    ``WAIT_REPORT_S``; records before the range start that retention removed are skipped (the
    read starts at the earliest record); offsets missing inside or at the end of the range
    (compaction, transaction markers) are skipped: reaching the end of the log at or past
    ``rng.end`` ends the read.
    """
    import confluent_kafka as ck

    schema = arrow_schema()
    watch = ProgressWatch(rng, read_timeout)
    key, consumer = POOL.acquire(librdkafka_config(cfg), rng.topic, rng.partition, rng.start)
    healthy = True  # False once the last message polled was an error other than end-of-partition
    done = False
    try:
        position = rng.start
        while position < rng.end:
            polled = consumer.consume(num_messages=min(50000, max(1, rng.end - position)), timeout=0.5)
            if polled:
                last_err = polled[-1].error()
                healthy = last_err is None or last_err.code() == ck.KafkaError._PARTITION_EOF
            n_clean = _clean_prefix(polled, position, rng.end)
            keep: list[Any] = polled[:n_clean]
            offsets = list(range(position, position + n_clean))
            position += n_clean
            progressed = False
            for m in polled[n_clean:]:  # errors, EOF, gaps, out-of-range offsets: one by one
                err = m.error()
                if err is not None:
                    if err.code() == ck.KafkaError._PARTITION_EOF:
                        # the fetcher reached the log end: offsets below it are read or absent
                        eof = int(m.offset() or 0)
                        if eof > position:
                            position = min(eof, rng.end)
                            progressed = True
                    else:
                        log.warning("kafka source: while reading %s: %s", rng, err)
                    continue
                off = int(m.offset() or 0)
                if off >= rng.end:  # a gap up to the range end
                    position = rng.end
                    progressed = True
                    break
                if off < position:
                    continue
                if off > position and position == rng.start:
                    log.warning("kafka source: %s starts at offset %d (records before it are gone)", rng, off)
                keep.append(m)
                offsets.append(off)
                position = off + 1
            if keep:
                yield messages_to_batch(keep, rng.topic, rng.partition, schema, offsets)
                progressed = True
            if progressed:
                watch.progressed()
                continue
            watch.waiting(position)
            watch.check(position)
        done = True
    finally:
        if done and healthy:
            POOL.release(key, consumer)
        else:  # failed, or the task stopped reading early: never reuse
            _close_quietly(consumer)


# --------------------------------------------------------------------------- the read tasks' shared parts
def arrow_schema() -> Any:
    """The Arrow schema Spark expects for :data:`KAFKA_SCHEMA` batches (UTC timestamps)."""
    from pyspark.sql.pandas.types import to_arrow_schema
    from pyspark.sql.types import (
        BinaryType,
        IntegerType,
        LongType,
        StringType,
        StructField,
        StructType,
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

    def __init__(self, rng: Any, read_timeout: float) -> None:
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


def read_range(cfg: Mapping[str, Any], rng: Any, read_timeout: float = 300.0) -> Iterator[Any]:
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
    client: str, cfg: Mapping[str, Any], rng: Any, read_timeout: float = 300.0
) -> Iterator[Any]:
    """``read_range`` with the named client (``kafka-python`` | ``confluent-kafka``; see kafka_clients)."""
    if client == CONFLUENT:
        return read_range_confluent(cfg, rng, read_timeout)
    return read_range(cfg, rng, read_timeout)
