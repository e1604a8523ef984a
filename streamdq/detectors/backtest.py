"""Replaying a stored metric series through a detector configuration (the core of
``streamdq backtest``): tune a detector on history instead of waiting for new data.

``replay(detector, points)`` runs ``update`` over the points in order, starting from
``initial_state()`` (or a given state) and returns the final state with every (point, verdict)
pair; ``format_report`` renders the flagged points (and optionally all of them) as text lines.
Points are sorted by ``seq`` and duplicates of a seq are judged once (replay safety), so a history
read back with overlapping ranges gives the same answer. Pure Python, runs on the driver; cost is
linear in the number of points and constant per point.

>>> from streamdq.detectors import Point, SimpleThreshold
>>> detector = SimpleThreshold(upper_bound=10.0)
>>> pts = [Point(float(i), v, i) for i, v in enumerate([1.0, 12.0, 3.0])]
>>> state, judged = replay(detector, pts + pts[:1])  # a seq read twice is judged once
>>> [(p.seq, v.anomalous) for p, v in judged]
[(0, False), (1, True), (2, False)]
>>> format_report(detector, judged)[-1]
'simple_threshold: 1 anomalous of 3 points (0 while warming up)'
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from streamdq.detectors.base import Detector, DetectorState, Point, Verdict


def replay(
    detector: Detector, points: Iterable[Point], state: DetectorState | None = None
) -> tuple[DetectorState, list[tuple[Point, Verdict]]]:
    """Judge ``points`` in seq order; returns the final state and each distinct point's verdict."""
    current = detector.initial_state() if state is None else state
    judged: list[tuple[Point, Verdict]] = []
    seen: set[int] = set()
    for point in sorted(points, key=lambda p: p.seq):
        current, verdict = detector.update(current, point)
        if point.seq not in seen:
            seen.add(point.seq)
            judged.append((point, verdict))
    return current, judged


def _time(value: datetime | float) -> str:
    return value.isoformat() if isinstance(value, datetime) else f"{value:g}"


def format_report(
    detector: Detector, judged: list[tuple[Point, Verdict]], *, show_all: bool = False
) -> list[str]:
    """Text lines: one per flagged point (every point with ``show_all``), then a summary line."""
    lines = []
    for point, verdict in judged:
        if verdict.anomalous or show_all:
            mark = "ANOMALY" if verdict.anomalous else ("warmup " if verdict.warming_up else "ok     ")
            lines.append(
                f"{mark} seq={point.seq} time={_time(point.time)} value={point.value} {verdict.message}"
            )
    flagged = sum(1 for _, verdict in judged if verdict.anomalous)
    warming = sum(1 for _, verdict in judged if verdict.warming_up)
    lines.append(f"{detector.TYPE}: {flagged} anomalous of {len(judged)} points ({warming} while warming up)")
    return lines
