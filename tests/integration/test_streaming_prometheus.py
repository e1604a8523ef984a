"""A real Prometheus server (Debian ``prometheus``) scrapes the exporter of a running streaming
job (sink ``{type: prometheus, host, port}``) and the test reads the job's total Completeness
back through the Prometheus HTTP API."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
import yaml
from streamdq.connectors.broker import free_port

from tests.conftest import require_integration
from tests.integration.test_prometheus_scrape import api, wait_until

pytestmark = [pytest.mark.integration]


def test_prometheus_scrapes_the_running_streaming_job(tmp_path, spark):
    from streamdq.engine.streaming import stream

    binary = shutil.which("prometheus")
    if binary is None:
        require_integration("prometheus", "install the Debian package 'prometheus' (.ci/run does)")
    inbox = tmp_path / "in"
    inbox.mkdir()
    rows = [{"order_id": str(i), "amount": (None if i % 4 == 0 else float(i))} for i in range(8)]
    (tmp_path / "x.json").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    (tmp_path / "x.json").rename(inbox / "x.json")
    exporter = free_port()
    cfg = {
        "dataset": "orders",
        "source": {
            "type": "files",
            "path": str(inbox),
            "format": "json",
            "schema": "order_id STRING, amount DOUBLE",
        },
        "trigger": "available_now",
        "checkpoint": str(tmp_path / "chk"),
        "state": {"path": str(tmp_path / "state")},
        "checks": [
            {
                "description": "orders",
                "level": "error",
                "constraints": [
                    {"has_completeness": {"column": "amount", "assertion": ">= 0", "scope": "total"}}
                ],
            }
        ],
        "sinks": [{"type": "prometheus", "host": "127.0.0.1", "port": exporter}],
    }
    runner = stream(spark, cfg)
    query = runner.start()
    port = free_port()
    proc = None
    log = open(tmp_path / "prometheus.log", "wb")  # noqa: SIM115 - closed below
    try:
        query.awaitTermination(90)
        assert query.exception() is None
        config = {
            "global": {"scrape_interval": "1s"},
            "scrape_configs": [
                {"job_name": "streamdq", "static_configs": [{"targets": [f"127.0.0.1:{exporter}"]}]}
            ],
        }
        (tmp_path / "prometheus.yml").write_text(yaml.safe_dump(config))
        proc = subprocess.Popen(
            [
                str(binary),
                f"--config.file={tmp_path / 'prometheus.yml'}",
                f"--storage.tsdb.path={tmp_path / 'data'}",
                f"--web.listen-address=127.0.0.1:{port}",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        base = f"http://127.0.0.1:{port}"

        def completeness():
            data = api(
                base,
                "/api/v1/query",
                query='streamdq_metric_value{job="streamdq",metric="Completeness",column="amount",scope="total"}',
            )
            return data["data"]["result"]

        (sample,) = wait_until(completeness, 60, "the job's total Completeness in Prometheus")
        assert float(sample["value"][1]) == pytest.approx(6 / 8)
        assert sample["metric"]["dataset"] == "orders"
    finally:
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
        log.close()
        runner.stop()
