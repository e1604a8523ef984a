"""SQL measures in the Prometheus exporter, read back by scraping its HTTP endpoint:
``streamdq_measure{dataset,scope,measure,key}`` holds the latest numeric value per scope (one
series per list element / map key, at most MAX_KEYS), non-numeric values and failed results
have no series, and ``streamdq_measure_failures_total{dataset,measure}`` counts failures once
per batch (a replayed batch does not count twice)."""

from __future__ import annotations

import dataclasses
import urllib.request

from prometheus_client.parser import text_string_to_metric_families
from streamdq.connectors.sinks.measure_series import MAX_KEYS
from streamdq.connectors.sinks.prometheus import PrometheusSink

from streamdq.measure_result import MeasureResult
from streamdq.report import BatchReport
from tests.unit.sinks.conftest import W1, W2, make_report

WIN1 = (W1.start.isoformat(), W1.end.isoformat())
WIN2 = (W2.start.isoformat(), W2.end.isoformat())


def scrape(sink: PrometheusSink, family: str) -> dict[tuple[tuple[str, str], ...], float]:
    """The samples of ``family`` served at ``sink.url``, by their non-empty labels."""
    with urllib.request.urlopen(sink.url, timeout=5) as resp:
        text = resp.read().decode()
    out = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            if s.name == family:
                out[tuple(sorted((k, v) for k, v in s.labels.items() if v != ""))] = s.value
    return out


def lab(**kw: str) -> tuple[tuple[str, str], ...]:
    return tuple(sorted(kw.items()))


def with_measures(batch_id: int, *measures: MeasureResult) -> BatchReport:
    return dataclasses.replace(make_report(batch_id), measures=measures)


def test_measures_are_scraped_per_scope_key_and_latest_result() -> None:
    sink = PrometheusSink(port=0)
    try:
        sink.emit(
            with_measures(
                1,
                MeasureResult("Null Count", "single_value", 3),
                MeasureResult("counts", "map", {"c": 100, "cd": 10, "label": "x", "empty": None}),
                MeasureResult("pair", "list", (100, 10.5)),
                MeasureResult("any rows", "single_value", True),
                MeasureResult("name", "single_value", "orders"),
                MeasureResult("bad", "single_value", None, failure="returned 2 rows"),
                # two closed windows in one batch: the later window is the latest value
                MeasureResult("rows", "single_value", 120, scope="window", window=WIN2),
                MeasureResult("rows", "single_value", 5400, scope="window", window=WIN1),
                MeasureResult("rows", "single_value", 20000, scope="total"),
            ),
            [],
        )
        got = scrape(sink, "streamdq_measure")
        base = {"dataset": "orders", "scope": "batch"}
        assert got == {
            lab(**base, measure="Null Count"): 3.0,
            lab(**base, measure="counts", key="c"): 100.0,
            lab(**base, measure="counts", key="cd"): 10.0,
            lab(**base, measure="pair", key="0"): 100.0,
            lab(**base, measure="pair", key="1"): 10.5,
            lab(**base, measure="any rows"): 1.0,
            lab(dataset="orders", scope="window", measure="rows"): 120.0,
            lab(dataset="orders", scope="total", measure="rows"): 20000.0,
        }
        failures = scrape(sink, "streamdq_measure_failures_total")
        assert failures[lab(dataset="orders", measure="bad")] == 1.0
        assert failures[lab(dataset="orders", measure="Null Count")] == 0.0  # exists before a failure

        # the next batch: Null Count fails (its series goes), counts loses a key
        second = with_measures(
            2,
            MeasureResult("Null Count", "single_value", None, failure="division by zero"),
            MeasureResult("counts", "map", {"c": 7}),
            MeasureResult("bad", "single_value", None, failure="returned 2 rows"),
        )
        sink.emit(second, [])
        sink.emit(second, [])  # a replayed batch counts once
        got = scrape(sink, "streamdq_measure")
        assert lab(**base, measure="Null Count") not in got
        assert got[lab(**base, measure="counts", key="c")] == 7.0
        assert lab(**base, measure="counts", key="cd") not in got
        assert got[lab(dataset="orders", scope="window", measure="rows")] == 120.0  # untouched
        failures = scrape(sink, "streamdq_measure_failures_total")
        assert failures[lab(dataset="orders", measure="bad")] == 2.0
        assert failures[lab(dataset="orders", measure="Null Count")] == 1.0
    finally:
        sink.close()


def test_a_long_list_measure_exports_at_most_max_keys_series() -> None:
    sink = PrometheusSink(port=0)
    try:
        sink.emit(with_measures(1, MeasureResult("many", "list", tuple(range(MAX_KEYS + 50)))), [])
        got = scrape(sink, "streamdq_measure")
        assert len(got) == MAX_KEYS
        assert {dict(k)["key"] for k in got} == {str(i) for i in range(MAX_KEYS)}
    finally:
        sink.close()
