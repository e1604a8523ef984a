"""deploy/: the Kubernetes manifest's ConfigMap holds a valid run config; manifests agree with each other,
with pyproject (versions) and with the Prometheus scrape configs (targets, ports, job labels);
submit.sh adds Spark's Kafka package only for Kafka sources; no doc claims `pip install streamdq`."""

from __future__ import annotations

import json
import os
import py_compile
import re
import subprocess
import tomllib
from pathlib import Path

import yaml
from streamdq.connectors.sinks import validate_sink_specs

from streamdq.alerts import AlertPolicy
from streamdq.engine.config import load_run_config

ROOT = Path(__file__).resolve().parents[3]
DEPLOY = ROOT / "deploy"


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
    mounts = {m["name"]: m["mountPath"] for m in spec["driver"]["volumeMounts"]}
    assert spec["arguments"][0] == f"{mounts['streamdq-config']}/run.yaml"
    volumes = {v["name"]: v for v in spec["volumes"]}
    assert volumes["streamdq-config"]["configMap"]["name"] == configmap["metadata"]["name"]
    # the sinks' local files (Kafka outbox) go to a mounted volume, not under the s3a:// checkpoint
    env = {e["name"]: e["value"] for e in spec["driver"]["env"]}
    assert env["STREAMDQ_LOCAL_DIR"] == mounts["streamdq-local"] and "streamdq-local" in volumes
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


def pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_versions_in_the_manifest_match_pyproject():
    from packaging.requirements import Requirement

    _, app, _ = manifest()
    spec = app["spec"]
    spark_version = spec["sparkVersion"]
    (pyspark,) = [Requirement(r) for r in pyproject()["project"]["dependencies"] if r.startswith("pyspark")]
    assert pyspark.specifier.contains(spark_version), (spark_version, str(pyspark.specifier))
    packages = dict(p.rsplit(":", 1) for p in spec["deps"]["packages"])
    assert packages["org.apache.spark:spark-sql-kafka-0-10_2.13"] == spark_version
    assert spec["image"].rsplit(":", 1)[1] == pyproject()["project"]["version"]
    import pyspark as installed

    if installed.__version__ == spark_version:  # hadoop-aws must match that Spark's Hadoop client
        jars = Path(installed.__file__).parent / "jars"
        (client,) = [p.name for p in jars.glob("hadoop-client-api-*.jar")]
        assert packages["org.apache.hadoop:hadoop-aws"] == client.removeprefix(
            "hadoop-client-api-"
        ).removesuffix(".jar")


def _service_targets(service: dict) -> set[str]:
    name, port = service["metadata"]["name"], service["spec"]["ports"][0]["port"]
    return {f"{name}:{port}", f"{name}.{service['metadata'].get('namespace', 'default')}.svc:{port}"}


def _rule_job() -> str:
    rules = yaml.safe_load((DEPLOY / "prometheus" / "rules" / "streamdq.rules.yml").read_text())
    (down,) = [r for g in rules["groups"] for r in g["rules"] if r["alert"] == "StreamdqExporterDown"]
    return re.search(r'up\{job="([^"]+)"\}', down["expr"]).group(1)


