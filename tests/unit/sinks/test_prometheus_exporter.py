"""Prometheus exporter: private registry, latest values per label set, counters idempotent, HTTP scrape;
one series per (dataset, scope, analyzer with its parameters, where filter); open windows marked;
a relearned constraint replaces its series; anomaly and alert counters exist at 0."""

from __future__ import annotations

import urllib.request

from prometheus_client import REGISTRY, CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families
from streamdq.connectors.sinks.prometheus import PrometheusSink, ReportCollector

from tests.unit.sinks.conftest import alerts_for, make_report


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    out = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            # an empty label value is no label for Prometheus
            out[(s.name, tuple(sorted((k, v) for k, v in s.labels.items() if v != "")))] = s.value
    return out


def scrape(collector: ReportCollector) -> dict:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(collector)
    return samples(generate_latest(registry).decode())


def lab(**kw):
    return tuple(sorted(kw.items()))


def test_values_health_and_counters():
    c = ReportCollector()
    r3 = make_report(3)
    c.update(r3, alerts_for(r3)[0])
    s = scrape(c)
    assert (
        s[
            (
                "streamdq_metric_value",
                lab(dataset="orders", scope="batch", entity="Column", column="amount", metric="Completeness"),
            )
        ]
        == 0.8
    )
    # window scope: the closed window and the one still filling are separate, marked series
    size = {"dataset": "orders", "scope": "window", "entity": "Dataset", "column": "*", "metric": "Size"}
    assert s[("streamdq_metric_value", lab(**size, window="closed"))] == 5400.0
    assert s[("streamdq_metric_value", lab(**size, window="open"))] == 120.0
    assert ("streamdq_metric_value", lab(**size)) not in s
    # distribution-valued and failed metrics are not exported
    assert not [k for k in s if k[0] == "streamdq_metric_value" and dict(k[1])["metric"] == "Histogram"]
    assert not [
        k
        for k in s
        if k[0] == "streamdq_metric_value"
        and dict(k[1])["scope"] == "total"
        and dict(k[1])["metric"] == "Mean"
    ]
    cl = lab(
        dataset="orders",
        check="orders-basic",
        level="Error",
        constraint_id="c-compl-amount",
        constraint="Completeness(amount) >= 0.95",
        scope="batch",
    )
    assert s[("streamdq_constraint_status", cl)] == 1.0
    assert s[("streamdq_constraint_failures_total", cl)] == 1.0
    assert s[("streamdq_check_status", lab(dataset="orders", check="orders-basic", level="Error"))] == 2.0
    assert s[("streamdq_last_batch_id", lab(dataset="orders"))] == 3.0
    assert s[("streamdq_batch_duration_seconds", lab(dataset="orders"))] == 2.0
    assert s[("streamdq_state_commit_seconds", lab(dataset="orders"))] == 0.25
    assert s[("streamdq_rows_per_second", lab(dataset="orders"))] == 500.0
    assert s[("streamdq_input_rows", lab(dataset="orders"))] == 1000.0
    assert (
        s[
            (
                "streamdq_anomalies_total",
                lab(
                    dataset="orders",
                    scope="window",
                    entity="Column",
                    column="amount",
                    metric="Mean",
                    detector="OnlineNormal",
                    constraint_id="c-anom-mean",
                ),
            )
        ]
        == 1.0
    )
    assert s[("streamdq_alerts_total", lab(dataset="orders", kind="violation", severity="Error"))] == 1.0

    assert c.update(r3.as_replayed(), alerts_for(r3)[0]) is False  # replay: nothing counted twice
    r4 = make_report(4, failing=False)
    c.update(r4, [])
    s = scrape(c)
    assert s[("streamdq_constraint_status", cl)] == 0.0
    assert s[("streamdq_constraint_failures_total", cl)] == 1.0
    assert s[("streamdq_batches_total", lab(dataset="orders"))] == 2.0
    assert s[("streamdq_rows_total", lab(dataset="orders", counter="input_rows"))] == 2000.0
    assert s[("streamdq_last_batch_id", lab(dataset="orders"))] == 4.0


