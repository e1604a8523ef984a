"""The Kafka source's settings, parsed once into a typed, frozen ``KafkaSpec``.

Two doors lead in, one parser behind them:

* ``KafkaSpec.from_source(mapping)``: the run config's ``source`` section (YAML types: ints,
  lists, mappings), checked before Spark starts;
* ``KafkaSpec.from_options(options)``: the options of the ``streamdq_kafka`` data source (all
  strings, as Spark hands them to :mod:`streamdq.connectors.sources.kafka_datasource`).

``spec.to_options()`` writes the data source options back (``from_options(spec.to_options())`` is
the same spec, with the client resolved and ``implementation`` ``python``),
``spec.native_options()`` the options of Spark's own ``kafka`` format, ``spec.consumer_config()``
the kafka-python consumer settings. Every mistake is a ``ConfigError(key, problem, fix)`` whose
key is ``source.<key>``.

Keys (a source mapping uses them as they are; the data source takes them as strings, mappings as
JSON): ``bootstrap_servers`` and ``topic`` (required; a list, or one comma-separated string),
``starting_offsets`` (``earliest`` default | ``latest`` | ``{"topic": {"0": 12}}`` with ``-2``
earliest and ``-1`` latest; partitions absent from it start at earliest), ``ending_offsets``
(batch reads: ``latest`` default | the same JSON form), ``max_records_per_trigger`` and
``min_partitions`` (positive integers), ``kafka_options`` (consumer settings, Kafka's dotted or
kafka-python's underscore names), ``implementation`` (``auto`` | ``native`` | ``python``),
``client`` (``auto`` | ``kafka-python`` | ``confluent-kafka``), ``offset_timeout_s`` (10),
``read_timeout_s`` (300) and ``initial_offset_wait_s`` (60), in seconds.

>>> s = KafkaSpec.from_source({"bootstrap_servers": "h1:9092,h2:9092", "topic": ["a", "b"],
...                            "starting_offsets": {"a": {0: 5}}, "max_records_per_trigger": 100})
>>> s.bootstrap_servers, s.topics, s.starting_offsets
(('h1:9092', 'h2:9092'), ('a', 'b'), {'a': {'0': 5}})
>>> KafkaSpec.from_options({**s.to_options(), "client": "kafka-python"}).max_records_per_trigger
100
>>> try:
...     KafkaSpec.from_source({"bootstrap_servers": "h:9092", "topic": "t", "min_partitions": 0})
... except ConfigError as e:
...     print(e.key, "|", e.problem, "|", e.fix)
source.min_partitions | must be a positive integer, got 0 | e.g. min_partitions: 4
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from streamdq.connectors.sources.kafka_clients import (
    CLIENTS,
    CONFLUENT,
    FAST_EXTRA_HINT,
    confluent_available,
    resolve_client,
)

from streamdq.config_schema import Check, Key, Table, custom
from streamdq.errors import ConfigError, ConfigErrors

Offsets = dict[str, dict[str, int]]
EARLIEST, LATEST = -2, -1
IMPLEMENTATIONS = ("auto", "native", "python")
OFFSETS_FIX = 'use earliest, latest or JSON like {"orders": {"0": 12}} (-2 earliest, -1 latest)'
# kafka-python settings the source owns: offsets live in Spark's checkpoint, never in a group
_OWNED = ("group_id", "enable_auto_commit")
_SECONDS = {"offset_timeout_s": 10.0, "read_timeout_s": 300.0, "initial_offset_wait_s": 60.0}


def _key(name: str) -> str:
    return f"source.{name}"


def parse_offsets(value: Any, name: str = "starting_offsets") -> str | Offsets:
    """``"earliest"``, ``"latest"`` or ``{topic: {partition: offset}}`` (partition keys as strings)
    from a word, a JSON string or a mapping; None is ``earliest``. ConfigError names ``source.<name>``.

    >>> parse_offsets(" LATEST "), parse_offsets('{"t": {"0": 3, "1": -2}}')
    ('latest', {'t': {'0': 3, '1': -2}})
    """
    if value is None:
        return "earliest"
    parsed: Any = value
    if isinstance(value, str):
        text = value.strip()
        if text.lower() in ("earliest", "latest"):
            return text.lower()
        try:
            parsed = json.loads(text)
        except json.JSONDecodeError:
            raise ConfigError(_key(name), f"unknown value {text!r}", OFFSETS_FIX) from None
    if not isinstance(parsed, Mapping) or not all(isinstance(v, Mapping) for v in parsed.values()):
        raise ConfigError(
            _key(name), f"expected earliest, latest or a mapping of topics, got {value!r}", OFFSETS_FIX
        )
    out: Offsets = {}
    for topic, parts in parsed.items():
        out[str(topic)] = {}
        for p, off in parts.items():
            try:
                if isinstance(off, bool) or isinstance(p, bool):
                    raise TypeError
                out[str(topic)][str(int(p))] = int(off)
            except (TypeError, ValueError):
                raise ConfigError(
                    _key(name),
                    f"[{topic!r}][{p!r}] must map a partition number to an offset, got {off!r}",
                    OFFSETS_FIX,
                ) from None
    return out


def _text_list(value: Any, name: str, example: str) -> tuple[str, ...]:
    items = value if isinstance(value, list | tuple) else str(value or "").split(",")
    out = tuple(str(v).strip() for v in items if str(v).strip())
    if not out:
        raise ConfigError(_key(name), "is required for a kafka source", f"set {_key(name)}, e.g. {example}")
    return out


def _positive_int(value: Any, name: str, *, text: bool) -> int | None:
    """None when unset; from a string too when ``text`` (data source options)."""
    if value is None or (text and value in ("", "None")):
        return None
    number = value
    if text and isinstance(value, str):
        try:
            number = int(value)
        except ValueError:
            number = value
    if isinstance(number, bool) or not isinstance(number, int) or number <= 0:
        raise ConfigError(_key(name), f"must be a positive integer, got {value!r}", f"e.g. {name}: 4")
    return number


def _seconds(value: Any, name: str) -> float:
    if value is None or value == "":
        return _SECONDS[name]
    try:
        number = float(value) if not isinstance(value, bool) else math.nan
    except (TypeError, ValueError):
        number = math.nan
    if not number > 0 or math.isinf(number):
        raise ConfigError(
            _key(name),
            f"must be a positive number of seconds, got {value!r}",
            f"e.g. {name}: {_SECONDS[name]:g}",
        )
    return number


def _kafka_options(value: Any) -> dict[str, Any]:
    """Consumer settings from a mapping or a JSON object string."""
    if value is None or value == "":
        return {}
    parsed = value
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError as e:
            raise ConfigError(
                _key("kafka_options"), f"is not a JSON object: {e}", 'e.g. {"security.protocol": "SSL"}'
            ) from None
    if not isinstance(parsed, Mapping):
        raise ConfigError(
            _key("kafka_options"),
            f"must be a mapping, got {type(parsed).__name__}",
            "e.g. kafka_options: {security.protocol: SSL}",
        )
    return {str(k): v for k, v in parsed.items()}


def consumer_settings(bootstrap_servers: tuple[str, ...], kafka_options: Mapping[str, Any]) -> dict[str, Any]:
    """kafka-python ``KafkaConsumer`` settings: no group, nothing committed; ``kafka_options``
    keys may be dotted (``security.protocol``, ``kafka.client.id``) or underscored."""
    cfg: dict[str, Any] = {
        "bootstrap_servers": list(bootstrap_servers),
        "enable_auto_commit": False,
        "group_id": None,
        "client_id": "streamdq-kafka-source",
        "auto_offset_reset": "earliest",
    }
    for k, v in kafka_options.items():
        key = str(k).removeprefix("kafka.").replace(".", "_")
        if key not in _OWNED:
            cfg[key] = v
    return cfg


def consumer_config(options: Mapping[str, Any]) -> dict[str, Any]:
    """kafka-python settings from the connection options alone (``bootstrap_servers``, or Spark's
    ``kafka.bootstrap.servers``, and ``kafka_options``): for callers that read a range without a
    whole spec (tests, benchmarks)."""
    servers = options.get("bootstrap_servers") or options.get("kafka.bootstrap.servers")
    return consumer_settings(
        _text_list(servers, "bootstrap_servers", "127.0.0.1:9092"),
        _kafka_options(options.get("kafka_options")),
    )


def _at(parse: Any, kind: str) -> Check:
    """A ``config_schema`` check from one of the parsers above: ``parse(value)`` raising
    ConfigError naming ``source.<key>``; the error names the check's own path instead (so a
    source under another name, ``sources[0].topic``, is named right)."""

    def check(path: str, value: Any) -> Any:
        try:
            return parse(value)
        except ConfigError as exc:
            raise ConfigError(path, exc.problem, exc.fix) from None

    return custom(check, kind)


def _implementation(value: Any) -> str:
    if value not in IMPLEMENTATIONS:
        raise ConfigError(_key("implementation"), f"unknown value {value!r}", "use auto, native or python")
    return str(value)


def _client(value: Any) -> str:
    if not isinstance(value, str) or value not in CLIENTS:
        raise ConfigError(
            _key("client"), f"unknown value {value!r}", "use auto, kafka-python or confluent-kafka"
        )
    if value == CONFLUENT and not confluent_available():
        raise ConfigError(
            _key("client"), "confluent-kafka is not installed", f"{FAST_EXTRA_HINT}, or use auto"
        )
    return value


KAFKA_KEYS: tuple[Key, ...] = (
    Key(
        "bootstrap_servers",
        _at(
            lambda v: _text_list(v, "bootstrap_servers", "127.0.0.1:9092"), "host:port list | comma-separated"
        ),
        shown="required",
        doc="the brokers (a list, or one comma-separated string)",
    ),
    Key(
        "topic",
        _at(lambda v: _text_list(v, "topic", "orders"), "topic list | comma-separated"),
        shown="required",
        doc="the topic(s) to read",
    ),
    Key(
        "starting_offsets",
        _at(parse_offsets, "earliest | latest | {topic: {partition: offset}}"),
        default="earliest",
        doc="where a new query starts (-2 earliest, -1 latest per partition)",
    ),
    Key(
        "max_records_per_trigger",
        _at(lambda v: _positive_int(v, "max_records_per_trigger", text=False), "integer >= 1"),
        doc="at most this many records per microbatch",
    ),
    Key(
        "min_partitions",
        _at(lambda v: _positive_int(v, "min_partitions", text=False), "integer >= 1"),
        doc="at least this many read tasks per microbatch",
    ),
    Key(
        "kafka_options",
        _at(_kafka_options, "mapping"),
        default={},
        shown="{}",
        doc="consumer settings (Kafka's dotted or kafka-python's underscore names)",
    ),
    Key(
        "implementation",
        _at(_implementation, " | ".join(IMPLEMENTATIONS)),
        default="auto",
        doc="Spark's native kafka source, the Python one, or auto (native when its jar is there)",
    ),
    Key(
        "client",
        _at(_client, " | ".join(("auto", *sorted(c for c in CLIENTS if c != "auto")))),
        default="auto",
        doc="the Python source's client (auto: confluent-kafka when installed)",
    ),
    *(
        Key(
            name,
            _at(lambda v, name=name: _seconds(v, name), "seconds > 0"),
            default=default,
            doc=doc,
        )
        for name, default, doc in (
            ("offset_timeout_s", _SECONDS["offset_timeout_s"], "a broker offset look-up's timeout"),
            ("read_timeout_s", _SECONDS["read_timeout_s"], "a read task's timeout"),
            (
                "initial_offset_wait_s",
                _SECONDS["initial_offset_wait_s"],
                "how long a new query waits for the broker",
            ),
        )
    ),
)
"""The Kafka keys of a source mapping, as ``config_schema`` rows: the kafka source's table
(``connectors/sources/spec.py``) holds them beside the payload keys; ``KafkaSpec.from_source``
parses with them alone."""
KAFKA_TABLE = Table("kafka", KAFKA_KEYS, what="a kafka source", known_label="allowed keys")


@dataclass(frozen=True)
class KafkaSpec:
    """A validated Kafka source (see the module docstring for each key). Picklable; compared, not
    hashed (``kafka_options`` is a dict)."""

    bootstrap_servers: tuple[str, ...]
    topics: tuple[str, ...]
    starting_offsets: str | Offsets = "earliest"
    ending_offsets: str | Offsets = "latest"
    max_records_per_trigger: int | None = None
    min_partitions: int | None = None
    kafka_options: dict[str, Any] = field(default_factory=dict)
    implementation: str = "auto"
    client: str = "auto"
    offset_timeout_s: float = _SECONDS["offset_timeout_s"]
    read_timeout_s: float = _SECONDS["read_timeout_s"]
    initial_offset_wait_s: float = _SECONDS["initial_offset_wait_s"]

    @classmethod
    def from_source(cls, source: Mapping[str, Any], where: str = "source") -> KafkaSpec:
        """From a ``source`` mapping (keys other than ``KAFKA_KEYS``, such as ``format``, are
        ignored), parsed by ``KAFKA_TABLE``: every mistake at once, each naming ``<where>.<key>``.
        The run config parses its source once (``connectors.sources.spec.parse_source_spec``) and
        keeps the spec; this is the door for callers holding a bare mapping (batch reads, benches),
        which may also give a batch read's ``ending_offsets``."""
        names = KAFKA_TABLE.names()
        spec = cls.from_parsed(
            KAFKA_TABLE.parse({k: v for k, v in source.items() if k in names}, where), where
        )
        ending = source.get("ending_offsets")
        return spec if ending is None else spec.with_ending(ending)

    @staticmethod
    def missing(values: Mapping[str, Any], where: str = "source") -> list[ConfigError]:
        """``is required for a kafka source`` for ``bootstrap_servers`` and ``topic`` when unset."""
        return [
            ConfigError(
                f"{where}.{key}", "is required for a kafka source", f"set {where}.{key}, e.g. {example}"
            )
            for key, example in (("bootstrap_servers", "127.0.0.1:9092"), ("topic", "orders"))
            if not values.get(key)
        ]

    @classmethod
    def from_parsed(cls, values: Mapping[str, Any], where: str = "source") -> KafkaSpec:
        """From ``KAFKA_KEYS`` already parsed (each value checked, defaults filled in); the two
        required keys are checked here, so a missing one says ``is required for a kafka source``."""
        missing = cls.missing(values, where)
        if missing:
            raise missing[0] if len(missing) == 1 else ConfigErrors(missing)
        return cls(
            bootstrap_servers=tuple(values["bootstrap_servers"]),
            topics=tuple(values["topic"]),
            starting_offsets=values.get("starting_offsets") or "earliest",
            max_records_per_trigger=values.get("max_records_per_trigger"),
            min_partitions=values.get("min_partitions"),
            kafka_options=dict(values.get("kafka_options") or {}),
            implementation=values.get("implementation") or "auto",
            client=values.get("client") or "auto",
            offset_timeout_s=float(values.get("offset_timeout_s") or _SECONDS["offset_timeout_s"]),
            read_timeout_s=float(values.get("read_timeout_s") or _SECONDS["read_timeout_s"]),
            initial_offset_wait_s=float(
                values.get("initial_offset_wait_s") or _SECONDS["initial_offset_wait_s"]
            ),
        )

    @classmethod
    def from_options(cls, options: Mapping[str, Any]) -> KafkaSpec:
        """From the ``streamdq_kafka`` data source options (strings); ``client`` is resolved here
        (``auto`` becomes the installed client), so every read task uses the same one. Spark's
        own spellings ``kafka.bootstrap.servers`` and ``subscribe`` are accepted too."""
        merged = dict(options)
        merged.setdefault("bootstrap_servers", options.get("kafka.bootstrap.servers"))
        if not merged.get("topic"):
            merged["topic"] = options.get("subscribe")
        client = resolve_client(options.get("client"))
        return cls._build(merged, text=True, implementation="python", client=client)

    @classmethod
    def _build(cls, src: Mapping[str, Any], *, text: bool, implementation: str, client: str) -> KafkaSpec:
        ending = parse_offsets(src.get("ending_offsets") or "latest", "ending_offsets")
        if ending == "earliest":
            raise ConfigError(
                _key("ending_offsets"),
                "cannot be earliest (nothing would be read)",
                "use latest or JSON offsets",
            )
        return cls(
            bootstrap_servers=_text_list(src.get("bootstrap_servers"), "bootstrap_servers", "127.0.0.1:9092"),
            topics=_text_list(src.get("topic"), "topic", "orders"),
            starting_offsets=parse_offsets(src.get("starting_offsets")),
            ending_offsets=ending,
            max_records_per_trigger=_positive_int(
                src.get("max_records_per_trigger"), "max_records_per_trigger", text=text
            ),
            min_partitions=_positive_int(src.get("min_partitions"), "min_partitions", text=text),
            kafka_options=_kafka_options(src.get("kafka_options")),
            implementation=implementation,
            client=client,
            **{name: _seconds(src.get(name), name) for name in _SECONDS},
        )

    # -- views -----------------------------------------------------------------------
    @property
    def servers_text(self) -> str:
        return ",".join(self.bootstrap_servers)

    @property
    def topic_text(self) -> str:
        return ",".join(self.topics)

    def with_ending(self, ending: Any) -> KafkaSpec:
        """The same spec reading up to ``ending`` (None: latest) in a batch read."""
        parsed = parse_offsets("latest" if ending is None else ending, "ending_offsets")
        if parsed == "earliest":
            raise ConfigError(
                _key("ending_offsets"),
                "cannot be earliest (nothing would be read)",
                "use latest or JSON offsets",
            )
        return replace(self, ending_offsets=parsed)

    def to_options(self) -> dict[str, str]:
        """The ``streamdq_kafka`` data source options (strings; the client resolved on this side)."""
        opts = {
            "bootstrap_servers": self.servers_text,
            "topic": self.topic_text,
            "starting_offsets": _offsets_text(self.starting_offsets),
            "ending_offsets": _offsets_text(self.ending_offsets),
            "client": resolve_client(self.client),
        }
        if self.max_records_per_trigger is not None:
            opts["max_records_per_trigger"] = str(self.max_records_per_trigger)
        if self.min_partitions is not None:
            opts["min_partitions"] = str(self.min_partitions)
        if self.kafka_options:
            opts["kafka_options"] = json.dumps(self.kafka_options)
        for name in _SECONDS:
            opts[name] = repr(getattr(self, name))
        return opts

    def native_options(self) -> dict[str, str]:
        """The options of Spark's native ``kafka`` format (``kafka.``-prefixed consumer settings)."""
        opts = {
            "kafka.bootstrap.servers": self.servers_text,
            "subscribe": self.topic_text,
            "startingOffsets": _offsets_text(self.starting_offsets),
            "failOnDataLoss": "false",
        }
        if self.max_records_per_trigger is not None:
            opts["maxOffsetsPerTrigger"] = str(self.max_records_per_trigger)
        if self.min_partitions is not None:
            opts["minPartitions"] = str(self.min_partitions)
        for k, v in self.kafka_options.items():
            opts[k if k.startswith("kafka.") else f"kafka.{k}"] = str(v)
        return opts

    def consumer_config(self) -> dict[str, Any]:
        """kafka-python ``KafkaConsumer`` settings (no group, nothing committed)."""
        return consumer_settings(self.bootstrap_servers, self.kafka_options)


def _offsets_text(offsets: str | Offsets) -> str:
    return offsets if isinstance(offsets, str) else json.dumps(offsets, sort_keys=True)
