"""has_no_anomalies judged by AnomalyEvaluator through the real checks API (no Spark needed)."""

from __future__ import annotations

from streamdq.analyzers.metric import Metric
from streamdq.checks import Check, Level
from streamdq.checks.kinds import make
from streamdq.detectors.evaluator import AnomalyEvaluator, series_key, validate_detector_spec
from streamdq.report import FAILURE, SUCCESS

MEAN = make("Mean", column="amount")
CHECK = Check(Level.WARNING, "orders").has_no_anomalies(
    MEAN, {"type": "batch_normal", "min_points": 3, "lower_factor": 3, "upper_factor": 3}, scope="window"
)


def point(value: float | None) -> Metric:
    if value is None:
        return Metric("Column", "Mean", "amount", failure="no rows", empty=True)
    return Metric("Column", "Mean", "amount", value=value)


def judge(evaluator: AnomalyEvaluator, value: float | None, seq: int, dataset: str = "orders"):
    context = {"anomaly_evaluator": evaluator, "seq": seq, "dataset": dataset}
    return CHECK.evaluate({MEAN: point(value)}, scope="window", context=context).constraint_results[0]


def test_series_is_judged_point_by_point_with_warm_up() -> None:
    evaluator = AnomalyEvaluator()
    results = [judge(evaluator, v, i) for i, v in enumerate([10.0, 10.5, 9.5, 10.2, 9.8, 10.1, 30.0])]
    assert [r.status for r in results] == [SUCCESS] * 6 + [FAILURE]
    assert results[0].message == "warming up: waiting for 3 more points"
    assert results[3].message is None
    assert results[6].message.startswith("anomaly (batch_normal): value 30.0 is not in bounds")
    verdict = results[6].verdict  # returned with the result, not kept in the evaluator
    assert verdict.anomalous and verdict.upper is not None and verdict.upper < 30.0
    assert results[0].verdict.warming_up and not results[3].verdict.anomalous


def test_replayed_point_keeps_state_and_verdict() -> None:
    evaluator = AnomalyEvaluator()
    for i, v in enumerate([10.0, 10.5, 9.5, 10.2, 30.0]):
        last = judge(evaluator, v, i)
    before = evaluator.dump()
    again = judge(evaluator, 10.0, 4)  # batch 4 replayed after a restart: same verdict, no update
    assert (again.status, again.message) == (last.status, last.message) == (FAILURE, last.message)
    assert evaluator.dump() == before


def test_state_survives_dump_and_load_and_is_per_dataset() -> None:
    evaluator = AnomalyEvaluator()
    for i, v in enumerate([10.0, 10.5, 9.5, 10.2]):
        judge(evaluator, v, i)
    restored = AnomalyEvaluator.load(evaluator.dump())
    assert judge(restored, 30.0, 4).status == FAILURE
    assert judge(restored, 30.0, 4, dataset="other").message == "warming up: waiting for 3 more points"
    assert len(restored.states) == 2
    key = series_key("orders", CHECK.constraints[0])
    assert key in restored.states and key != series_key("other", CHECK.constraints[0])


def test_failed_metric_fails_and_missing_seq_is_explained() -> None:
    evaluator = AnomalyEvaluator()
    result = judge(evaluator, None, 0)
    assert result.status == FAILURE and result.message == "no rows"
    (state,) = evaluator.states.values()
    assert state["last_seq"] == 0 and state["core"]["stats"][0] == 0  # advanced with a missing value
    no_seq = CHECK.evaluate({MEAN: point(1.0)}, scope="window", context={"anomaly_evaluator": evaluator})
    assert "context['seq']" in str(no_seq.constraint_results[0].message)


def test_the_evaluator_in_the_context_judges_and_validate_detector_spec() -> None:
    evaluator = AnomalyEvaluator()
    context = {"seq": 0, "anomaly_evaluator": evaluator}
    result = CHECK.evaluate({MEAN: point(1.0)}, scope="window", context=context).constraint_results[0]
    assert result.status == SUCCESS and len(evaluator.states) == 1
    assert validate_detector_spec({"type": "online_normal"}) is None
    assert validate_detector_spec({"type": "online_normal", "lower": 3}) == (
        "detector.lower",
        "unknown key (detector online_normal); fix: did you mean 'lower_factor'? allowed: "
        "ignore_start_percentage, learn_from_anomalies, lower_factor, min_points, relearn_after, upper_factor",
    )


def test_yaml_has_no_anomalies_with_holt_winters_on_window_row_counts() -> None:
    from streamdq.checks.spec import loads_suite

    suite = loads_suite(
        "checks:\n"
        "- description: orders volume\n"
        "  level: warning\n"
        "  constraints:\n"
        "  - has_no_anomalies:\n"
        "      metric: {analyzer: Size}\n"
        "      detector: {type: holt_winters, period: 4, refit_every: 4}\n"
        "      scope: window\n"
    )
    (check,) = suite.checks
    (constraint,) = check.constraints
    evaluator = AnomalyEvaluator()
    pattern = [100.0, 200.0, 300.0, 200.0]
    series = pattern * 5 + [100.0, 900.0, 300.0]
    statuses = []
    for seq, value in enumerate(series):
        metric = Metric("Dataset", "Size", "*", value=value)
        context = {"anomaly_evaluator": evaluator, "seq": seq, "time": float(seq * 3600), "dataset": "orders"}
        statuses.append(check.evaluate({constraint.analyzer: metric}, scope="window", context=context))
    flagged = [i for i, r in enumerate(statuses) if r.constraint_results[0].status == FAILURE]
    assert flagged == [21]
    assert str(statuses[0].constraint_results[0].message).startswith("warming up: waiting for 7 more points")


def test_empty_metric_under_where_passes_like_every_constraint() -> None:
    filtered = Check(Level.WARNING, "orders").has_no_anomalies(
        MEAN, {"type": "batch_normal"}, scope="window", where="country = 'DE'"
    )
    (constraint,) = filtered.constraints
    evaluator = AnomalyEvaluator()
    context = {"anomaly_evaluator": evaluator, "seq": 0}
    result = filtered.evaluate({constraint.analyzer: point(None)}, scope="window", context=context)
    assert result.constraint_results[0].status == SUCCESS
    (state,) = evaluator.states.values()
    assert state["last_seq"] == 0
