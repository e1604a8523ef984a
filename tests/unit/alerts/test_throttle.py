"""One cool-down / rate-limit rule (streamdq.alerts.throttle.Throttle) for the persisted alert
policy and the in-memory per-sink valve: both hold back the same alerts, and neither lets a
``resolved`` alert use up the rate limit."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from hypothesis import given, settings
from hypothesis import strategies as st
from streamdq.connectors.sinks import base

from streamdq.alerts import AlertPolicy, AlertThrottle, Throttle
from tests.unit.alerts.conftest import constraint, report


def test_the_sinks_keep_their_old_import_name():
    assert base.AlertThrottle is AlertThrottle
    valve = AlertThrottle(cooldown_seconds=30, rate_limit_per_minute=2)
    assert valve.rule == Throttle(30, 2) and valve.cooldown_seconds == 30 and valve.rate_limit_per_minute == 2


def test_policy_uses_the_throttle_rule():
    assert AlertPolicy(cooldown_seconds=5, rate_limit_per_minute=3).throttle == Throttle(5, 3)


def test_a_resolved_alert_does_not_use_up_the_policys_rate_limit():
    """Rate limit: at most N violation/anomaly alerts per minute (docs/alerts.md); a resolution
    in the same minute must not hold back a new violation (it did when resolutions were counted)."""
    policy = AlertPolicy(rate_limit_per_minute=2)
    state: dict = {}
    kinds = []
    for batch, results in enumerate(
        [
            [constraint("a", False), constraint("b", True)],  # t=0: a violation
            [constraint("a", True), constraint("b", True)],  # t=10: a resolved
            [constraint("a", True), constraint("b", False)],  # t=20: b violation (2nd of the minute)
        ]
    ):
        alerts, state = policy.evaluate(report(batch, results), state)
        kinds.append([(a.kind, a.constraint_id) for a in alerts])
    assert kinds == [[("violation", "a")], [("resolved", "a")], [("violation", "b")]]
    assert "rate_limit" not in state["suppressed"]


@settings(max_examples=80, deadline=None)
@given(
    failing=st.lists(st.lists(st.sampled_from("abc"), max_size=3, unique=True), min_size=1, max_size=12),
    cooldown=st.integers(0, 45),
    rate=st.one_of(st.none(), st.integers(1, 3)),
)
def test_policy_and_sink_valve_hold_back_the_same_fresh_alerts(failing, cooldown, rate):
    """With de-duplication out of the way (renotify every batch, nothing ever resolves), the
    policy's throttle and a sink's ``AlertThrottle`` let the same alerts through."""
    policy = AlertPolicy(cooldown_seconds=cooldown, rate_limit_per_minute=rate, renotify_seconds=0)
    valve = AlertThrottle(cooldown_seconds=cooldown, rate_limit_per_minute=rate)
    state: dict = {}
    for batch, keys in enumerate(failing):
        r = report(batch, [constraint(k, False) for k in keys])
        through_policy, state = policy.evaluate(r, state)
        unthrottled, _ = AlertPolicy(renotify_seconds=0).evaluate(r, {})
        through_valve = valve.admit(unthrottled)
        assert [a.constraint_id for a in through_policy] == [a.constraint_id for a in through_valve]


def test_valve_window_is_a_sliding_minute():
    (alert,), _ = AlertPolicy().evaluate(report(0, [constraint("a", False)]), {})
    valve = AlertThrottle(rate_limit_per_minute=1)

    def at(seconds: float, key: str):
        return replace(
            alert, constraint_id=key, processing_time=alert.processing_time + timedelta(seconds=seconds)
        )

    assert valve.admit([at(0, "a"), at(59, "b")]) == [at(0, "a")]
    assert valve.admit([at(60, "c")]) == [at(60, "c")] and valve.held_back == 1
