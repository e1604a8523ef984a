"""Plausible event times: the bounds outside which a row's event time is quarantined.

An event time is a claim made by the data. One record stamped 9999-06-01 would otherwise
move the watermark to the year 9999 (every later record late, no window judged again,
surviving restarts), and a year-0001 or 9999-12-31T23:59:55Z stamp would crash the
driver's datetime arithmetic. So every row whose event time is outside the bounds is
*implausible*: quarantined with the reason, counted (``ImplausibleEventTimeRows``), kept
out of every metric, and it never moves the watermark (docs/streaming.md, "Event-time
bounds").

The bounds (run config ``event_time_bounds``):

* ``past`` / ``future``: relative to processing time, i.e. Spark's ``current_timestamp()``
  when the microbatch's job runs, or on the small-batch path the batch's processing time on
  the driver (``relative_implausible``) (default: no ``past`` bound, so backfills of old data
  are not quarantined; ``future`` 1 hour);
* ``min`` / ``max``: absolute (default ``min`` 1900-01-01T00:00:00Z, no ``max``);
* always, whatever the config: [1000-01-01, 9000-01-01) (``HARD_MIN``, ``HARD_MAX``), the
  range in which the driver's window and watermark arithmetic cannot overflow.

Everything is computed in Spark on integers (epoch microseconds, ``unix_micros``), so a
timestamp Python's datetime cannot hold never reaches the driver. A NULL event time is
not implausible (the row counts in batch and total, in no window).

>>> from datetime import timedelta
>>> EventTimeBounds(past=timedelta(days=30)).describe()
'past 30 days, future 1 hour, min 1900-01-01T00:00:00Z'
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import Column
from pyspark.sql import functions as F

from streamdq.errors import ConfigError

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
HARD_MIN = datetime(1000, 1, 1, tzinfo=UTC)
HARD_MAX = datetime(9000, 1, 1, tzinfo=UTC)
DEFAULT_MIN = datetime(1900, 1, 1, tzinfo=UTC)
DEFAULT_FUTURE = timedelta(hours=1)


def epoch_micros(value: datetime) -> int:
    """Microseconds since the Unix epoch of an aware datetime (exact integer arithmetic)."""
    return (value - EPOCH) // timedelta(microseconds=1)


def from_epoch_micros(micros: int) -> datetime:
    """The aware UTC datetime of epoch microseconds (plausible values only)."""
    return EPOCH + timedelta(microseconds=int(micros))


def _human(delta: timedelta) -> str:
    seconds = int(delta.total_seconds())
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds % size == 0 and seconds >= size:
            n = seconds // size
            return f"{n} {unit}{'s' if n != 1 else ''}"
    return f"{delta.total_seconds():g} seconds"


def _iso(value: datetime) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class EventTimeBounds:
    """The plausible range of event times (see the module doc); None = no such bound."""

    past: timedelta | None = None
    future: timedelta | None = DEFAULT_FUTURE
    min: datetime | None = DEFAULT_MIN
    max: datetime | None = None

    def __post_init__(self) -> None:
        for name in ("past", "future"):
            value = getattr(self, name)
            if value is not None and value < timedelta(0):
                raise ConfigError(
                    f"event_time_bounds.{name}", f"must be >= 0, got {value}", f"write e.g. {name}: 1 hour"
                )
        for name in ("min", "max"):
            value = getattr(self, name)
            if value is not None:
                if value.tzinfo is None:
                    object.__setattr__(self, name, value := value.replace(tzinfo=UTC))
                if not HARD_MIN <= value <= HARD_MAX:
                    raise ConfigError(
                        f"event_time_bounds.{name}",
                        f"{_iso(value)} is outside the supported range [{_iso(HARD_MIN)}, {_iso(HARD_MAX)}]",
                        f"give an instant in that range, or {name}: none",
                    )
        if self.min is not None and self.max is not None and self.min >= self.max:
            raise ConfigError(
                "event_time_bounds.min",
                f"{_iso(self.min)} is not before max {_iso(self.max)}",
                "make min earlier than max",
            )

    @property
    def lowest(self) -> datetime:
        """The absolute lower bound in force (``min`` or ``HARD_MIN``)."""
        return max(self.min, HARD_MIN) if self.min is not None else HARD_MIN

    @property
    def highest(self) -> datetime:
        """The absolute upper bound in force (``max`` or ``HARD_MAX``), exclusive."""
        return min(self.max, HARD_MAX) if self.max is not None else HARD_MAX

    def describe(self) -> str:
        parts = []
        if self.past is not None:
            parts.append(f"past {_human(self.past)}")
        if self.future is not None:
            parts.append(f"future {_human(self.future)}")
        if self.min is not None:
            parts.append(f"min {_iso(self.min)}")
        if self.max is not None:
            parts.append(f"max {_iso(self.max)}")
        return ", ".join(parts) or "none"

    def plausible(self, moment: datetime, now: datetime) -> bool:
        """The driver-side test of one aware datetime against the bounds, ``now`` standing for
        processing time (used on restore, for a watermark stored by an older run)."""
        if not self.lowest <= moment < self.highest:
            return False
        if self.future is not None and moment > now + self.future:
            return False
        return not (self.past is not None and moment < now - self.past)

    # -- Spark expressions (per row; integers only) -----------------------------------------
    @property
    def relative(self) -> bool:
        """True when a bound depends on processing time (``past`` or ``future`` is set)."""
        return self.past is not None or self.future is not None

    def _checks(
        self, micros: Column, *, now: Column | None = None, relative: bool = True
    ) -> list[tuple[Column, str]]:
        """(violation, reason suffix) pairs, absolute first. ``now`` is processing time as
        epoch microseconds (default: Spark's ``current_timestamp()``); ``relative=False``
        leaves out the bounds that depend on it."""
        out = [
            (micros < F.lit(epoch_micros(self.lowest)), f"before {_iso(self.lowest)}"),
            (micros >= F.lit(epoch_micros(self.highest)), f"not before {_iso(self.highest)}"),
        ]
        if not relative:
            return out
        if now is None:
            now = F.unix_micros(F.current_timestamp())
        if self.future is not None:
            limit = now + F.lit(self.future // timedelta(microseconds=1))
            out.append((micros > limit, f"more than {_human(self.future)} after processing time"))
        if self.past is not None:
            limit = now - F.lit(self.past // timedelta(microseconds=1))
            out.append((micros < limit, f"more than {_human(self.past)} before processing time"))
        return out

    def implausible(self, micros: Column, *, now: Column | None = None, relative: bool = True) -> Column:
        """TRUE when the event time (as epoch microseconds) is outside the bounds; FALSE for
        a plausible or NULL event time (never NULL). ``now`` and ``relative`` as in
        ``_checks``: ``relative=False`` tests the absolute bounds only."""
        checks = self._checks(micros, now=now, relative=relative)
        cond = checks[0][0]
        for c, _ in checks[1:]:
            cond = cond | c
        return F.coalesce(cond, F.lit(False))

    def relative_implausible(self, micros: pa.Array | pa.ChunkedArray, now: datetime) -> pa.Array:
        """The driver's half of ``implausible(..., relative=False)``: TRUE where the epoch
        microseconds break a bound relative to ``now`` (``future``, ``past``); FALSE for a
        NULL or a plausible one, and everywhere when no bound is relative.

        The small-batch path tests these bounds here rather than in Spark: Spark folds
        ``current_timestamp()`` into a literal that its generated code inlines, so every
        microbatch would compile its projection anew (tens of milliseconds each).

        >>> import pyarrow as pa
        >>> now = datetime(2026, 1, 1, tzinfo=UTC)
        >>> hour = 3_600_000_000
        >>> micros = pa.array([epoch_micros(now), epoch_micros(now) + 2 * hour, None])
        >>> EventTimeBounds().relative_implausible(micros, now).to_pylist()
        [False, True, False]
        """
        now_us = epoch_micros(now)
        broken = []
        if self.future is not None:
            broken.append(pc.greater(micros, now_us + self.future // timedelta(microseconds=1)))
        if self.past is not None:
            broken.append(pc.less(micros, now_us - self.past // timedelta(microseconds=1)))
        if not broken:
            return pa.array(np.zeros(len(micros), dtype=bool))
        out: Any = broken[0] if len(broken) == 1 else pc.or_(broken[0], broken[1])
        filled: pa.Array = pc.fill_null(out, False)
        return filled.combine_chunks() if isinstance(filled, pa.ChunkedArray) else filled

    def reason(
        self, micros: Column, shown: Column, *, now: Column | None = None, relative: bool = True
    ) -> Column:
        """The quarantine reason of an implausible row (NULL for a plausible one): the event
        time as ``shown`` (a string column) and the bound it violates (``now`` and
        ``relative`` as in ``_checks``)."""
        out: Column | None = None
        for cond, text in self._checks(micros, now=now, relative=relative):
            msg = F.concat(
                F.lit("implausible event time "), F.coalesce(shown, F.lit("?")), F.lit(": " + text)
            )
            out = F.when(cond, msg) if out is None else out.when(cond, msg)
        assert out is not None
        return out
