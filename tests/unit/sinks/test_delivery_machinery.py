"""BackgroundRetrier (backoff, permanent errors, bounded queue) and AlertJournal (dedup, bound, reopen)."""

from __future__ import annotations

import threading
import time

from streamdq.connectors.sinks.base import BackgroundRetrier, PermanentDeliveryError, filter_alerts
from streamdq.connectors.sinks.journal import AlertJournal

from tests.unit.sinks.conftest import alerts_for, make_report


def test_retrier_retries_with_growing_delays_until_delivered():
    calls: list[float] = []
    got: list[str] = []

    def deliver(item: str) -> None:
        calls.append(time.monotonic())
        if len(calls) < 4:
            raise ConnectionError("down")
        got.append(item)

    r: BackgroundRetrier[str] = BackgroundRetrier("t", deliver, initial_backoff=0.05, max_backoff=1.0)
    r.submit("a")
    assert r.flush(10)
    r.close()
    assert got == ["a"] and len(calls) == 4
    gaps = [b - a for a, b in zip(calls, calls[1:], strict=False)]
    assert gaps[0] >= 0.045 and gaps[1] >= 0.095 and gaps[2] >= 0.19  # 0.05, 0.1, 0.2
    assert r.delivered == 1 and r.last_error == "ConnectionError: down"


def test_retrier_drops_permanent_failures_and_keeps_going():
    got: list[int] = []

    def deliver(item: int) -> None:
        if item == 1:
            raise PermanentDeliveryError("HTTP 400")
        got.append(item)

    r: BackgroundRetrier[int] = BackgroundRetrier("t", deliver, initial_backoff=0.01)
    for i in range(3):
        r.submit(i)
    assert r.flush(5)
    r.close()
    assert got == [0, 2] and r.failed == 1


def test_retrier_submit_never_blocks_and_queue_is_bounded():
    gate = threading.Event()
    got: list[int] = []

    def deliver(item: int) -> None:
        gate.wait()
        got.append(item)

    r: BackgroundRetrier[int] = BackgroundRetrier("t", deliver, max_queue=3)
    start = time.monotonic()
    for i in range(10):
        r.submit(i)
    assert time.monotonic() - start < 0.5
    gate.set()
    assert r.flush(5)
    r.close()
    assert r.dropped >= 6 and got[-3:] == [7, 8, 9]


def test_journal_dedups_by_alert_id_bounds_and_survives_reopen(tmp_path):
    path = tmp_path / "j.sqlite"
    j = AlertJournal(path, max_pending=3)
    assert j.add([("a", "k", "1"), ("b", "k", "2")]) == 2
    assert j.add([("a", "k", "1")]) == 0
    first = j.pending()
    j.mark_delivered(first[0].seq, 0, 10)
    assert j.add([("a", "k", "1")]) == 0  # acknowledged: never queued again
    j.add([("c", "k", "3"), ("d", "k", "4"), ("e", "k", "5")])
    assert [e.alert_id for e in j.pending()] == ["c", "d", "e"] and j.dropped == 1
    j.close()
    j2 = AlertJournal(path, max_pending=3)
    assert [e.alert_id for e in j2.pending()] == ["c", "d", "e"] and j2.delivered_count() == 1
    j2.close()


def test_filter_alerts_by_severity_and_kind():
    alerts, _ = alerts_for(make_report(2))
    assert {a.kind for a in filter_alerts(alerts, min_severity="Error")} == {"violation"}
    assert {a.kind for a in filter_alerts(alerts, kinds=["anomaly"])} == {"anomaly"}


def test_per_sink_throttle_cooldown_rate_limit_and_resolved_always_pass():
    from dataclasses import replace
    from datetime import timedelta

    from streamdq.connectors.sinks.base import AlertThrottle

    (violation, _anomaly), state = alerts_for(make_report(2))
    (resolved,), _ = alerts_for(make_report(3, failing=False), state)

    def at(alert, seconds, key="c"):
        return replace(
            alert, processing_time=violation.processing_time + timedelta(seconds=seconds), constraint_id=key
        )

    t = AlertThrottle(cooldown_seconds=30)
    assert t.admit([at(violation, 0)]) and not t.admit([at(violation, 10)]) and t.admit([at(violation, 31)])
    assert t.admit([at(resolved, 32)]) and t.held_back == 1
    r = AlertThrottle(rate_limit_per_minute=2)
    admitted = r.admit([at(violation, 0, "a"), at(violation, 1, "b"), at(violation, 2, "c")])
    assert [a.constraint_id for a in admitted] == ["a", "b"]
    assert [a.constraint_id for a in r.admit([at(violation, 61, "d")])] == ["d"]


def test_journal_requeues_alerts_whose_offset_the_broker_hands_out_again(tmp_path):
    j = AlertJournal(tmp_path / "j.sqlite")
    j.add([("a", "k", "1"), ("b", "k", "2"), ("c", "k", "3"), ("x", "k", "4")])
    a, b, c, x = j.pending()
    assert j.mark_delivered(a.seq, 0, 5) == 0
    assert j.mark_delivered(b.seq, 0, 6) == 0
    assert j.mark_delivered(x.seq, 1, 6) == 0  # another partition: its offsets are its own
    # the broker lost offsets 5 and 6 of partition 0 and gives 5 to the next alert
    assert j.mark_delivered(c.seq, 0, 5) == 2
    assert [e.alert_id for e in j.pending()] == ["a", "b"] and j.lost == 2
    assert j.delivered_count() == 2  # c and x
    assert j.mark_delivered(a.seq, 0, 6) == 0 and j.mark_delivered(b.seq, 0, 7) == 0
    assert j.pending() == [] and j.lost == 2
    j.add([("y", "k", "5")])
    assert j.mark_delivered(j.pending()[0].seq, 0, -1) == 0  # acks=0: the broker gives no offset
    assert j.pending() == [] and j.lost == 2
    j.close()
