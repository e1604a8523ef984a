"""Arrow schemas and partitioning of the Delta tables under one state root.

Every table lives at ``<root>/<name>`` and is created on first use. All columns are
nullable (Delta's default; delta-rs and Spark readers agree on it). Timestamps are
microsecond UTC (Delta ``timestamp``); ``date`` is a Delta ``date`` partition column.

========================  ======================  ==============================================
table                     partitioned by          one row per
========================  ======================  ==============================================
``states``                dataset, date           state record committed by a batch (append log)
``states_latest``         dataset                 (dataset, scope, window_start, state_key): the
                                                  current total state and every OPEN window
``metrics``               dataset, date           metric point (scope, window, name, instance)
``results``               dataset, date           constraint outcome
``reports``               dataset, date           committed batch (the BatchReport JSON)
``quarantine``            dataset, date           record set aside, with the reason
``detectors``             dataset                 (dataset, key): the current detector state
========================  ======================  ==============================================

``date`` is the UTC day of the row's point in time: the window start for window-scope
rows, else the processing (commit) time, so time-range queries prune whole partitions.
"""

from __future__ import annotations

import pyarrow as pa

TS = pa.timestamp("us", tz="UTC")

STATES = "states"
STATES_LATEST = "states_latest"
METRICS = "metrics"
RESULTS = "results"
REPORTS = "reports"
QUARANTINE = "quarantine"
DETECTORS = "detectors"

_STATE_FIELDS = [
    ("dataset", pa.string()),
    ("scope", pa.string()),
    ("window_start", TS),
    ("window_end", TS),
    ("state_key", pa.string()),
    ("analyzer", pa.string()),
    ("state_type", pa.string()),
    ("state", pa.binary()),
    ("format_version", pa.int32()),
    ("final", pa.bool_()),
    ("batch_id", pa.int64()),
    ("query_id", pa.string()),
    ("committed_at", TS),
    ("date", pa.date32()),
]

SCHEMAS: dict[str, pa.Schema] = {
    STATES: pa.schema(_STATE_FIELDS),
    STATES_LATEST: pa.schema(_STATE_FIELDS),
    METRICS: pa.schema(
        [
            ("dataset", pa.string()),
            ("scope", pa.string()),
            ("window_start", TS),
            ("window_end", TS),
            ("time", TS),
            ("entity", pa.string()),
            ("instance", pa.string()),
            ("name", pa.string()),
            ("value", pa.float64()),
            ("value_json", pa.string()),
            ("failure", pa.string()),
            ("empty", pa.bool_()),
            ("approximate", pa.bool_()),
            ("error_bound", pa.float64()),
            ("analyzer_key", pa.string()),
            ("batch_id", pa.int64()),
            ("query_id", pa.string()),
            ("processing_time", TS),
            ("date", pa.date32()),
        ]
    ),
    RESULTS: pa.schema(
        [
            ("dataset", pa.string()),
            ("check", pa.string()),
            ("level", pa.string()),
            ("constraint", pa.string()),
            ("constraint_id", pa.string()),
            ("status", pa.string()),
            ("message", pa.string()),
            ("metric_entity", pa.string()),
            ("metric_name", pa.string()),
            ("metric_instance", pa.string()),
            ("metric_value", pa.float64()),
            ("metric_value_json", pa.string()),
            ("scope", pa.string()),
            ("window_start", TS),
            ("window_end", TS),
            ("time", TS),
            ("bound", pa.string()),
            ("batch_id", pa.int64()),
            ("query_id", pa.string()),
            ("processing_time", TS),
            ("date", pa.date32()),
        ]
    ),
    REPORTS: pa.schema(
        [
            ("dataset", pa.string()),
            ("query_id", pa.string()),
            ("batch_id", pa.int64()),
            ("processing_time", TS),
            ("status", pa.string()),
            ("report", pa.string()),
            ("committed_at", TS),
            ("date", pa.date32()),
        ]
    ),
    QUARANTINE: pa.schema(
        [
            ("dataset", pa.string()),
            ("batch_id", pa.int64()),
            ("query_id", pa.string()),
            ("reason", pa.string()),
            ("raw", pa.string()),
            ("source", pa.string()),
            ("topic", pa.string()),
            ("partition", pa.int32()),
            ("offset", pa.int64()),
            ("file", pa.string()),
            ("line", pa.int64()),
            ("event_time", TS),
            ("ingested_at", TS),
            ("date", pa.date32()),
        ]
    ),
    DETECTORS: pa.schema(
        [
            ("dataset", pa.string()),
            ("key", pa.string()),
            ("detector", pa.string()),
            ("state", pa.binary()),
            ("last_seq", pa.int64()),
            ("batch_id", pa.int64()),
            ("query_id", pa.string()),
            ("updated_at", TS),
        ]
    ),
}

PARTITIONS: dict[str, list[str]] = {
    STATES: ["dataset", "date"],
    STATES_LATEST: ["dataset"],
    METRICS: ["dataset", "date"],
    RESULTS: ["dataset", "date"],
    REPORTS: ["dataset", "date"],
    QUARANTINE: ["dataset", "date"],
    DETECTORS: ["dataset"],
}

# Columns the caller may set in a quarantine table; the store fills dataset, batch_id,
# query_id and date (and ingested_at when missing). dataset/batch_id/query_id may be
# present but must then equal the commit's values.
QUARANTINE_CALLER_COLUMNS = frozenset(SCHEMAS[QUARANTINE].names) - {"date"}
QUARANTINE_REQUIRED = ("reason", "raw")

# The columns each table keeps Delta file statistics for (``delta.dataSkippingStatsColumns``):
# the ones readers prune files or filter rows on (besides the ``dataset`` and ``date``
# partitions). Payload columns (state bytes, report JSON, raw records, messages, JSON values)
# never prune, and their statistics cost every append CPU (bench/README.md, commit).
_STATE_STATS = (
    "scope",
    "window_start",
    "window_end",
    "state_key",
    "final",
    "batch_id",
    "query_id",
    "committed_at",
)
STATS_COLUMNS: dict[str, tuple[str, ...]] = {
    STATES: _STATE_STATS,
    STATES_LATEST: _STATE_STATS,
    METRICS: (
        "scope",
        "window_start",
        "window_end",
        "time",
        "entity",
        "instance",
        "name",
        "batch_id",
        "query_id",
        "processing_time",
    ),
    RESULTS: (
        "check",
        "constraint_id",
        "status",
        "scope",
        "window_start",
        "window_end",
        "time",
        "batch_id",
        "query_id",
        "processing_time",
    ),
    REPORTS: ("query_id", "batch_id", "processing_time", "status", "committed_at"),
    QUARANTINE: ("batch_id", "query_id", "reason", "event_time", "ingested_at"),
    DETECTORS: ("key", "detector", "batch_id", "query_id", "updated_at"),
}

# Written in this order by ``DeltaStateStore.commit``; ``reports`` is the commit marker, last
# but for the rows it determines itself (the handler's metrics and results), written after it
# in the background (delta_store.py, Exactly once).
COMMIT_ORDER = (STATES, STATES_LATEST, METRICS, RESULTS, QUARANTINE, DETECTORS, REPORTS)
