"""Holiday calendar of auto-validation: which batches fall on a day off.

A pipeline's volume follows the calendar: on Thanksgiving a daily flights feed carries a third
fewer rows than on the Thursday before, and no history of 30 ordinary days prices that. A
``HolidayCalendar`` names the days off of one country (and subdivision) from the ``holidays``
package, plus any extra dates the user lists; auto-validation mutes its volume constraints on a
batch that falls on one of them or is compared with one (``features.VOLUME_METRICS``, ``Program``),
and keeps such batches out of the statistics it learns volume bounds from.

A batch's day is the calendar date of its start (a window's start, a daily batch's date) in the
calendar's ``timezone`` (default UTC; a naive datetime is taken as UTC). Pure, driver-side; the
``holidays`` tables are built lazily per year and cached by the package.
"""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from streamdq.errors import ConfigError, InvalidArgument, InvalidType

KEYS = {"country", "subdiv", "dates", "timezone", "days_before", "days_after"}
MAX_DAYS_AROUND = 7


@dataclass(frozen=True)
class HolidayCalendar:
    """The days off of ``country`` (ISO 3166 code, e.g. ``US``; None: none) in ``subdiv``
    (e.g. ``NY``), plus ``extra`` dates, each widened by ``days_before`` and ``days_after``
    (the eve and the bridge day: Christmas Eve, the Friday after Thanksgiving), as seen in
    ``timezone``."""

    country: str | None = None
    subdiv: str | None = None
    extra: frozenset[dt.date] = field(default_factory=frozenset)
    timezone: str = "UTC"
    days_before: int = 0
    days_after: int = 0

    def __post_init__(self) -> None:
        for name in ("days_before", "days_after"):
            value = getattr(self, name)
            if not 0 <= value <= MAX_DAYS_AROUND:
                raise InvalidArgument(f"{name} is a number of days in 0..{MAX_DAYS_AROUND}, got {value}")
        self._table()  # an unknown country or subdivision fails here, not at the first batch
        try:
            ZoneInfo(self.timezone)
        except (ZoneInfoNotFoundError, ValueError) as e:
            raise InvalidArgument(f"unknown time zone {self.timezone!r}") from e

    def _table(self) -> Mapping[dt.date, str]:
        return {} if self.country is None else _country_table(self.country, self.subdiv)

    def day_of(self, when: dt.date | dt.datetime | str) -> dt.date:
        """The calendar date of ``when`` in this calendar's time zone (a date or an ISO date
        string is taken as is; a naive datetime or ISO timestamp is UTC). Anything else (a
        number: the ``holidays`` package would read it as epoch seconds) is a TypeError."""
        if isinstance(when, str):
            when = (
                dt.datetime.fromisoformat(when) if "T" in when or " " in when else dt.date.fromisoformat(when)
            )
        if not isinstance(when, dt.date):
            raise InvalidType(f"a batch's day is a date, a datetime or an ISO string, not {when!r}")
        if not isinstance(when, dt.datetime):
            return when
        if when.tzinfo is None:
            when = when.replace(tzinfo=dt.UTC)
        return when.astimezone(ZoneInfo(self.timezone)).date()

    def holiday(self, when: dt.date | dt.datetime | str) -> str | None:
        """The name of the day off ``when`` falls on (``"Thanksgiving Day + 1 day"`` within
        ``days_after`` of one), or None on an ordinary day."""
        day = self.day_of(when)
        name = self._named(day)
        if name is not None:
            return name
        for offset in range(1, self.days_after + 1):
            name = self._named(day - dt.timedelta(days=offset))
            if name is not None:
                return f"{name} + {offset} day{'s' if offset > 1 else ''}"
        for offset in range(1, self.days_before + 1):
            name = self._named(day + dt.timedelta(days=offset))
            if name is not None:
                return f"{name} - {offset} day{'s' if offset > 1 else ''}"
        return None

    def _named(self, day: dt.date) -> str | None:
        if day in self.extra:
            return "listed date"
        name = self._table().get(day)
        return str(name) if name else None

    def is_holiday(self, when: dt.date | dt.datetime | str) -> bool:
        return self.holiday(when) is not None

    def flags(self, days: Iterable[dt.date | dt.datetime | str]) -> tuple[bool, ...]:
        """``is_holiday`` of each of ``days``, in order."""
        return tuple(self.is_holiday(d) for d in days)


@functools.lru_cache(maxsize=64)
def _country_table(country: str, subdiv: str | None) -> Any:
    """The ``holidays`` package's table (it fills in each year on first lookup)."""
    import holidays

    try:
        return holidays.country_holidays(country, subdiv=subdiv)
    except NotImplementedError as e:  # the package's error for an unknown country/subdivision
        raise InvalidArgument(str(e)) from e


def calendar_from_config(raw: Any, path: str = "auto_validate.holidays") -> HolidayCalendar:
    """``{country: US, subdiv: NY, dates: [2024-11-29], timezone: America/New_York, days_before: 1,
    days_after: 1}`` (every key optional; at least a country or dates) or the shorthand
    ``US-NY`` -> a calendar; errors name ``path.<key>``."""
    if isinstance(raw, str):  # shorthand: "US" or "US-NY"
        code, _, region = raw.partition("-")
        raw = {"country": code, **({"subdiv": region} if region else {})}
    if not isinstance(raw, Mapping):
        raise ConfigError(path, "expected a mapping such as {country: US, subdiv: NY} or a string like US-NY")
    unknown = sorted(set(raw) - KEYS)
    if unknown:
        raise ConfigError(f"{path}.{unknown[0]}", f"unknown key; known: {', '.join(sorted(KEYS))}")
    country, subdiv = raw.get("country"), raw.get("subdiv")
    for key, value in (("country", country), ("subdiv", subdiv)):
        if value is not None and (not isinstance(value, str) or not value):
            raise ConfigError(f"{path}.{key}", f"expected a code such as US or NY, got {value!r}")
    if subdiv is not None and country is None:
        raise ConfigError(f"{path}.subdiv", "a subdivision needs its country")
    dates = raw.get("dates", [])
    if not isinstance(dates, list):
        raise ConfigError(f"{path}.dates", "expected a list of dates such as [2024-11-29]")
    extra = set()
    for i, d in enumerate(dates):
        try:
            extra.add(
                d
                if isinstance(d, dt.date) and not isinstance(d, dt.datetime)
                else dt.date.fromisoformat(str(d))
            )
        except ValueError:
            raise ConfigError(f"{path}.dates[{i}]", f"expected an ISO date YYYY-MM-DD, got {d!r}") from None
    if country is None and not extra:
        raise ConfigError(path, "name a country (and optionally subdiv) or list dates")
    timezone = raw.get("timezone", "UTC")
    around = {}
    for key in ("days_before", "days_after"):
        value = raw.get(key, 0)
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= MAX_DAYS_AROUND:
            raise ConfigError(
                f"{path}.{key}", f"expected a number of days in 0..{MAX_DAYS_AROUND}, got {value!r}"
            )
        around[key] = value
    try:
        return HolidayCalendar(country, subdiv, frozenset(extra), str(timezone), **around)
    except ValueError as e:
        key = "timezone" if "time zone" in str(e) else ("subdiv" if subdiv else "country")
        raise ConfigError(f"{path}.{key}", str(e)) from None
