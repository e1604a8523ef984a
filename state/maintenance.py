"""Maintenance of the state tables: compaction, checkpoints, vacuum (delta-rs, driver side).

* ``checkpoint(dt)``: write a Delta checkpoint so loading the table reads one Parquet
  file instead of replaying every JSON commit; then drop log files older than the
  table's log retention (``delta.logRetentionDuration``, 30 days by default).
* ``compact(dt)``: bin-pack small files per partition (``optimize.compact``); a
  data-change-free commit that readers and the exactly-once checks are unaffected by.
* ``vacuum(dt, retention_hours)``: physically delete files unreferenced for longer than
  ``retention_hours`` (time travel older than that is lost). The caller's retention is
  honoured even when shorter than Delta's 7-day default.
"""

from __future__ import annotations

import logging
from typing import Any

from deltalake import DeltaTable

from streamdq.errors import InvalidArgument

log = logging.getLogger(__name__)


def checkpoint(dt: DeltaTable) -> None:
    dt.create_checkpoint()
    dt.cleanup_metadata()


TARGET_FILE_BYTES = 16 * 1024 * 1024


def compact(dt: DeltaTable, target_size: int = TARGET_FILE_BYTES) -> dict[str, Any]:
    """Bin-pack files smaller than ``target_size`` (files already that large are left alone)."""
    metrics = dt.optimize.compact(target_size=target_size)
    dt.update_incremental()
    checkpoint(dt)
    return metrics


def vacuum(dt: DeltaTable, retention_hours: float) -> list[str]:
    if retention_hours < 0:
        raise InvalidArgument(f"retention_hours must be >= 0, got {retention_hours}")
    removed = dt.vacuum(retention_hours=int(retention_hours), dry_run=False, enforce_retention_duration=False)
    dt.update_incremental()
    return list(removed)