def test_exporter_serves_its_own_registry_over_http():
    a, b = PrometheusSink(port=0), PrometheusSink(port=0)
    try:
        a.emit(make_report(1), [])
        with urllib.request.urlopen(a.url, timeout=5) as resp:
            text_a = resp.read().decode()
        with urllib.request.urlopen(b.url, timeout=5) as resp:
            text_b = resp.read().decode()
        assert samples(text_a)[("streamdq_last_batch_id", lab(dataset="orders"))] == 1.0
        assert ("streamdq_last_batch_id", lab(dataset="orders")) not in samples(text_b)
        assert b"streamdq_" not in generate_latest(REGISTRY)  # no global state
    finally:
        a.close()
        b.close()


def _key(spec: dict) -> str:
    import json

    return json.dumps(spec, sort_keys=True, separators=(",", ":"))


def test_parameters_and_where_filters_are_separate_series():
    """has_mean(x) and has_mean(x, where=...) and quantiles 0.5 / 0.9 of one column: four series."""
    from dataclasses import replace

    from streamdq.analyzers.metric import Metric
    from streamdq.report import ScopedMetric

    long_where = "dep_delay > 0 AND carrier IN (" + ", ".join(f"'C{i}'" for i in range(40)) + ")"
    metrics = (
        ScopedMetric(
            "batch",
            Metric("Column", "Mean", "dep_delay", value=1.891),
            None,
            _key({"analyzer": "Mean", "column": "dep_delay"}),
        ),
        ScopedMetric(
            "batch",
            Metric("Column", "Mean", "dep_delay", value=5.55),
            None,
            _key({"analyzer": "Mean", "column": "dep_delay", "where": "dep_delay > 0"}),
        ),
        ScopedMetric(
            "batch",
            Metric("Column", "Mean", "dep_delay", value=7.5),
            None,
            _key({"analyzer": "Mean", "column": "dep_delay", "where": long_where}),
        ),
        ScopedMetric(
            "batch",
            Metric("Column", "ApproxQuantile", "dep_delay", value=2.0),
            None,
            _key({"analyzer": "ApproxQuantile", "column": "dep_delay", "quantile": 0.5, "k": 200}),
        ),
        ScopedMetric(
            "batch",
            Metric("Column", "ApproxQuantile", "dep_delay", value=40.0),
            None,
            _key({"analyzer": "ApproxQuantile", "column": "dep_delay", "quantile": 0.9, "k": 200}),
        ),
    )
    c = ReportCollector()
    c.update(replace(make_report(1), metrics=metrics), [])
    got = {
        dict(k[1]).get("params", ""): v
        for k, v in scrape(c).items()
        if k[0] == "streamdq_metric_value" and dict(k[1])["metric"] == "ApproxQuantile"
    }
    assert got == {"k=200,quantile=0.5": 2.0, "k=200,quantile=0.9": 40.0}
    means = {
        (dict(k[1]).get("where", ""), dict(k[1]).get("where_id", "")): v
        for k, v in scrape(c).items()
        if k[0] == "streamdq_metric_value" and dict(k[1])["metric"] == "Mean"
    }
    assert len(means) == 3 and sorted(means.values()) == [1.891, 5.55, 7.5]
    assert means[("", "")] == 1.891
    (filtered,) = [k for k, v in means.items() if v == 5.55]
    assert filtered[0] == "dep_delay > 0" and len(filtered[1]) == 8
    (long,) = [k for k, v in means.items() if v == 7.5]
    assert len(long[0]) <= 64 and long[0].startswith("dep_delay > 0 AND carrier IN") and "~" in long[0]
    assert long[1] != filtered[1]


def test_open_window_series_goes_when_the_window_closes():
    from dataclasses import replace
    from datetime import timedelta

    from tests.unit.sinks.conftest import W2

    c = ReportCollector()
    c.update(make_report(1), [])
    size = {"dataset": "orders", "scope": "window", "entity": "Dataset", "column": "*", "metric": "Size"}
    assert scrape(c)[("streamdq_metric_value", lab(**size, window="open"))] == 120.0
    # the next batch closes W2 (its final value) and touches no newer window
    from streamdq.analyzers.metric import Metric
    from streamdq.report import ScopedMetric

    closing = replace(
        make_report(2, failing=False),
        metrics=(ScopedMetric("window", Metric("Dataset", "Size", "*", value=900.0), W2),),
        closed_windows=(W2,),
        watermark=W2.end + timedelta(seconds=5),
    )
    c.update(closing, [])
    s = scrape(c)
    assert s[("streamdq_metric_value", lab(**size, window="closed"))] == 900.0
    assert ("streamdq_metric_value", lab(**size, window="open")) not in s


