"""deploy/: the Kubernetes manifest's ConfigMap holds a valid run config; manifests agree with each other."""

from __future__ import annotations

import json
import py_compile
import subprocess
from pathlib import Path

import yaml
from streamdq.connectors.sinks import validate_sink_specs

from streamdq.alerts import AlertPolicy
from streamdq.engine.config import load_run_config

DEPLOY = Path(__file__).resolve().parents[3] / "deploy"


def manifest() -> list[dict]:
    return list(yaml.safe_load_all((DEPLOY / "spark" / "sparkapplication.yaml").read_text()))


def test_configmap_run_config_and_checks_validate(tmp_path):
    configmap, app, service = manifest()
    assert (
        configmap["kind"] == "ConfigMap"
        and app["kind"] == "SparkApplication"
        and service["kind"] == "Service"
    )
    for name, text in configmap["data"].items():
        (tmp_path / name).write_text(text)
    config = load_run_config(tmp_path / "run.yaml")
    assert config.dataset == "orders" and config.source["type"] == "kafka"
    validate_sink_specs(config.sinks)
    assert AlertPolicy.from_spec(config.alerts).min_rows_floor == 100
    assert "://" in config.checkpoint and "s3://" in (config.state.path or "")


def test_spark_application_wiring_is_consistent():
    configmap, app, service = manifest()
    spec = app["spec"]
    (mount,) = spec["driver"]["volumeMounts"]
    assert spec["arguments"][0] == f"{mount['mountPath']}/run.yaml"
    assert spec["volumes"][0]["configMap"]["name"] == configmap["metadata"]["name"]
    assert spec["mainApplicationFile"].endswith("/streamdq_main.py")
    assert any(p.startswith("org.apache.spark:spark-sql-kafka-0-10_2.13:") for p in spec["deps"]["packages"])
    run = yaml.safe_load(configmap["data"]["run.yaml"])
    (prom,) = [s for s in run["sinks"] if s["type"] == "prometheus"]
    assert prom["host"] == "0.0.0.0"  # reachable from outside the driver pod
    port = prom["port"]
    assert spec["driver"]["ports"][0]["containerPort"] == port
    assert spec["driver"]["annotations"]["prometheus.io/port"] == str(port)
    assert service["spec"]["ports"][0]["targetPort"] == port
    assert service["spec"]["selector"].items() <= spec["driver"]["labels"].items()


def test_scripts_and_provisioning_parse():
    subprocess.run(["bash", "-n", str(DEPLOY / "spark" / "submit.sh")], check=True)
    py_compile.compile(str(DEPLOY / "spark" / "streamdq_main.py"), doraise=True)
    for path in (DEPLOY / "grafana" / "provisioning").rglob("*.yml"):
        assert yaml.safe_load(path.read_text())["apiVersion"] == 1
    dash = json.loads((DEPLOY / "grafana" / "dashboards" / "streamdq.json").read_text())
    assert {v["name"] for v in dash["templating"]["list"]} >= {"dataset", "column"}
    scrape = yaml.safe_load((DEPLOY / "prometheus" / "prometheus.yml").read_text())
    assert (DEPLOY / "prometheus" / scrape["rule_files"][0]).exists()
