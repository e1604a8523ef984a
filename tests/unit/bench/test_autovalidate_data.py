"""bench/autovalidate: the incidents the harness reads from the data, and how its tally counts alarm days."""

from __future__ import annotations

import pandas as pd

from tests.unit.bench.bench_modules import load_bench_module

data = load_bench_module("autovalidate/data.py", "bench_autovalidate_data")


def _readings(day: int, per_station: dict[str, int]) -> pd.DataFrame:
    rows = [
        {"year": 2013, "month": 3, "day": day, "hour": h, "origin": station}
        for station, n in per_station.items()
        for h in range(n)
    ]
    return pd.DataFrame(rows)


def test_a_day_on_which_a_station_misses_readings_is_an_incident_of_origin_only():
    frame = pd.concat(
        [
            _readings(1, {"EWR": 24, "JFK": 24, "LGA": 24}),
            _readings(2, {"EWR": 22, "JFK": 24, "LGA": 24}),
            _readings(3, {"EWR": 23, "JFK": 23, "LGA": 23}),  # all short the same hour: even shares
        ]
    )
    gaps = data.station_gaps(frame)
    assert list(gaps) == ["2013-03-02"]
    why, columns = gaps["2013-03-02"]
    assert "EWR 22" in why and columns == ("origin",)
    source = data.Source("w", (), (), ("origin",), incidents=gaps)
    assert source.incident("2013-03-02", "origin") == why
    assert source.incident("2013-03-02", "temp") is None and source.incident("2013-03-01", "origin") is None


def test_the_tally_counts_alarm_days_once_across_columns_and_kinds():
    run = load_bench_module("autovalidate/run.py", "bench_autovalidate_run")
    numeric, categorical = run.Tally(), run.Tally()
    numeric.count_clean(True, False, "2013-11-28")
    numeric.count_clean(True, False, "2013-11-28")  # a second column, the same shock
    numeric.count_clean(True, True, "2013-02-08")  # a known incident
    numeric.count_clean(False, False, "2013-03-01")
    categorical.count_clean(True, False, "2013-11-28")
    both = run._merge({("avh", "numeric"): numeric, ("avh", "categorical"): categorical}, "avh")
    assert (both.clean, both.false_alarms, both.incident_alarms) == (5, 4, 1)
    assert both.alarm_days == {"2013-11-28", "2013-02-08"}
    assert both.ordinary_alarm_days == {"2013-11-28"}


def test_each_source_gets_the_calendar_its_feed_would_be_configured_with():
    """Flights (national travel people make): the federal holidays with a day either side, not New
    York's own observances; weather stations: none; ``--holidays none`` or a YAML calendar
    override every source."""
    run = load_bench_module("autovalidate/run.py", "bench_autovalidate_run")
    flights = data.Source("flights", (), (), ())
    weather = data.Source("weather", (), (), ())
    us = run.source_calendar(flights, "source")
    assert us is not None and us.holiday("2013-11-29") == "Thanksgiving Day + 1 day"
    assert us.is_holiday("2013-12-24") and not us.is_holiday("2013-11-30")
    assert [d for d in range(10, 21) if us.is_holiday(f"2013-02-{d}")] == [17, 18, 19]  # Washington's
    assert run.source_calendar(weather, "source") is None
    assert run.source_calendar(flights, "none") is None
    only_us = run.source_calendar(weather, "US")
    assert only_us is not None and only_us.is_holiday("2013-11-28") and not only_us.is_holiday("2013-11-29")


def test_new_held_out_feeds_come_last_so_earlier_seeds_keep_their_tests():
    """A source's place in ``SOURCES`` seeds its corruptions: the feeds added for issue 22's
    second round (LaGuardia's weather, the El Nino temperatures) are appended, held out."""
    assert list(data.SOURCES)[:4] == ["flights", "weather", "weather_ewr", "co2"]
    assert {"weather_lga", "elnino"} <= set(data.HELD_OUT) and list(data.SOURCES)[4:] == [
        "weather_lga",
        "elnino",
    ]
    lga = data.weather_lga()
    assert lga.name == "weather_lga" and lga.numeric == ("dewp", "wind_dir", "wind_gust", "precip")
    assert max(len(b) for b in lga.batches) <= 24 and len(lga.traces(60)) == 6
    nino = data.elnino()
    assert [len(b) for b in nino.batches[:2]] == [12, 12] and list(nino.batches[0].columns) == [
        "month",
        "sst",
    ]
    assert nino.dates[0] == "1950-01-01" and len(nino.traces(60)) == 1


def test_windows_as_the_unit_join_consecutive_batches_and_carry_their_incidents_and_days_off():
    """``--unit-rows``: tumbling units of whole batches, the last partial run dropped; a unit has an
    incident of a column when any of its batches has one, and is off when any of its days is."""
    days = tuple(
        pd.DataFrame({"temp": [float(i), float(i) + 0.5], "origin": ["EWR", "LGA"]}) for i in range(7)
    )
    dates = tuple(f"2013-03-0{i + 1}" for i in range(7))
    incidents = {"2013-03-02": ("gap", ("origin",)), "2013-03-04": ("storm", ())}
    source = data.Source("w", days, ("temp",), ("origin",), dates=dates, incidents=incidents)
    assert data.unit_width(source, 0) == 1 and data.unit_width(source, 5) == 3
    assert data.windowed(source, 1) is source
    units = data.windowed(source, 3)
    assert [len(b) for b in units.batches] == [6, 6]  # the seventh day is dropped
    assert units.batches[1]["temp"].tolist() == [3.0, 3.5, 4.0, 4.5, 5.0, 5.5]
    assert units.dates == ("2013-03-01", "2013-03-04")
    assert units.unit_dates == (dates[:3], dates[3:6])
    assert units.incident("2013-03-01", "origin") == "gap" and units.incident("2013-03-01", "temp") is None
    assert units.incident("2013-03-04", "temp") == "storm"
    off = dict.fromkeys(dates, False) | {"2013-03-03": True}
    assert data.unit_flags(units, off) == (True, False)
    assert data.unit_flags(source, off) == (False, False, True, False, False, False, False)
