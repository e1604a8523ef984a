"""One parser for the Kafka source's settings (connectors/sources/kafka_options.py): the run config's
``source`` mapping and the ``streamdq_kafka`` data source options become the same typed, frozen
``KafkaSpec``, and every mistake is a ``ConfigError`` whose key is ``source.<key>``. No broker."""

from __future__ import annotations

import pickle
from dataclasses import replace

import pytest
from streamdq.connectors.sources.kafka_datasource import KafkaBatchReader, KafkaStreamReader
from streamdq.connectors.sources.kafka_options import KafkaSpec, consumer_config

from streamdq.errors import ConfigError

SOURCE = {
    "type": "kafka",
    "format": "json",
    "bootstrap_servers": ["h1:9092", "h2:9092"],
    "topic": "orders,refunds",
    "starting_offsets": {"orders": {0: 12, "1": -2}},
    "max_records_per_trigger": 500,
    "min_partitions": 4,
    "kafka_options": {"security.protocol": "SSL", "kafka.client.id": "me", "group.id": "theirs"},
    "client": "kafka-python",
    "read_timeout_s": 30,
}


def test_source_mapping_and_data_source_options_parse_to_the_same_spec():
    spec = KafkaSpec.from_source(SOURCE)
    assert spec.bootstrap_servers == ("h1:9092", "h2:9092") and spec.topics == ("orders", "refunds")
    assert spec.starting_offsets == {"orders": {"0": 12, "1": -2}}
    assert (spec.max_records_per_trigger, spec.min_partitions, spec.read_timeout_s) == (500, 4, 30.0)
    options = spec.to_options()
    assert all(isinstance(v, str) for v in options.values())
    python = replace(spec, implementation="python")  # what the data source is
    assert KafkaSpec.from_options(options) == python
    reader = KafkaStreamReader(options)  # the data source parses with the same class
    assert reader.spec == python and pickle.loads(pickle.dumps(reader)).spec == python
    assert reader.cfg == spec.consumer_config() == consumer_config(options)
    assert reader.cfg["security_protocol"] == "SSL" and reader.cfg["client_id"] == "me"
    assert reader.cfg["group_id"] is None  # offsets live in the checkpoint, never in a group
    native = spec.native_options()
    assert native["kafka.client.id"] == "me" and native["kafka.security.protocol"] == "SSL"
    assert native["subscribe"] == "orders,refunds" and native["maxOffsetsPerTrigger"] == "500"


def test_spark_spellings_are_accepted_by_the_data_source():
    spec = KafkaSpec.from_options({"kafka.bootstrap.servers": "h:1", "subscribe": "t"})
    assert spec.bootstrap_servers == ("h:1",) and spec.topics == ("t",)


@pytest.mark.parametrize(
    ("options", "key"),
    [
        ({"topic": "t"}, "source.bootstrap_servers"),
        ({"bootstrap_servers": "h:1", "topic": " , "}, "source.topic"),
        ({"max_records_per_trigger": "0"}, "source.max_records_per_trigger"),
        ({"max_records_per_trigger": "ten"}, "source.max_records_per_trigger"),
        ({"min_partitions": "-1"}, "source.min_partitions"),
        ({"kafka_options": "not json"}, "source.kafka_options"),
        ({"kafka_options": "[1, 2]"}, "source.kafka_options"),
        ({"starting_offsets": '{"t": {"x": 3}}'}, "source.starting_offsets"),
        ({"ending_offsets": "earliest"}, "source.ending_offsets"),
        ({"offset_timeout_s": "soon"}, "source.offset_timeout_s"),
        ({"read_timeout_s": "0"}, "source.read_timeout_s"),
        ({"client": "librdkafka"}, "source.client"),
    ],
)
def test_data_source_option_mistakes_name_the_source_key(options, key):
    """They were plain ValueErrors (or a float() traceback) raised inside Spark's reader."""
    full = {"bootstrap_servers": "h:1", "topic": "t", **options}
    if "bootstrap_servers" not in options and key == "source.bootstrap_servers":
        full.pop("bootstrap_servers")
    with pytest.raises(ConfigError) as exc:
        KafkaBatchReader(full) if "ending_offsets" in options else KafkaStreamReader(full)
    assert exc.value.key == key and exc.value.problem and exc.value.fix


@pytest.mark.parametrize(
    ("key", "value"),
    [("initial_offset_wait_s", -1), ("read_timeout_s", "x"), ("ending_offsets", "earliest"), ("topic", [])],
)
def test_run_config_mistakes_are_found_before_spark_starts(key, value):
    with pytest.raises(ConfigError) as exc:
        KafkaSpec.from_source({**SOURCE, key: value})
    assert exc.value.key == f"source.{key}"


def test_batch_reads_take_their_end_from_the_spec():
    spec = KafkaSpec.from_source(SOURCE).with_ending({"orders": {"0": 50}})
    reader = KafkaBatchReader(spec.to_options())
    assert reader.ending == {"orders": {"0": 50}} and reader.stream.starting == spec.starting_offsets
    with pytest.raises(ConfigError, match="source.ending_offsets"):
        spec.with_ending("earliest")


def test_an_unreachable_broker_is_an_error_streamdq_raises_on_purpose():
    from streamdq.connectors.sources.kafka_datasource import BrokerUnreachable

    from streamdq.errors import StreamdqError

    assert issubclass(BrokerUnreachable, StreamdqError) and issubclass(BrokerUnreachable, RuntimeError)
