"""AlertPolicy.evaluate: de-duplication, resolved, floors, cool-down, rate limit, replay."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from streamdq.alerts import Alert, AlertPolicy
from streamdq.analyzers.metric import Metric
from streamdq.errors import ConfigError
from streamdq.report import Anomaly, Window

T0 = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


def run(policy, reports, state=None):
    out = []
    state = state or {}
    for r in reports:
        alerts, state = policy.evaluate(r, state)
        out.append([a.kind for a in alerts])
    return out, state


def test_dedup_while_failing_then_resolved_once(mk):
    c = mk.constraint
    reports = [
        mk.report(0, [c("a", False)]),
        mk.report(1, [c("a", False)]),
        mk.report(2, [c("a", False)]),
        mk.report(3, [c("a", True)]),
        mk.report(4, [c("a", True)]),
        mk.report(5, [c("a", False)]),
    ]
    kinds, state = run(AlertPolicy(), reports)
    assert kinds == [["violation"], [], [], ["resolved"], [], ["violation"]]
    assert list(state["open"]) == ["orders/a"]


def test_alert_content_and_deterministic_id(mk):
    r = mk.report(7, [mk.constraint("cid-1", False, value=0.42)])
    (alert,), _ = AlertPolicy().evaluate(r, {})
    (again,), _ = AlertPolicy().evaluate(r, {})
    assert alert.alert_id == again.alert_id
    assert alert.dataset == "orders" and alert.severity == "Error" and alert.batch_id == 7
    assert alert.metric_name == "Completeness" and alert.metric_value == 0.42
    assert alert.expected == ">= 0.95" and alert.scope == "batch" and alert.key == "orders/cid-1"
    assert "0.42" in alert.message and ">= 0.95" in alert.message
    other, _ = AlertPolicy().evaluate(mk.report(8, [mk.constraint("cid-1", False)]), {})
    assert other[0].alert_id != alert.alert_id
    assert Alert.from_json(alert.to_json()) == alert


def test_replay_of_last_batch_returns_same_alerts_and_same_state(mk):
    policy = AlertPolicy()
    r = mk.report(3, [mk.constraint("a", False)])
    alerts, state = policy.evaluate(r, {})
    replay_alerts, replay_state = policy.evaluate(r.as_replayed(), json.loads(json.dumps(state)))
    assert [a.alert_id for a in replay_alerts] == [a.alert_id for a in alerts]
    assert replay_state == json.loads(json.dumps(state))
    older, older_state = policy.evaluate(mk.report(2, [mk.constraint("b", False)]), state)
    assert older == [] and older_state == state


def test_state_is_json_and_input_state_not_mutated(mk):
    policy = AlertPolicy(cooldown_seconds=30, rate_limit_per_minute=5)
    _, s1 = policy.evaluate(mk.report(0, [mk.constraint("a", False)]), {})
    frozen = json.dumps(s1, sort_keys=True)
    _, s2 = policy.evaluate(mk.report(1, [mk.constraint("a", True)]), s1)
    assert json.dumps(s1, sort_keys=True) == frozen
    assert json.loads(json.dumps(s2)) == s2


def test_min_rows_floor_suppresses_small_scopes_and_never_resolves_them(mk):
    policy = AlertPolicy(min_rows_floor=10)
    kinds, state = run(
        policy,
        [mk.report(0, [mk.constraint("a", False)], rows=2), mk.report(1, [mk.constraint("a", True)], rows=2)],
    )
    assert kinds == [[], []]
    assert state["suppressed"]["floor"] == 1
    big, _ = run(policy, [mk.report(0, [mk.constraint("a", False)], rows=500)])
    assert big == [["violation"]]


def test_size_floor_is_absolute_change_not_ratio(mk):
    policy = AlertPolicy(min_rows_floor=10)

    def drop(batch, value, lower, upper):
        anomaly = Anomaly(
            "RelativeRateOfChange",
            Metric("Dataset", "Size", "*", value=value),
            "batch",
            value=value,
            lower=lower,
            upper=upper,
            constraint_id="size",
        )
        res = mk.constraint("size", False, name="Size", instance="*", value=value, bound=None)
        return mk.report(batch, [res], rows=int(value), anomalies=(anomaly,))

    assert run(policy, [drop(0, 1.0, 1.6, 2.4)])[0] == [[]]  # 50% drop of 2 rows
    (kinds,), _ = run(policy, [drop(0, 1.0, 900.0, 1100.0)])  # 1000 rows -> 1
    assert kinds == ["anomaly"]


def test_anomaly_with_constraint_id_gives_one_anomaly_alert_with_interval(mk):
    anomaly = Anomaly(
        "OnlineNormal",
        Metric("Column", "Mean", "amount", value=500.0),
        "batch",
        value=500.0,
        lower=4.0,
        upper=6.0,
        score=12.0,
        constraint_id="m",
    )
    r = mk.report(0, [mk.constraint("m", False, name="Mean", value=500.0, bound=None)], anomalies=(anomaly,))
    alerts, _ = AlertPolicy().evaluate(r, {})
    assert [a.kind for a in alerts] == ["anomaly"]
    assert alerts[0].expected == {"lower": 4.0, "upper": 6.0}
    assert "OnlineNormal" in alerts[0].message and "500" in alerts[0].message


def test_free_standing_anomaly_is_one_shot_with_cooldown(mk):
    def anomalous(batch):
        a = Anomaly("PageHinkley", Metric("Column", "Mean", "amount", value=9.0), "window", value=9.0)
        return mk.report(batch, [], anomalies=(a,))

    kinds, _ = run(AlertPolicy(cooldown_seconds=25), [anomalous(0), anomalous(1), anomalous(2), anomalous(3)])
    assert kinds == [["anomaly"], [], [], ["anomaly"]]  # 10 s per batch: 0 s, 30 s
    off, _ = run(AlertPolicy(alert_on_anomalies=False), [anomalous(0)])
    assert off == [[]]


def test_cooldown_holds_back_flapping_and_sends_when_still_failing(mk):
    c = mk.constraint
    policy = AlertPolicy(cooldown_seconds=35)
    kinds, state = run(
        policy,
        [
            mk.report(0, [c("a", False)]),  # t=0 alert
            mk.report(1, [c("a", True)]),  # resolved
            mk.report(2, [c("a", False)]),  # t=20 inside cool-down: held
            mk.report(3, [c("a", False)]),  # t=30 still inside
            mk.report(4, [c("a", False)]),  # t=40 cool-down over, still failing: alert
            mk.report(5, [c("a", False)]),  # dedup
        ],
    )
    assert kinds == [["violation"], ["resolved"], [], [], ["violation"], []]
    assert state["suppressed"]["cooldown"] == 2


def test_rate_limit_defers_open_violations_to_a_later_minute(mk):
    c = mk.constraint
    policy = AlertPolicy(rate_limit_per_minute=2)
    first = [c("a", False), c("b", False), c("c", False)]
    kinds, state = run(
        policy,
        [
            mk.report(0, first, seconds_per_batch=30),
            mk.report(1, first, seconds_per_batch=30),
            mk.report(2, first, seconds_per_batch=30),
        ],
    )
    assert kinds == [["violation", "violation"], [], ["violation"]]
    assert state["suppressed"]["rate_limit"] == 2


def test_renotify_repeats_long_failures(mk):
    kinds, _ = run(
        AlertPolicy(renotify_seconds=25), [mk.report(i, [mk.constraint("a", False)]) for i in range(5)]
    )
    assert kinds == [["violation"], [], [], ["violation"], []]


def test_from_spec_validates_keys_and_types():
    assert AlertPolicy.from_spec({"cooldown_seconds": 60, "rate_limit_per_minute": 10}) == AlertPolicy(
        cooldown_seconds=60, rate_limit_per_minute=10
    )
    with pytest.raises(ConfigError, match=r"alerts\.cooldown: unknown key"):
        AlertPolicy.from_spec({"cooldown": 1})
    with pytest.raises(ConfigError, match=r"alerts\.min_rows_floor: expected a number >= 0, got 'x'"):
        AlertPolicy.from_spec({"min_rows_floor": "x"})
    with pytest.raises(ConfigError, match=r"alerts\.rate_limit_per_minute: expected an integer"):
        AlertPolicy.from_spec({"rate_limit_per_minute": 1.5})


def _window_report(mk, batch_id, outcomes):
    """One report closing one 5 s window per outcome (True = passes) of window constraint 'w'."""
    results = []
    for start_s, ok in outcomes:
        window = Window(T0 + timedelta(seconds=start_s), T0 + timedelta(seconds=start_s + 5))
        c = mk.constraint("w", ok, scope="window")
        results.append(replace(c, window=window))
    r = mk.report(batch_id, results)
    return replace(r, closed_windows=tuple(res.window for res in results))


def test_one_batch_closing_several_windows_judges_each_window_in_order(mk):
    # a backlog batch closes 4 windows: fail, pass, pass, fail -> two incidents, not one
    r = _window_report(mk, 0, [(15, True), (0, False), (5, True), (10, False)])
    alerts, state = AlertPolicy().evaluate(r, {})
    assert [(a.kind, a.window["start"][17:19]) for a in alerts] == [
        ("violation", "00"),
        ("resolved", "05"),
        ("violation", "10"),
        ("resolved", "15"),
    ]
    assert len({a.alert_id for a in alerts}) == 4  # sinks de-duplicate by id: each one must survive
    assert state["open"] == {}
    # consecutive failing windows are still one incident, across and within batches
    alerts, state = AlertPolicy().evaluate(_window_report(mk, 0, [(0, False), (5, False)]), {})
    assert [a.kind for a in alerts] == ["violation"]
    alerts, state = AlertPolicy().evaluate(_window_report(mk, 1, [(10, False), (15, True)]), state)
    assert [a.kind for a in alerts] == ["resolved"]


def test_window_alert_ids_differ_per_window_and_are_stable(mk):
    r = _window_report(mk, 3, [(0, False), (5, True), (10, False)])
    first, _ = AlertPolicy().evaluate(r, {})
    again, _ = AlertPolicy().evaluate(r, {})
    assert [a.alert_id for a in first] == [a.alert_id for a in again]
    assert first[0].alert_id != first[2].alert_id and first[0].kind == first[2].kind == "violation"
