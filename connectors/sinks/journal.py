"""AlertJournal: a persisted, bounded outbox of alerts for at-least-once delivery.

A SQLite file (WAL mode) under the run's state directory, used by the Kafka alert sink.
``add`` records an alert once per ``alert_id`` (a replayed batch adds nothing new, and an
alert already acknowledged by the broker is never queued again); ``pending`` lists
undelivered alerts oldest first; ``mark_delivered`` records the broker's acknowledgement, and
puts back in the queue alerts whose offset the broker hands out again (it lost them).
The outbox is bounded: beyond ``max_pending`` undelivered alerts the oldest are dropped
(counted in ``dropped``, logged); delivered rows beyond ``keep_delivered`` are pruned,
oldest first (they are kept only to recognise replays).

Thread-safe (one connection guarded by a lock). Survives process kills: every call is its
own transaction.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from streamdq.connectors.sinks.local_dir import require_local

log = logging.getLogger("streamdq.sinks.journal")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS alerts (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    alert_id TEXT NOT NULL UNIQUE,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    enqueued_at REAL NOT NULL,
    delivered_at REAL,
    partition INTEGER,
    offset INTEGER
);
CREATE INDEX IF NOT EXISTS alerts_pending ON alerts (delivered_at, seq);
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
"""


@dataclass(frozen=True)
class JournalEntry:
    seq: int
    alert_id: str
    key: str
    value: str


class AlertJournal:
    def __init__(
        self, path: str | os.PathLike[str], *, max_pending: int = 100_000, keep_delivered: int = 10_000
    ) -> None:
        self.path = Path(require_local(path, "alert journal"))
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.max_pending = max_pending
        self.keep_delivered = keep_delivered
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=30)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.executescript(_SCHEMA)

    def add(self, entries: list[tuple[str, str, str]]) -> int:
        """Record ``(alert_id, key, value)`` entries; returns how many were new."""
        if not entries:
            return 0
        now = time.time()
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                before = self._db.total_changes
                self._db.executemany(
                    "INSERT OR IGNORE INTO alerts (alert_id, key, value, enqueued_at) VALUES (?, ?, ?, ?)",
                    [(aid, key, value, now) for aid, key, value in entries],
                )
                added = self._db.total_changes - before
                over = self._count_pending() - self.max_pending
                if over > 0:
                    self._db.execute(
                        "DELETE FROM alerts WHERE seq IN (SELECT seq FROM alerts WHERE delivered_at IS NULL"
                        " ORDER BY seq LIMIT ?)",
                        (over,),
                    )
                    self._db.execute(
                        "INSERT INTO meta (name, value) VALUES ('dropped', ?)"
                        " ON CONFLICT(name) DO UPDATE SET value = value + excluded.value",
                        (over,),
                    )
                    log.warning(
                        "%s: outbox full (%d), dropped the %d oldest alerts",
                        self.path,
                        self.max_pending,
                        over,
                    )
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
        return added

    def _count_pending(self) -> int:
        return int(self._db.execute("SELECT count(*) FROM alerts WHERE delivered_at IS NULL").fetchone()[0])

    def pending(self, limit: int = 500) -> list[JournalEntry]:
        with self._lock:
            rows = self._db.execute(
                "SELECT seq, alert_id, key, value FROM alerts WHERE delivered_at IS NULL ORDER BY seq LIMIT ?",
                (limit,),
            ).fetchall()
        return [JournalEntry(*row) for row in rows]

    def pending_count(self) -> int:
        with self._lock:
            return self._count_pending()

    def mark_delivered(self, seq: int, partition: int | None = None, offset: int | None = None) -> int:
        """Record the broker's acknowledgement of ``seq`` at ``partition``/``offset``.

        Returns how many OTHER alerts, recorded as acknowledged at ``offset`` or later in the same
        partition, were put back in the queue (oldest first by ``seq``, counted in ``lost``): a
        broker hands out an offset once, so seeing it again means it lost those records after
        acknowledging them (a broker stopped while acknowledging, an unclean leader election, a
        log truncated by a restore). Such an alert is sent again; it then follows the alert that
        took its offset. Example: alert 1 acknowledged at offset 5, the broker loses it, alert 2
        is acknowledged at offset 5: ``mark_delivered(2, 0, 5)`` returns 1 and alert 1 is pending
        again."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                lost = 0
                if partition is not None and offset is not None and offset >= 0:  # -1: acks=0, no offset
                    lost = self._db.execute(
                        'UPDATE alerts SET delivered_at = NULL, partition = NULL, "offset" = NULL'
                        ' WHERE delivered_at IS NOT NULL AND partition = ? AND "offset" >= ? AND seq != ?',
                        (partition, offset, seq),
                    ).rowcount
                    if lost:
                        self._db.execute(
                            "INSERT INTO meta (name, value) VALUES ('lost', ?)"
                            " ON CONFLICT(name) DO UPDATE SET value = value + excluded.value",
                            (lost,),
                        )
                self._db.execute(
                    'UPDATE alerts SET delivered_at = ?, partition = ?, "offset" = ? WHERE seq = ?',
                    (time.time(), partition, offset, seq),
                )
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
        return lost

    def prune(self) -> int:
        """Forget the oldest delivered alerts beyond ``keep_delivered``; returns how many."""
        with self._lock:
            cur = self._db.execute(
                "DELETE FROM alerts WHERE seq IN (SELECT seq FROM alerts WHERE delivered_at IS NOT NULL"
                " ORDER BY seq DESC LIMIT -1 OFFSET ?)",
                (self.keep_delivered,),
            )
            return cur.rowcount

    def _meta(self, name: str) -> int:
        with self._lock:
            row = self._db.execute("SELECT value FROM meta WHERE name = ?", (name,)).fetchone()
        return int(row[0]) if row else 0

    @property
    def dropped(self) -> int:
        """Undelivered alerts dropped because the outbox was full."""
        return self._meta("dropped")

    @property
    def lost(self) -> int:
        """Acknowledged alerts the broker lost and that were queued again (``mark_delivered``)."""
        return self._meta("lost")

    def delivered_count(self) -> int:
        with self._lock:
            return int(
                self._db.execute("SELECT count(*) FROM alerts WHERE delivered_at IS NOT NULL").fetchone()[0]
            )

    def close(self) -> None:
        with self._lock:
            self._db.close()
