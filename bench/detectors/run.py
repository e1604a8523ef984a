"""Per-point cost of every detector's online ``update`` after 100 and after 10,000 points of history.

For each detector: feed ``history`` points of an hourly seasonal series (sine with period 24, noise,
rare spikes), then time ``--measure`` further updates (amortised: Holt-Winters refits included;
process CPU time, best of ``--repeats`` runs from the same state, interleaved across history lengths)
and record the size of the state (``dump_state`` bytes). Constant cost per point means the two timings
are about equal and the state does not grow.

    python bench/detectors/run.py [--measure 240] [--histories 100,10000] [--repeats 5]

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
    DetectorState,
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


def prepare(detector: Detector, history: int, count: int) -> tuple[DetectorState, list[Point]]:
    """The state after ``history`` points and the next ``count`` points to time."""
    values = series(history + count)
    points = [Point(START + timedelta(hours=i), values[i], i) for i in range(history + count)]
    state = detector.initial_state()
    for point in points[:history]:
        state, _ = detector.update(state, point)
    return state, points[history:]


def timed(detector: Detector, state: DetectorState, points: list[Point]) -> tuple[float, DetectorState]:
    """CPU seconds of the process (all threads) for updating ``state`` with ``points``: CPU time, not
    wall time, because the benchmark machine is shared."""
    started = time.process_time()
    for point in points:
        state, _ = detector.update(state, point)
    return time.process_time() - started, state


def measure(detector: Detector, histories: list[int], count: int, repeats: int) -> list[tuple[float, int]]:
    """Per history: (best microseconds per update over ``repeats`` interleaved runs, state bytes).
    ``update`` is pure, so every run starts from the same state; interleaving the history lengths
    spreads any background load evenly over them."""
    prepared = [prepare(detector, history, count) for history in histories]
    best = [math.inf] * len(histories)
    final: list[DetectorState] = [state for state, _ in prepared]
    for _ in range(repeats):
        for k, (state, points) in enumerate(prepared):
            elapsed, final[k] = timed(detector, state, points)
            best[k] = min(best[k], elapsed)
    return [(best[k] / count * 1e6, len(dump_state(final[k]))) for k in range(len(histories))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--measure", type=int, default=240, help="timed updates per detector and history")
    parser.add_argument("--histories", default="100,10000", help="comma-separated history lengths")
    parser.add_argument("--repeats", type=int, default=5, help="timed runs per history (the best counts)")
    args = parser.parse_args()
    histories = [int(h) for h in args.histories.split(",")]

    results: dict[str, float] = {}
    ratios = []
    print(f"{'detector':<32}" + "".join(f"{f'us/pt@{h}':>14}{f'state@{h}':>12}" for h in histories))
    for detector in DETECTORS:
        name = name_of(detector)
        row = f"{name:<32}"
        costs = []
        for history, (cost, size) in zip(
            histories, measure(detector, histories, args.measure, args.repeats), strict=True
        ):
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