def test_prometheus_scrapes_what_the_manifest_serves_under_the_job_the_rules_expect():
    _, app, service = manifest()
    driver = app["spec"]["driver"]
    job = _rule_job()
    static = yaml.safe_load((DEPLOY / "prometheus" / "prometheus.yml").read_text())
    (scrape,) = static["scrape_configs"]
    assert scrape["job_name"] == job
    targets = {t for sc in scrape["static_configs"] for t in sc["targets"]}
    assert targets and targets <= _service_targets(service)
    k8s = yaml.safe_load((DEPLOY / "prometheus" / "prometheus-kubernetes.yml").read_text())
    (scrape,) = k8s["scrape_configs"]
    assert scrape["job_name"] == job and scrape["kubernetes_sd_configs"] == [{"role": "pod"}]
    keeps = [r for r in scrape["relabel_configs"] if r.get("action") == "keep"]
    meta = {
        "__meta_kubernetes_pod_annotation_prometheus_io_scrape": driver["annotations"][
            "prometheus.io/scrape"
        ],
        "__meta_kubernetes_pod_label_app": driver["labels"]["app"],
        "__meta_kubernetes_pod_label_role": driver["labels"]["role"],
    }
    for keep in keeps:  # the driver pod passes every keep rule
        value = ";".join(meta[label] for label in keep["source_labels"])
        assert re.fullmatch(keep["regex"], value), keep
    # the exporter's own 'dataset' label is never overwritten by a target label
    assert all(r.get("target_label") != "dataset" for r in scrape["relabel_configs"])
    for path in ("prometheus.yml", "prometheus-kubernetes.yml"):
        doc = yaml.safe_load((DEPLOY / "prometheus" / path).read_text())
        assert (DEPLOY / "prometheus" / doc["rule_files"][0]).exists()


def _submit(tmp_path: Path, source: dict, extra_env: dict | None = None) -> list[str]:
    """Run submit.sh against a stand-in spark-submit that records its arguments."""
    home = tmp_path / "spark"
    (home / "bin").mkdir(parents=True, exist_ok=True)
    fake = home / "bin" / "spark-submit"
    fake.write_text(
        "#!/usr/bin/env bash\n"
        'if [ "$1" = --version ]; then echo "Welcome to Spark version 4.3.0"; exit 0; fi\n'
        'printf "%s\\n" "$@" > "$ARGS_OUT"\n'
    )
    fake.chmod(0o755)
    config = tmp_path / "run.yaml"
    config.write_text(
        yaml.safe_dump({"dataset": "orders", "source": source, "checkpoint": str(tmp_path / "c")})
    )
    out = tmp_path / "args.txt"
    env = {k: v for k, v in os.environ.items() if k not in ("SPARK_VERSION", "EXTRA_PACKAGES")}
    env.update({"SPARK_HOME": str(home), "ARGS_OUT": str(out), **(extra_env or {})})
    subprocess.run(
        ["bash", str(DEPLOY / "spark" / "submit.sh"), str(config)], env=env, check=True, timeout=60
    )
    return out.read_text().splitlines()


def test_submit_adds_the_kafka_package_only_for_kafka_sources(tmp_path):
    files = _submit(tmp_path, {"type": "files", "path": "/data/in", "format": "csv"})
    assert "--packages" not in files  # no Maven needed for a files source
    kafka = _submit(tmp_path, {"type": "kafka", "bootstrap_servers": "k:9092", "topic": "orders"})
    assert kafka[kafka.index("--packages") + 1] == "org.apache.spark:spark-sql-kafka-0-10_2.13:4.3.0"
    extra = _submit(
        tmp_path, {"type": "files", "path": "/in"}, {"EXTRA_PACKAGES": "org.apache.hadoop:hadoop-aws:3.5.0"}
    )
    assert extra[extra.index("--packages") + 1] == "org.apache.hadoop:hadoop-aws:3.5.0"


def test_no_doc_claims_pip_install_streamdq():
    claim = re.compile(r"pip install\s+(?:-\S+\s+)*streamdq(?![\w./-])(?!\s*@)")
    paths = [
        ROOT / "README.md",
        *sorted((ROOT / "docs").glob("*.md")),
        *sorted(p for p in DEPLOY.rglob("*") if p.is_file() and "__pycache__" not in p.parts),
    ]
    found = [
        f"{p.relative_to(ROOT)}:{i}"
        for p in paths
        for i, line in enumerate(p.read_text(errors="replace").splitlines(), 1)
        if claim.search(line)
    ]
    assert found == []
    assert claim.search("pip install streamdq") and claim.search("pip install -U streamdq")
    assert not claim.search('pip install "streamdq @ git+https://x/y.git"') and not claim.search(
        "pip install streamdq-0.1.0.whl"
    )
