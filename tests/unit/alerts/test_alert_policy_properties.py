"""Properties of AlertPolicy over random pass/fail sequences (hypothesis)."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from streamdq.alerts import AlertPolicy
from tests.unit.alerts.conftest import constraint, report

KEYS = ("a", "b", "c")
sequences = st.lists(st.fixed_dictionaries({k: st.booleans() for k in KEYS}), min_size=1, max_size=25)


def run(policy, seq, *, replay_every_batch=False, through_json=False):
    state: dict = {}
    emitted = []
    for i, outcome in enumerate(seq):
        r = report(i, [constraint(k, ok) for k, ok in outcome.items()])
        alerts, new_state = policy.evaluate(r, state)
        if replay_every_batch:  # the runner replays the batch: same alerts, same state
            again, again_state = policy.evaluate(r.as_replayed(), new_state)
            assert [a.alert_id for a in again] == [a.alert_id for a in alerts] and again_state == new_state
        state = json.loads(json.dumps(new_state)) if through_json else new_state
        emitted.extend(alerts)
    return emitted


@settings(max_examples=60, deadline=None)
@given(sequences)
def test_without_throttles_alerts_mirror_state_changes(seq):
    emitted = run(AlertPolicy(), seq, replay_every_batch=True)
    for k in KEYS:
        kinds = [a.kind for a in emitted if a.constraint_id == k]
        expected, failing = [], False
        for outcome in seq:
            if not outcome[k] and not failing:
                expected.append("violation")
            if outcome[k] and failing:
                expected.append("resolved")
            failing = not outcome[k]
        assert kinds == expected
    assert len({a.alert_id for a in emitted}) == len(emitted)


@settings(max_examples=60, deadline=None)
@given(sequences, st.integers(0, 60), st.one_of(st.none(), st.integers(1, 4)))
def test_with_throttles_alerts_alternate_and_state_survives_json(seq, cooldown, rate):
    policy = AlertPolicy(cooldown_seconds=cooldown, rate_limit_per_minute=rate)
    emitted = run(policy, seq, through_json=True)
    for k in KEYS:
        kinds = [a.kind for a in emitted if a.constraint_id == k]
        # never two violations without a resolved between them, never a resolved first
        assert all(x != y for x, y in zip(kinds, kinds[1:], strict=False))
        assert not kinds or kinds[0] == "violation"
    assert emitted == run(policy, seq)  # JSON round trip of the state changes nothing
