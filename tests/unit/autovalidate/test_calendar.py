"""The holiday calendar of auto-validation: days off from the ``holidays`` package, extra dates,
time zones, and config errors that name the key."""

from __future__ import annotations

import datetime as dt

import pytest

from streamdq.autovalidate.avh.calendar import HolidayCalendar, calendar_from_config
from streamdq.autovalidate.avh.monitor import auto_validate_monitor_from_config
from streamdq.errors import ConfigError


def test_a_country_and_subdivision_name_their_days_off():
    ny = calendar_from_config({"country": "US", "subdiv": "NY"})
    assert ny.holiday("2013-11-28") == "Thanksgiving Day"
    assert ny.is_holiday(dt.date(2013, 7, 4)) and not ny.is_holiday("2013-11-29")
    assert ny.is_holiday("2013-02-12")  # Lincoln's Birthday: New York's, not federal
    assert not calendar_from_config("US").is_holiday("2013-02-12")
    assert calendar_from_config("US-NY") == ny  # the shorthand
    assert ny.flags(["2013-12-24", "2013-12-25", "2013-12-26"]) == (False, True, False)


def test_listed_dates_are_days_off_too():
    cal = calendar_from_config({"country": "US", "dates": ["2013-11-29"]})
    assert cal.holiday("2013-11-29") == "listed date" and cal.is_holiday("2013-11-28")
    only = calendar_from_config({"dates": [dt.date(2024, 3, 1)]})  # YAML reads dates as dates
    assert only.is_holiday("2024-03-01") and not only.is_holiday("2024-12-25")


def test_a_window_start_is_dated_in_the_calendars_time_zone():
    """03:00 UTC on 29 November is still Thanksgiving evening in New York; naive timestamps are UTC."""
    utc = HolidayCalendar("US")
    ny = HolidayCalendar("US", timezone="America/New_York")
    start = dt.datetime(2013, 11, 29, 3, 0, tzinfo=dt.UTC)
    assert not utc.is_holiday(start) and ny.is_holiday(start)
    assert ny.is_holiday(dt.datetime(2013, 11, 29, 3, 0)) and ny.is_holiday("2013-11-29T03:00:00")
    assert not ny.is_holiday(dt.datetime(2013, 11, 29, 6, 0))


def test_config_errors_name_the_key():
    cases = {
        "auto_validate.holidays.country": {"country": "XX"},
        "auto_validate.holidays.subdiv": {"country": "US", "subdiv": "ZZ"},
        "auto_validate.holidays.timezone": {"country": "US", "timezone": "Mars/Olympus"},
        r"auto_validate.holidays.dates\[1\]": {"dates": ["2024-01-01", "tomorrow"]},
        "auto_validate.holidays.contry": {"contry": "US"},
    }
    for path, raw in cases.items():
        with pytest.raises(ConfigError, match=path):
            calendar_from_config(raw)
    with pytest.raises(ConfigError, match="needs its country"):
        calendar_from_config({"subdiv": "NY"})
    with pytest.raises(ConfigError, match="name a country"):
        calendar_from_config({})
    with pytest.raises(ConfigError, match="auto_validate.holidays"):
        calendar_from_config(["US"])
    with pytest.raises(ConfigError, match="auto_validate.holidays.country"):
        auto_validate_monitor_from_config({"columns": ["a"], "holidays": {"country": "XX"}}, "d")
    monitor = auto_validate_monitor_from_config({"columns": ["a"], "holidays": "US-NY"}, "d")
    assert monitor.calendar == HolidayCalendar("US", "NY")
    assert auto_validate_monitor_from_config({"columns": ["a"]}, "d").calendar is None


def test_a_batch_key_that_is_not_a_date_is_refused_not_read_as_epoch_seconds():
    with pytest.raises(TypeError, match="not 1"):
        HolidayCalendar("US").is_holiday(1)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        HolidayCalendar("US").is_holiday("day one")


def test_days_around_a_holiday_widen_it_to_the_eve_and_the_bridge_day():
    """The volume moves on the days beside a holiday too (the Friday after Thanksgiving carried
    338 fewer New York departures than the Friday before): ``days_before``/``days_after``."""
    cal = calendar_from_config({"country": "US", "subdiv": "NY", "days_before": 1, "days_after": 1})
    assert cal.holiday("2013-11-29") == "Thanksgiving Day + 1 day"
    assert cal.holiday("2013-12-24") == "Christmas Day - 1 day"
    assert cal.holiday("2013-11-28") == "Thanksgiving Day" and not cal.is_holiday("2013-11-30")
    two = calendar_from_config({"dates": ["2024-03-01"], "days_after": 2})
    assert two.flags(["2024-02-29", "2024-03-01", "2024-03-02", "2024-03-03", "2024-03-04"]) == (
        False,
        True,
        True,
        True,
        False,
    )
    assert two.holiday("2024-03-03") == "listed date + 2 days"
    for bad in (-1, 8, 1.5, True):
        with pytest.raises(ConfigError, match="auto_validate.holidays.days_after"):
            calendar_from_config({"country": "US", "days_after": bad})
    with pytest.raises(ValueError, match="days_before"):
        HolidayCalendar("US", days_before=9)