def _learned(batch_id: int, constraints: list[tuple[str, str, bool]]):
    """A report whose auto-validation check judged ``(constraint_id, text, failed)``."""
    from dataclasses import replace

    from streamdq.report import CheckResult, ConstraintResult

    results = tuple(
        ConstraintResult(
            check="auto-validated amount",
            level="Warning",
            constraint=text,
            constraint_id=cid,
            status="Failure" if failed else "Success",
            scope="window",
        )
        for cid, text, failed in constraints
    )
    status = "Warning" if any(f for _, _, f in constraints) else "Success"
    check = CheckResult("auto-validated amount", "Warning", status, results)
    return replace(make_report(batch_id, failing=False), check_results=(check,), anomalies=())


def test_a_relearned_program_replaces_its_series():
    c = ReportCollector()
    c.update(
        _learned(
            1,
            [
                ("id-mean", "learned Mean(amount) in [1, 2]", True),
                ("id-max", "learned Max(amount) in [0, 9]", False),
            ],
        ),
        [],
    )
    # relearned: Mean gets new bounds and passes, Max is no longer in the program
    c.update(_learned(2, [("id-mean", "learned Mean(amount) in [1, 3]", False)]), [])
    s = scrape(c)
    status = {dict(k[1])["constraint"]: v for k, v in s.items() if k[0] == "streamdq_constraint_status"}
    assert status == {"learned Mean(amount) in [1, 3]": 0.0}
    failures = {
        (dict(k[1])["constraint_id"], dict(k[1])["constraint"]): v
        for k, v in s.items()
        if k[0] == "streamdq_constraint_failures_total" and dict(k[1])["check"] == "auto-validated amount"
    }
    assert failures == {
        ("id-mean", "learned Mean(amount) in [1, 3]"): 1.0,
        ("id-max", "learned Max(amount) in [0, 9]"): 0.0,
    }


def test_anomaly_and_alert_counters_exist_at_zero_before_their_first_event():
    from dataclasses import replace

    from streamdq.analyzers.metric import Metric
    from streamdq.report import CheckResult, ConstraintResult

    result = ConstraintResult(
        check="orders-drift",
        level="Warning",
        constraint="has_no_anomalies(metric={'analyzer': 'Mean', 'column': 'amount'}, detector={'type': 'online_normal'}) [window]",
        constraint_id="c-anom-mean",
        status="Success",
        metric=Metric("Column", "Mean", "amount", value=5.0),
        scope="window",
    )
    quiet = replace(
        make_report(1, failing=False),
        check_results=(CheckResult("orders-drift", "Warning", "Success", (result,)),),
    )
    c = ReportCollector()
    c.update(quiet, [])
    s = scrape(c)
    anomaly = lab(
        dataset="orders",
        scope="window",
        entity="Column",
        column="amount",
        metric="Mean",
        detector="online_normal",
        constraint_id="c-anom-mean",
    )
    assert s[("streamdq_anomalies_total", anomaly)] == 0.0
    for kind in ("violation", "anomaly", "resolved"):
        assert s[("streamdq_alerts_total", lab(dataset="orders", kind=kind, severity="Warning"))] == 0.0


def test_query_status_tells_idle_from_busy():
    from streamdq.query_status import QueryStatus

    c = ReportCollector()
    c.query_status(QueryStatus("orders", at=1000.0, active=True, waiting_for_data=True))
    s = scrape(c)
    assert s[("streamdq_query_heartbeat_timestamp_seconds", lab(dataset="orders"))] == 1000.0
    assert s[("streamdq_query_waiting_for_data", lab(dataset="orders"))] == 1.0
    c.query_status(QueryStatus("orders", at=1010.0, active=True, waiting_for_data=False))
    assert scrape(c)[("streamdq_query_waiting_for_data", lab(dataset="orders"))] == 0.0
    # a query that is gone does not move the heartbeat on
    c.query_status(QueryStatus("orders", at=1020.0, active=False, waiting_for_data=False))
    assert scrape(c)[("streamdq_query_heartbeat_timestamp_seconds", lab(dataset="orders"))] == 1010.0
