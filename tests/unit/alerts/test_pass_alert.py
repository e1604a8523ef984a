"""The dataset-level pass alert (measure/check/pass documents) and its Prometheus gauge."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families
from streamdq.connectors.sinks.prometheus import ReportCollector

from streamdq.alerts.alert import alert_id_for
from streamdq.alerts.policy import AlertPolicy
from streamdq.report import BatchReport
from streamdq.result_document import MeasureCheckPass
from tests.unit.alerts.conftest import T0, report


def doc(passed: bool, scope: str = "batch", window: tuple[str, str] | None = None) -> MeasureCheckPass:
    return MeasureCheckPass(
        {"Null Count": 3}, {"no null value": passed, "unique": True}, passed, scope, window
    )


def with_docs(batch_id: int, *docs: MeasureCheckPass) -> BatchReport:
    return replace(report(batch_id, []), measure_check_pass=docs)


def run(policy: AlertPolicy, reports: list[BatchReport]) -> list[list[tuple[str, str]]]:
    state: dict = {}
    out = []
    for r in reports:
        alerts, state = policy.evaluate(r, state)
        out.append([(a.kind, a.alert_id) for a in alerts if a.check == "pass"])
    return out


def test_one_alert_when_pass_turns_false_one_when_it_is_true_again():
    reports = [with_docs(i, doc(p)) for i, p in enumerate([True, False, False, True, True, False])]
    kinds = [[k for k, _ in step] for step in run(AlertPolicy(), reports)]
    assert kinds == [[], ["violation"], [], ["resolved"], [], ["violation"]]


def test_pass_alert_ids_are_deterministic_and_replay_safe():
    policy = AlertPolicy()
    r0, r1 = with_docs(0, doc(True)), with_docs(1, doc(False))
    _, state = policy.evaluate(r0, {})
    alerts, after = policy.evaluate(r1, state)
    (alert,) = [a for a in alerts if a.check == "pass"]
    assert alert.alert_id == alert_id_for("q-1", 1, "pass", "pass:batch", "violation")
    assert alert.severity == "Error" and alert.scope == "batch"
    assert "orders: the dataset does not pass its pass policy (batch scope)" in alert.message
    assert "failed checks: no null value" in alert.message
    again, same = policy.evaluate(r1, after)  # Spark replays the batch: same alert, same id, same state
    assert [a.alert_id for a in again] == [alert.alert_id] and same == after


def test_each_scope_and_closed_window_is_its_own_pass_incident():
    w1 = ((T0).isoformat(), (T0 + timedelta(minutes=1)).isoformat())
    w2 = ((T0 + timedelta(minutes=1)).isoformat(), (T0 + timedelta(minutes=2)).isoformat())
    r = with_docs(4, doc(False, "window", w1), doc(True, "window", w2), doc(True, "batch"))
    alerts, _ = AlertPolicy().evaluate(r, {})
    violation, resolved = [a for a in alerts if a.check == "pass"]  # each window a step, in order
    assert resolved.kind == "resolved" and resolved.window == {"start": w2[0], "end": w2[1]}
    assert violation.scope == "window" and violation.window == {"start": w1[0], "end": w1[1]}
    assert violation.alert_id == alert_id_for("q-1", 4, "pass", "pass:window", "violation", T0)


def test_a_report_without_documents_has_no_pass_alert():
    assert run(AlertPolicy(), [with_docs(0), with_docs(1)]) == [[], []]


def scrape(collector: ReportCollector) -> dict:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(collector)
    out = {}
    for family in text_string_to_metric_families(generate_latest(registry).decode()):
        for s in family.samples:
            if s.name == "streamdq_dataset_pass":
                out[(s.labels["dataset"], s.labels["scope"])] = s.value
    return out


def test_the_dataset_pass_gauge_follows_the_latest_document_per_scope():
    c = ReportCollector()
    assert scrape(c) == {}
    w = ((T0).isoformat(), (T0 + timedelta(minutes=1)).isoformat())
    c.update(with_docs(0, doc(True), doc(False, "window", w), doc(True, "total")), [])
    assert scrape(c) == {("orders", "batch"): 1.0, ("orders", "window"): 0.0, ("orders", "total"): 1.0}
    c.update(with_docs(1, doc(False)), [])
    assert scrape(c)[("orders", "batch")] == 0.0 and scrape(c)[("orders", "window")] == 0.0
    c.update(with_docs(1, doc(True)), [])  # a replayed batch id changes nothing
    assert scrape(c)[("orders", "batch")] == 0.0


def test_documents_round_trip_through_the_stored_report():
    r = with_docs(2, doc(False), doc(True, "window", ("a", "b")))
    back = BatchReport.from_json(r.to_json())
    assert back.measure_check_pass == r.measure_check_pass
    assert r.to_dict()["measure_check_pass"][0] == {
        "scope": "batch",
        "window": None,
        "measure_check_pass": {
            "measure": {"Null Count": 3},
            "check": {"no null value": False, "unique": True},
            "pass": False,
        },
    }


def test_the_console_says_when_the_dataset_does_not_pass():
    from streamdq.connectors.sinks.console import format_report

    assert "NOT PASSED" not in format_report(with_docs(0, doc(True)), [])
    text = format_report(with_docs(1, doc(False)), [])
    assert "  NOT PASSED (batch): failed checks: no null value" in text.splitlines()


def test_pass_alerts_validate_against_the_alert_schema():
    import json
    from pathlib import Path

    import jsonschema

    schema = json.loads((Path(__file__).resolve().parents[3] / "docs" / "alert.schema.json").read_text())
    policy = AlertPolicy()
    _, state = policy.evaluate(with_docs(0, doc(True)), {})
    violation, state = policy.evaluate(with_docs(1, doc(False)), state)
    resolved, _ = policy.evaluate(with_docs(2, doc(True)), state)
    alerts = [a for a in violation + resolved if a.check == "pass"]
    assert [a.kind for a in alerts] == ["violation", "resolved"]
    for alert in alerts:
        jsonschema.validate(json.loads(alert.to_json()), schema)
