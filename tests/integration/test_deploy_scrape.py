"""deploy/'s rules and dashboard against a real exporter: a ``PrometheusSink`` started here on a free
loopback port is fed reports and a heartbeat, scraped over HTTP, and every metric name and label a
rule, a panel, a variable or a legend uses must be in that scrape. The dashboard's late/quarantined
panel selects row counters only (not ``spark_jobs``), and the alert and anomaly counters its
panels read exist (at 0) before their first event."""

from __future__ import annotations

import re
import urllib.request
from dataclasses import replace

import pytest
from prometheus_client.parser import text_string_to_metric_families
from streamdq.connectors.sinks.prometheus import PrometheusSink

from streamdq.analyzers import ApproxQuantile, Mean
from streamdq.analyzers.metric import Metric
from streamdq.query_status import QueryStatus
from streamdq.report import CheckResult, ConstraintResult, ScopedMetric
from tests.integration.test_prometheus_scrape import check_refs, dashboard_queries, rule_exprs
from tests.unit.sinks.conftest import W2, alerts_for, make_report

pytestmark = pytest.mark.integration

Sample = tuple[str, dict[str, str], float]


def scrape(url: str) -> list[Sample]:
    with urllib.request.urlopen(url, timeout=10) as resp:
        text = resp.read().decode()
    return [
        (s.name, {k: v for k, v in s.labels.items() if v != ""}, s.value)  # "" is no label
        for family in text_string_to_metric_families(text)
        for s in family.samples
    ]


def key(analyzer) -> str:
    return analyzer.key()


def anomaly_check(status: str = "Success") -> CheckResult:
    result = ConstraintResult(
        check="orders-drift",
        level="Warning",
        constraint="has_no_anomalies(metric={'analyzer': 'Mean', 'column': 'amount'}, "
        "detector={'type': 'online_normal'}) [window]",
        constraint_id="c-anom-mean",
        status=status,
        metric=Metric("Column", "Mean", "amount", value=5.0),
        scope="window",
    )
    return CheckResult("orders-drift", "Warning", status, (result,))


@pytest.fixture
def exporter():
    sink = PrometheusSink(host="127.0.0.1", port=0)
    try:
        yield sink
    finally:
        sink.close()


def series_of(samples: list[Sample]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for name, labels, _ in samples:
        out.setdefault(name, set()).update(labels)
    return out


def matches(selector: str, labels: dict[str, str]) -> bool:
    """Does a PromQL label selector body (``a="x", b!="y", c=~"z"``) match these labels?"""
    for label, op, value in re.findall(r'([a-zA-Z_]\w*)\s*(=~|!~|!=|=)\s*"([^"]*)"', selector):
        got = labels.get(label, "")
        ok = {
            "=": got == value,
            "!=": got != value,
            "=~": re.fullmatch(value, got) is not None,
            "!~": re.fullmatch(value, got) is None,
        }[op]
        if not ok:
            return False
    return True


def test_rules_and_dashboard_use_only_what_the_running_exporter_serves(exporter):
    r1 = make_report(1)
    a1, state = alerts_for(r1)
    filtered = (  # a where-filtered mean and a quantile: the params/where labels are served
        ScopedMetric(
            "batch",
            Metric("Column", "Mean", "amount", value=5.5),
            None,
            key(Mean("amount", where="amount > 0")),
        ),
        ScopedMetric(
            "window",
            Metric("Column", "ApproxQuantile", "amount", value=9.0),
            W2,
            key(ApproxQuantile("amount", 0.9)),
        ),
    )
    r1 = replace(r1, metrics=(*r1.metrics, *filtered), check_results=(*r1.check_results, anomaly_check()))
    exporter.emit(r1, a1)
    r2 = make_report(2, failing=False)
    exporter.emit(r2, alerts_for(r2, state)[0])
    exporter.query_status(
        QueryStatus("orders", at=r2.processing_time.timestamp(), active=True, waiting_for_data=True)
    )
    series = series_of(scrape(exporter.url))
    exprs, variables, legends = dashboard_queries()
    problems: list[str] = []
    for expr in rule_exprs() + exprs + variables:
        problems += check_refs(expr, series)
    all_labels = set().union(*series.values())
    for legend in legends:
        problems += [
            f"legend {legend!r}: label {label} is never served"
            for label in re.findall(r"\{\{\s*([a-zA-Z_]+)\s*\}\}", legend)
            if label not in all_labels
        ]
    assert problems == []
    # the series the stalled-job rule and the idle panel read are served
    assert {"streamdq_query_waiting_for_data", "streamdq_query_heartbeat_timestamp_seconds"} <= set(series)


def test_late_panel_plots_row_counters_only_and_counters_exist_at_zero(exporter):
    quiet = replace(
        make_report(1, failing=False),
        counters={
            "input_rows": 1000,
            "late_rows": 4,
            "quarantined_rows": 2,
            "bad_rows": 2,
            "spark_jobs": 1,
            "arrow_path": 1,
        },
        check_results=(*make_report(1, failing=False).check_results, anomaly_check()),
    )
    exporter.emit(quiet, [])  # no anomaly, no alert yet
    samples = scrape(exporter.url)
    exprs, _, _ = dashboard_queries()
    (late,) = [e for e in exprs if "streamdq_rows_total" in e and "increase(" in e]
    selector = re.search(r"streamdq_rows_total\{([^}]*)\}", late).group(1).replace("$dataset", "orders")
    plotted = {
        labels["counter"]
        for name, labels, _ in samples
        if name == "streamdq_rows_total" and matches(selector, labels)
    }
    assert plotted == {"late_rows", "quarantined_rows", "bad_rows"}
    # the Alerts and Anomalies panels have series (at 0) before the first alert or anomaly
    for metric in ("streamdq_alerts_total", "streamdq_anomalies_total"):
        panel = [e for e in exprs if metric in e and "sum by" in e][0]  # the panel (annotations follow)
        selector = re.search(metric + r"\{([^}]*)\}", panel).group(1)
        selector = selector.replace("$dataset", "orders").replace("$column", ".*")
        got = [v for name, labels, v in samples if name == metric and matches(selector, labels)]
        assert got and all(v == 0.0 for v in got), metric
