"""The ``_streamdq_*`` column contract: every metadata column a decoded source frame may carry.

One module names them all, at the bottom of the layers, so that sources (which make the
columns), the engine (which counts and quarantines by them) and analyzers (which must not take
them for data) agree by import, not by repeating strings. A column whose name starts with
``PREFIX`` is metadata, never data: no analyzer sees it as a column of the data set.

Per record (every decoder, docs/sources.md "The decoded DataFrame"):

* ``ERROR`` STRING: NULL for a good record, else its reasons joined by ``"; "``;
* ``RAW`` STRING: the raw payload, valid UTF-8 (for the quarantine table);
* ``INVALID_UTF8`` BOOLEAN: the payload's bytes were not valid UTF-8;
* ``UNKNOWN_FIELDS`` / ``MISSING_FIELDS`` / ``TYPE_ERRORS`` ARRAY<STRING>: schema drift facts
  (``DRIFT``), NULL for an undecodable record.

Per source: ``KAFKA_TOPIC``, ``KAFKA_PARTITION``, ``KAFKA_OFFSET``, ``KAFKA_TIMESTAMP`` (Kafka),
``FILE`` and ``LINE`` (file sources), ``OFFSET`` (the generator).

>>> is_metadata(ERROR), is_metadata("amount")
(True, False)
>>> data_columns(["id", FILE, "amount", RAW])
['id', 'amount']
"""

from __future__ import annotations

from collections.abc import Iterable

PREFIX = "_streamdq_"

ERROR = "_streamdq_error"
RAW = "_streamdq_raw"
INVALID_UTF8 = "_streamdq_invalid_utf8"
UNKNOWN_FIELDS = "_streamdq_unknown_fields"
MISSING_FIELDS = "_streamdq_missing_fields"
TYPE_ERRORS = "_streamdq_type_errors"
DRIFT = (UNKNOWN_FIELDS, MISSING_FIELDS, TYPE_ERRORS)

KAFKA_TOPIC = "_streamdq_kafka_topic"
KAFKA_PARTITION = "_streamdq_kafka_partition"
KAFKA_OFFSET = "_streamdq_kafka_offset"
KAFKA_TIMESTAMP = "_streamdq_kafka_timestamp"
FILE = "_streamdq_file"
LINE = "_streamdq_line"
OFFSET = "_streamdq_offset"


def is_metadata(name: str) -> bool:
    """True for a ``_streamdq_*`` metadata column (never data)."""
    return name.startswith(PREFIX)


def data_columns(names: Iterable[str]) -> list[str]:
    """The names that are data (everything but metadata), in their order."""
    return [n for n in names if not is_metadata(n)]
