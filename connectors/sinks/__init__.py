"""Sinks: where each batch's report and alerts go (console, JSON lines, Prometheus, Kafka
alert topic, webhook, email). Sinks never compute; they deliver, never block the stream and
are idempotent per (query_id, batch_id). See ``base`` for the contract and ``config`` for
the spec keys of each type.
"""

from streamdq.connectors.sinks.base import Sink
from streamdq.connectors.sinks.config import build_sinks, validate_sink_specs

__all__ = ["Sink", "build_sinks", "validate_sink_specs"]
