"""Per-point cost of every detector's online ``update`` after 100 and after 10,000 points of history.

For each detector: feed ``history`` points of an hourly seasonal series (sine with period 24, noise,
rare spikes), then time ``--measure`` further updates (amortised: Holt-Winters refits included; best
of three runs from the same state) and record the size of the state (``dump_state`` bytes). Constant cost per point means the two timings
are about equal and the state does not grow.

    python bench/detectors/run.py [--measure 240] [--histories 100,10000]

Last line: ``RESULT detectors key=value ...`` with microseconds per point for each detector and
history length, and ``max_ratio`` = the largest cost(10,000) / cost(100) over all detectors.
"""

from __future__ import annotations

import argparse
import math
import time
from datetime import UTC, datetime, timedelta

import numpy as np

from streamdq.detectors import (
    AbsoluteChange,
    Adwin,
    BatchNormal,
    Detector,
    HoltWinters,
    OnlineNormal,
    PageHinkley,
    Point,
    RelativeRateOfChange,
    RiverPredictive,
    SeasonalBuckets,
    SimpleThreshold,
    dump_state,
)

START = datetime(2026, 1, 5, tzinfo=UTC)

DETECTORS: list[Detector] = [
    OnlineNormal(),
    BatchNormal(),
    SimpleThreshold(lower_bound=0.0, upper_bound=200.0),
    AbsoluteChange(-30.0, 30.0, order=2),
    RelativeRateOfChange(0.5, 2.0),
    HoltWinters(period=24, refit_every=24),
    SeasonalBuckets(bucket="hour_of_week"),
    RiverPredictive(model="snarimax", period=24),
    RiverPredictive(model="holt_winters", period=24, warmup=48),
    Adwin(),
    PageHinkley(),
]


def series(n: int, seed: int = 0) -> list[float]:
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    values = 100 + 20 * np.sin(2 * math.pi * t / 24) + rng.normal(0, 1, n)
    values[rng.random(n) < 0.005] += 40
    return [float(v) for v in values]


def name_of(detector: Detector) -> str:
    model = getattr(detector, "model", None)
    return f"{detector.TYPE}_{model}" if isinstance(model, str) else detector.TYPE


def measure(detector: Detector, history: int, count: int, repeats: int = 3) -> tuple[float, int]:
    """Microseconds per update (best of ``repeats`` runs of the same ``count`` updates from the same
    state: ``update`` is pure, and the best run is the least disturbed by other load) and state bytes."""
    values = series(history + count)
    points = [Point(START + timedelta(hours=i), values[i], i) for i in range(history + count)]
    state = detector.initial_state()
    for point in points[:history]:
        state, _ = detector.update(state, point)
    best = math.inf
    for _ in range(repeats):
        current = state
        started = time.perf_counter()
        for point in points[history:]:
            current, _ = detector.update(current, point)
        best = min(best, time.perf_counter() - started)
    return best / count * 1e6, len(dump_state(current))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--measure", type=int, default=240, help="timed updates per detector and history")
    parser.add_argument("--histories", default="100,10000", help="comma-separated history lengths")
    args = parser.parse_args()
    histories = [int(h) for h in args.histories.split(",")]

    results: dict[str, float] = {}
    ratios = []
    print(f"{'detector':<32}" + "".join(f"{f'us/pt@{h}':>14}{f'state@{h}':>12}" for h in histories))
    for detector in DETECTORS:
        name = name_of(detector)
        row = f"{name:<32}"
        costs = []
        for history in histories:
            cost, size = measure(detector, history, args.measure)
            costs.append(cost)
            results[f"{name}_us_{history}"] = cost
            results[f"{name}_state_bytes_{history}"] = size
            row += f"{cost:>14.1f}{size:>12}"
        ratios.append(costs[-1] / costs[0])
        print(row, flush=True)
    summary = " ".join(
        f"{key}={value:.1f}" if "_us_" in key else f"{key}={int(value)}" for key, value in results.items()
    )
    print(f"RESULT detectors {summary} max_ratio={max(ratios):.2f} measured_points={args.measure}")


if __name__ == "__main__":
    main()
