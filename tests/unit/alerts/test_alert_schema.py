"""Alerts produced by the policy validate against the shipped JSON Schema (docs/alert.schema.json)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema

from streamdq.alerts import SCHEMA, Alert, AlertPolicy, alert_id_for
from streamdq.analyzers.metric import Metric
from streamdq.report import Anomaly

SCHEMA_FILE = Path(__file__).resolve().parents[3] / "docs" / "alert.schema.json"


def test_every_kind_validates_against_the_schema(mk):
    schema = json.loads(SCHEMA_FILE.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    policy = AlertPolicy()
    free = Anomaly(
        "OnlineNormal", Metric("Column", "Mean", "amount", value=float("inf")), "total", value=float("inf")
    )
    a1, state = policy.evaluate(mk.report(0, [mk.constraint("a", False)], anomalies=(free,)), {})
    a2, _ = policy.evaluate(mk.report(1, [mk.constraint("a", True)]), state)
    kinds = sorted(a.kind for a in a1 + a2)
    assert kinds == ["anomaly", "resolved", "violation"]
    for alert in a1 + a2:
        doc = json.loads(alert.to_json())
        jsonschema.validate(doc, schema)
        assert doc["schema"] == SCHEMA
        assert Alert.from_dict(doc).alert_id == alert.alert_id


def test_alert_id_depends_on_each_part():
    base = alert_id_for("q", 1, "c", "k", "violation")
    assert len(base) == 32
    assert (
        len(
            {
                base,
                alert_id_for("q2", 1, "c", "k", "violation"),
                alert_id_for("q", 2, "c", "k", "violation"),
                alert_id_for("q", 1, "c2", "k", "violation"),
                alert_id_for("q", 1, "c", "k2", "violation"),
                alert_id_for("q", 1, "c", "k", "resolved"),
            }
        )
        == 6
    )


def test_alert_id_of_a_window_depends_on_the_window_and_keeps_the_old_form_without():
    import hashlib
    import json
    from datetime import UTC, datetime

    w0, w1 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC), datetime(2026, 1, 1, 12, 5, tzinfo=UTC)
    ids = {alert_id_for("q", 1, "c", "k", "violation", w) for w in (None, w0, w1)}
    assert len(ids) == 3
    # ids of batch/total-scope alerts are unchanged (stored and published ids stay valid)
    raw = json.dumps(["q", 1, "c", "k", "violation"], separators=(",", ":"))
    assert alert_id_for("q", 1, "c", "k", "violation") == hashlib.sha256(raw.encode()).hexdigest()[:32]
