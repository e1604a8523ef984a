"""bench/autovalidate/data.py: the incidents the harness reads from the data."""

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
