"""Human text for windows and bounds, shared by the console, the alert messages and the
start banner / stop summary.

* Windows are event-time windows in UTC (the engine floors epoch microseconds by the window
  length). ``window_text``: a window of whole days from midnight is its date and length
  (``2013-01-01 (1 day)``, ``2013-01-01..2013-01-07 (7 days)``); a window within one day is
  ``2013-01-01 10:00:00..11:00:00``; any other window shows both dates in full.
* Bounds: detectors and learned programs use +-1.7976931348623157e308 (Deequ's double
  extremes) or infinities for an open side. ``interval_text`` shows such a side as absent:
  ``>= 0.5``, ``<= 10``, ``[0.5, 10]``, ``any value``. ``bound_text`` does the same for a
  constraint's ``bound`` (``{"lower", "upper"}``, ``[lo, hi]``, a number or text).
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime, timedelta
from typing import Any

# a side at or beyond this magnitude is unbounded (float max is 1.797e308)
UNBOUNDED = 1e300
DAY = timedelta(days=1)
_QUOTED_VALUE = re.compile(r" got .*$", re.DOTALL)


def reason_kind(reason: str) -> str:
    """A quarantine reason without the offending value it quotes (``field a: expected INT got
    'x'`` -> ``field a: expected INT``), so reasons can be counted."""
    return _QUOTED_VALUE.sub("", reason.strip()) or "unknown"


def number_text(value: Any) -> str:
    """A number in at most 6 significant digits; other values as ``str``."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    return f"{value:.6g}"


def _open_side(value: Any) -> bool:
    if value is None:
        return True
    try:
        x = float(value)
    except (TypeError, ValueError):
        return False
    return math.isnan(x) or abs(x) >= UNBOUNDED


def interval_text(lower: Any, upper: Any) -> str:
    """``[lo, hi]``, ``>= lo``, ``<= hi`` or ``any value`` (open sides left out)."""
    lo_open, hi_open = _open_side(lower), _open_side(upper)
    if lo_open and hi_open:
        return "any value"
    if hi_open:
        return f">= {number_text(lower)}"
    if lo_open:
        return f"<= {number_text(upper)}"
    return f"[{number_text(lower)}, {number_text(upper)}]"


def between_text(what: str, lower: Any, upper: Any) -> str:
    """``lo <= what <= hi``, ``what >= lo``, ``what <= hi`` or ``what: any value``."""
    lo_open, hi_open = _open_side(lower), _open_side(upper)
    if lo_open and hi_open:
        return f"{what}: any value"
    if hi_open:
        return f"{what} >= {number_text(lower)}"
    if lo_open:
        return f"{what} <= {number_text(upper)}"
    return f"{number_text(lower)} <= {what} <= {number_text(upper)}"


def range_text(lower: Any, upper: Any) -> str:
    """``in [lo, hi]`` when both sides are bounded, else ``interval_text`` (``>= lo``...)."""
    text = interval_text(lower, upper)
    return f"in {text}" if text.startswith("[") else text


def bound_text(bound: Any) -> str:
    """A constraint's or detector's expected bound as text (see ``interval_text``)."""
    if isinstance(bound, dict) and ("lower" in bound or "upper" in bound):
        return interval_text(bound.get("lower"), bound.get("upper"))
    if isinstance(bound, list | tuple) and len(bound) == 2:
        return interval_text(bound[0], bound[1])
    return number_text(bound)


def window_text(start: datetime, end: datetime) -> str:
    """A readable event-time window (UTC; see the module doc)."""
    start, end = start.astimezone(UTC), end.astimezone(UTC)
    length = end - start
    midnight = start.time() == datetime.min.time()
    if midnight and length >= DAY and length % DAY == timedelta(0):
        days = length // DAY
        if days == 1:
            return f"{start:%Y-%m-%d} (1 day)"
        return f"{start:%Y-%m-%d}..{end - DAY:%Y-%m-%d} ({days} days)"
    if start.date() == end.date():
        return f"{start:%Y-%m-%d %H:%M:%S}..{end:%H:%M:%S}"
    return f"{start:%Y-%m-%d %H:%M:%S}..{end:%Y-%m-%d %H:%M:%S}"
