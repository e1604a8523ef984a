"""A real Prometheus server scrapes the streamdq exporter; shipped rules and dashboard are checked.

- Prometheus (Debian package ``prometheus``) is started on a free loopback port with a generated
  config that scrapes a ``PrometheusSink`` and loads deploy/prometheus/rules; a streamdq metric
  is read back through ``/api/v1/query`` and the constraint rule fires.
- ``promtool test rules`` runs the rule unit tests.
- Every PromQL expression in the rules and the Grafana dashboard refers only to metric names and
  labels the exporter really emits, and each dashboard query is accepted by the server.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
import yaml
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families
from streamdq.connectors.broker import free_port
from streamdq.connectors.sinks.prometheus import PrometheusSink, ReportCollector

from streamdq.query_status import QueryStatus
from tests.conftest import require_integration
from tests.unit.sinks.conftest import alerts_for, make_report

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "deploy" / "prometheus" / "rules" / "streamdq.rules.yml"
RULE_TESTS = ROOT / "deploy" / "prometheus" / "tests" / "streamdq.rules.test.yml"
DASHBOARD = ROOT / "deploy" / "grafana" / "dashboards" / "streamdq.json"
# labels Prometheus itself attaches to every scraped series
TARGET_LABELS = {"job", "instance"}
GRAFANA_VARS = {
    "$dataset": "orders",
    "$column": ".*",
    "$metric": ".*",
    "$scope": ".*",
    "$__rate_interval": "1m",
}

pytestmark = pytest.mark.integration


# ---------------------------------------------------------------- helpers


def exporter_series() -> dict[str, set[str]]:
    """Sample name -> label names, from the exposition of an exporter fed with rich reports."""
    collector = ReportCollector()
    r1 = make_report(1)
    a1, state = alerts_for(r1)
    collector.update(r1, a1)
    r2 = make_report(2, failing=False)
    collector.update(r2, alerts_for(r2, state)[0])
    collector.query_status(
        QueryStatus("orders", at=r2.processing_time.timestamp(), active=True, waiting_for_data=True)
    )
    registry = CollectorRegistry(auto_describe=False)
    registry.register(collector)
    out: dict[str, set[str]] = {}
    for family in text_string_to_metric_families(generate_latest(registry).decode()):
        for sample in family.samples:
            out.setdefault(sample.name, set()).update(sample.labels)
    return out


def rule_exprs() -> list[str]:
    doc = yaml.safe_load(RULES.read_text())
    return [rule["expr"] for group in doc["groups"] for rule in group["rules"]]


def dashboard_queries() -> tuple[list[str], list[str], list[str]]:
    """(PromQL expressions, label_values(...) variable queries, legend formats) of the dashboard."""
    dash = json.loads(DASHBOARD.read_text())
    exprs, legends = [], []
    for panel in dash["panels"]:
        for t in panel.get("targets", []):
            exprs.append(t["expr"])
            legends.append(t.get("legendFormat", ""))
    for ann in dash["annotations"]["list"]:
        exprs.append(ann["expr"])
        legends.append(ann.get("textFormat", ""))
    variables = [v["definition"] for v in dash["templating"]["list"] if v["type"] == "query"]
    return exprs, variables, legends


def substitute(expr: str) -> str:
    for var in sorted(GRAFANA_VARS, key=len, reverse=True):
        expr = expr.replace(var, GRAFANA_VARS[var])
    return expr


SELECTOR = re.compile(r"\b([a-zA-Z_:][a-zA-Z0-9_:]*)\s*\{([^}]*)\}")
BARE = re.compile(r"\b(streamdq_[a-zA-Z0-9_]+|up)\b")
GROUPING = re.compile(r"\b(?:by|without)\s*\(([^)]*)\)")
MATCHER_LABEL = re.compile(r"([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)")


def references(expr: str) -> tuple[set[str], set[str]]:
    """Metric names and label names an expression refers to (selectors, by/without, label_values)."""
    metrics = set(BARE.findall(expr))
    labels: set[str] = set()
    for _name, matchers in SELECTOR.findall(expr):
        labels.update(MATCHER_LABEL.findall(matchers))
    for group in GROUPING.findall(expr):
        labels.update(x.strip() for x in group.split(",") if x.strip())
    lv = re.match(r"label_values\((.*),\s*([a-zA-Z_]+)\)\s*$", expr)
    if lv:
        labels.add(lv.group(2))
    return metrics, labels


def check_refs(
    expr: str, series: dict[str, set[str]], extra_labels: frozenset[str] = frozenset()
) -> list[str]:
    problems = []
    metrics, labels = references(expr)
    assert metrics, f"no metric in expression {expr!r}"
    available = set(TARGET_LABELS) | extra_labels
    for m in metrics:
        if m == "up":
            continue
        if m not in series:
            problems.append(f"{expr!r}: metric {m} is not emitted by the exporter")
        else:
            available |= series[m]
    for label in labels - available:
        problems.append(f"{expr!r}: label {label} is not on {sorted(metrics)}")
    return problems


# ---------------------------------------------------------------- static checks


def test_every_promql_name_and_label_is_emitted_by_the_exporter():
    series = exporter_series()
    assert "streamdq_metric_value" in series and "streamdq_constraint_failures_total" in series
    exprs, variables, legends = dashboard_queries()
    problems: list[str] = []
    for expr in rule_exprs() + exprs + variables:
        problems += check_refs(expr, series)
    all_labels = set().union(*series.values())
    for legend in legends:
        for label in re.findall(r"\{\{\s*([a-zA-Z_]+)\s*\}\}", legend):
            if label not in all_labels:
                problems.append(f"legend {legend!r}: label {label} is never emitted")
    assert problems == []


def test_the_reference_check_catches_a_wrong_name_or_label():
    series = exporter_series()
    assert check_refs('streamdq_metric_value{instance="amount"}', series) == []  # target label
    assert check_refs('streamdq_metric_value{colum="amount"}', series)
    assert check_refs("rate(streamdq_rows[5m])", series)  # counters are exposed as *_total
    assert check_refs("sum by (detector) (streamdq_constraint_status)", series)


def test_promtool_rule_unit_tests_pass():
    promtool = shutil.which("promtool")
    if promtool is None:
        require_integration("promtool", "install the Debian package 'prometheus'")
    check = subprocess.run(
        [promtool, "check", "rules", str(RULES)], capture_output=True, text=True, timeout=60
    )
    assert check.returncode == 0, check.stdout + check.stderr
    result = subprocess.run(
        [promtool, "test", "rules", str(RULE_TESTS)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=RULE_TESTS.parent,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout


# ---------------------------------------------------------------- a real Prometheus server


def api(base: str, path: str, **params: str) -> dict:
    url = f"{base}{path}?{urllib.parse.urlencode(params)}" if params else f"{base}{path}"
    with urllib.request.urlopen(url, timeout=10) as resp:
        return json.loads(resp.read())


def wait_until(fn, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    last: object = None
    while time.monotonic() < deadline:
        try:
            last = fn()
            if last:
                return last
        except OSError as exc:
            last = exc
        time.sleep(0.5)
    raise AssertionError(f"timed out waiting for {what}: {last!r}")


@pytest.fixture
def prometheus_server(tmp_path):
    binary = shutil.which("prometheus")
    if binary is None:
        require_integration("prometheus", "install the Debian package 'prometheus' (.ci/run does)")
    sink = PrometheusSink(host="127.0.0.1", port=0)
    config = {
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
        "rule_files": [str(RULES)],
        "scrape_configs": [
            {"job_name": "streamdq", "static_configs": [{"targets": [f"127.0.0.1:{sink.port}"]}]}
        ],
    }
    (tmp_path / "prometheus.yml").write_text(yaml.safe_dump(config))
    port = free_port()
    log = open(tmp_path / "prometheus.log", "wb")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        [
            binary,
            f"--config.file={tmp_path / 'prometheus.yml'}",
            f"--storage.tsdb.path={tmp_path / 'data'}",
            f"--web.listen-address=127.0.0.1:{port}",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until(
            lambda: urllib.request.urlopen(f"{base}/-/ready", timeout=2).status == 200, 60, "prometheus ready"
        )
        yield base, sink
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        log.close()
        sink.close()


def test_prometheus_scrapes_the_exporter_and_rules_fire(prometheus_server):
    base, sink = prometheus_server
    report = make_report(7)
    sink.emit(report, alerts_for(report)[0])

    def completeness():
        data = api(
            base,
            "/api/v1/query",
            query='streamdq_metric_value{job="streamdq",metric="Completeness",column="amount",scope="batch"}',
        )
        return data["data"]["result"]

    (sample,) = wait_until(completeness, 60, "the Completeness metric in Prometheus")
    assert float(sample["value"][1]) == 0.8
    assert sample["metric"]["dataset"] == "orders" and sample["metric"]["entity"] == "Column"

    def firing():
        alerts = api(base, "/api/v1/alerts")["data"]["alerts"]
        return [
            a
            for a in alerts
            if a["labels"]["alertname"] == "StreamdqConstraintFailing" and a["state"] == "firing"
        ]

    (alert,) = wait_until(firing, 60, "StreamdqConstraintFailing firing")
    assert alert["labels"]["constraint_id"] == "c-compl-amount" and alert["labels"]["severity"] == "critical"
    groups = api(base, "/api/v1/rules")["data"]["groups"]
    rules = [r for g in groups for r in g["rules"]]
    assert len(rules) == len(rule_exprs()) and all(r["health"] == "ok" for r in rules)

    # every dashboard query is valid PromQL for this server and the main panels have data
    exprs, variables, _ = dashboard_queries()
    for expr in exprs:
        result = api(base, "/api/v1/query", query=substitute(expr))
        assert result["status"] == "success", (expr, result)
    for name in ("streamdq_metric_value", "streamdq_last_batch_id"):
        got = api(base, "/api/v1/query", query=substitute(f'{name}{{dataset="$dataset"}}'))["data"]["result"]
        assert got, name
    for definition in variables:
        metric_sel, label = re.match(r"label_values\((.*),\s*([a-zA-Z_]+)\)", substitute(definition)).groups()
        series = api(base, "/api/v1/series", **{"match[]": metric_sel})["data"]
        assert series and all(label in s for s in series), definition


def test_prometheus_keeps_parameters_filters_and_open_windows_apart(prometheus_server):
    """Through a real server: Mean(amount) with and without a where filter, two quantiles of one
    column, and the open and closed window of one metric are separate series; so are the keys
    of a map measure (streamdq_measure), and a failed measure counts in its failures counter."""
    from dataclasses import replace

    from streamdq.analyzers import ApproxQuantile, Mean
    from streamdq.analyzers.metric import Metric
    from streamdq.measure_result import MeasureResult
    from streamdq.report import ScopedMetric

    base, sink = prometheus_server
    extra = (
        ScopedMetric(
            "batch",
            Metric("Column", "Mean", "amount", value=5.55),
            None,
            Mean("amount", where="amount > 0").key(),
        ),
        ScopedMetric("batch", Metric("Column", "Mean", "amount", value=1.89), None, Mean("amount").key()),
        ScopedMetric(
            "batch",
            Metric("Column", "ApproxQuantile", "amount", value=2.0),
            None,
            ApproxQuantile("amount", 0.5).key(),
        ),
        ScopedMetric(
            "batch",
            Metric("Column", "ApproxQuantile", "amount", value=40.0),
            None,
            ApproxQuantile("amount", 0.9).key(),
        ),
    )
    report = make_report(8)
    measures = (
        MeasureResult("counts", "map", {"c": 100, "cd": 10}),
        MeasureResult("Null Count", "single_value", None, failure="returned 2 rows"),
    )
    sink.emit(replace(report, metrics=(*report.metrics, *extra), measures=measures), [])

    def query(expr: str):
        return lambda: api(base, "/api/v1/query", query=expr)["data"]["result"]

    means = wait_until(
        query('streamdq_metric_value{metric="Mean",column="amount",scope="batch"}'), 60, "means"
    )
    assert sorted(float(s["value"][1]) for s in means) == [1.89, 5.55]
    (filtered,) = api(base, "/api/v1/query", query='streamdq_metric_value{metric="Mean",where="amount > 0"}')[
        "data"
    ]["result"]
    assert float(filtered["value"][1]) == 5.55 and len(filtered["metric"]["where_id"]) == 8
    quantiles = api(
        base, "/api/v1/query", query='streamdq_metric_value{metric="ApproxQuantile",scope="batch"}'
    )
    assert {s["metric"]["params"]: float(s["value"][1]) for s in quantiles["data"]["result"]} == {
        "k=200,quantile=0.5": 2.0,
        "k=200,quantile=0.9": 40.0,
    }
    windows = api(base, "/api/v1/query", query='streamdq_metric_value{metric="Size",scope="window"}')
    assert {s["metric"]["window"]: float(s["value"][1]) for s in windows["data"]["result"]} == {
        "closed": 5400.0,
        "open": 120.0,
    }
    counts = api(base, "/api/v1/query", query='streamdq_measure{dataset="orders",measure="counts"}')
    assert {s["metric"]["key"]: float(s["value"][1]) for s in counts["data"]["result"]} == {
        "c": 100.0,
        "cd": 10.0,
    }
    assert not api(base, "/api/v1/query", query='streamdq_measure{measure="Null Count"}')["data"]["result"]
    failed = api(base, "/api/v1/query", query="streamdq_measure_failures_total")["data"]["result"]
    assert {s["metric"]["measure"]: float(s["value"][1]) for s in failed} == {
        "Null Count": 1.0,
        "counts": 0.0,
    }
