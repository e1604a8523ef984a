"""Backtest replay: order, duplicate seqs, report lines."""

from __future__ import annotations

from streamdq.detectors import BatchNormal, Point
from streamdq.detectors.backtest import format_report, replay


def test_replay_sorts_dedupes_and_reports() -> None:
    values = [10.0, 10.4, 9.6, 10.1, 9.9, 30.0, 10.0]
    points = [Point(float(i * 3600), v, i) for i, v in enumerate(values)]
    shuffled = [points[5], *points[:3], points[2], *points[3:5], points[6], points[5]]
    detector = BatchNormal(min_points=3)
    state, judged = replay(detector, shuffled)
    assert [p.seq for p, _ in judged] == list(range(7))
    assert [i for i, (_, v) in enumerate(judged) if v.anomalous] == [5]
    assert state["last_seq"] == 6
    lines = format_report(detector, judged)
    assert lines[0].startswith("ANOMALY seq=5 time=18000 value=30.0 value 30.0 is not in bounds")
    assert lines[-1] == "batch_normal: 1 anomalous of 7 points (3 while warming up)"
    assert len(format_report(detector, judged, show_all=True)) == 8


def test_replay_continues_from_a_stored_state() -> None:
    detector = BatchNormal(min_points=3)
    points = [Point(float(i), v, i) for i, v in enumerate([10.0, 10.4, 9.6, 10.1, 30.0])]
    state, _ = replay(detector, points[:3])
    _, judged = replay(detector, points[3:], state)
    assert [v.anomalous for _, v in judged] == [False, True]
