"""streamdq.state: the state store (DESIGN.md section 3, StateStore; sections 4-5).

``DeltaStateStore`` keeps analyzer states, metrics, constraint results, batch reports,
quarantined records and detector states in Delta tables (written with delta-rs from the
driver), exactly once per (query id, batch id). ``InMemoryStateStore`` is the same contract
in memory, for tests. See docs/state.md.
"""

from streamdq.state.delta_store import DeltaStateStore, StateStoreError, app_id
from streamdq.state.memory_store import InMemoryStateStore
from streamdq.state.protocol import StateStore
from streamdq.state.queries import RangeMerge, merge_range_detail
from streamdq.state.records import (
    BatchRecords,
    DetectorStateRecord,
    MetricRecord,
    ResultRecord,
    StateRecord,
    metric_records,
    records_for_batch,
    result_records,
    state_records,
)

__all__ = [
    "BatchRecords",
    "DeltaStateStore",
    "DetectorStateRecord",
    "InMemoryStateStore",
    "MetricRecord",
    "RangeMerge",
    "ResultRecord",
    "StateRecord",
    "StateStore",
    "StateStoreError",
    "app_id",
    "merge_range_detail",
    "metric_records",
    "records_for_batch",
    "result_records",
    "state_records",
]
