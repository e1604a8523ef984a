"""Prometheus exporter: private registry, latest values per label set, counters idempotent, HTTP scrape."""

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
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
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
    # window scope: the most recent window wins, whatever the order in the report
    assert (
        s[
            (
                "streamdq_metric_value",
                lab(dataset="orders", scope="window", entity="Dataset", column="*", metric="Size"),
            )
        ]
        == 120.0
    )
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
