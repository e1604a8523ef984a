"""Time-range parameters of the query service: epoch seconds or ISO 8601, always UTC.

``parse_time("1700000000")``, ``parse_time("1700000000.5")`` and
``parse_time("2023-11-14T22:13:20Z")`` give the same aware UTC ``datetime``; an ISO time
without a zone is taken as UTC. Anything else raises ``BadRequest`` naming the parameter and
the accepted forms (the service answers 400). ``time_range`` applies the defaults (the whole
history) and rejects an empty or reversed range.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import UTC, datetime

from streamdq.service.errors import BadRequest

EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
LATEST = datetime(9999, 12, 31, tzinfo=UTC)
_EPOCH = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)$")
_FORMS = "epoch seconds (e.g. 1700000000) or ISO 8601 (e.g. 2023-11-14T22:13:20Z)"


def parse_time(text: str, name: str) -> datetime:
    """The UTC instant of a query parameter ``name``; ``BadRequest`` when malformed or out of range."""
    value = text.strip()
    if _EPOCH.match(value):
        seconds = float(value)
        if not math.isfinite(seconds) or not EARLIEST.timestamp() <= seconds <= LATEST.timestamp():
            raise BadRequest(f"{name}={text!r} is outside 1970-01-01..9999-12-31; expected {_FORMS}")
        return datetime.fromtimestamp(seconds, UTC)
    try:
        ts = datetime.fromisoformat(value)
    except ValueError:
        raise BadRequest(f"{name}={text!r} is not a time; expected {_FORMS}") from None
    ts = ts.replace(tzinfo=UTC) if ts.tzinfo is None else ts.astimezone(UTC)
    if ts < EARLIEST:
        raise BadRequest(f"{name}={text!r} is before 1970-01-01; expected {_FORMS}")
    return ts


def epoch(ts: datetime | None) -> float | None:
    """Epoch seconds of an aware datetime (None stays None); whole seconds come back as int-valued."""
    return None if ts is None else ts.timestamp()


@dataclass(frozen=True)
class TimeRange:
    """``[start, end)`` in UTC; ``start``/``end`` default to the whole history."""

    start: datetime
    end: datetime

    def to_dict(self) -> dict[str, float]:
        return {"startTimestamp": self.start.timestamp(), "endTimestamp": self.end.timestamp()}


def time_range(start: str | None, end: str | None) -> TimeRange:
    """The range of ``startTimestamp``/``endTimestamp`` parameters; ``BadRequest`` if end <= start."""
    lo = EARLIEST if start in (None, "") else parse_time(start, "startTimestamp")
    hi = LATEST if end in (None, "") else parse_time(end, "endTimestamp")
    if hi <= lo:
        raise BadRequest(
            f"empty range: endTimestamp {hi.isoformat()} is not after startTimestamp {lo.isoformat()}"
        )
    return TimeRange(lo, hi)
