"""A real streaming run (files source, one file per microbatch, Delta state store, Prometheus
sink): expression checks read a measure and its stored history (``previous``,
``previous_values``) across batches; each batch's report carries the measure/check/pass
document, the pass policy drives the dataset alert (violation, resolved, violation with
deterministic ids); ``streamdq_dataset_pass`` and the measure gauge ``streamdq_measure`` are scraped
from the exporter over HTTP."""

from __future__ import annotations

import json
import os
import urllib.request

import pytest
from streamdq.connectors.broker import free_port

pytestmark = [pytest.mark.integration]

ROWS_PER_FILE = [5, 3, 4, 2]  # one microbatch each, in this order
# "no drop": the batch has at least as many rows as the previous one (previous())
NO_DROP = [True, False, True, False]
# "not below half": at least half of every one of the last 3 batches (previous_values())
NOT_BELOW_HALF = [True, True, True, False]


def test_expressions_read_measures_and_history_across_batches(tmp_path, spark, capsys):
    from streamdq.state.delta_store import DeltaStateStore

    from streamdq.alerts.alert import alert_id_for
    from streamdq.cli import main
    from streamdq.engine.streaming import stream

    inbox = tmp_path / "in"
    inbox.mkdir()
    for i, n in enumerate(ROWS_PER_FILE):
        path = inbox / f"part{i}.json"
        path.write_text("".join(json.dumps({"id": f"{i}-{k}", "amount": float(k)}) + "\n" for k in range(n)))
        os.utime(path, (1_700_000_000 + i * 10, 1_700_000_000 + i * 10))  # read in this order
    exporter = free_port()
    cfg = {
        "dataset": "orders",
        "source": {
            "type": "files",
            "path": str(inbox),
            "format": "json",
            "schema": "id STRING, amount DOUBLE",
            "max_files_per_trigger": 1,
        },
        "trigger": "available_now",
        "checkpoint": str(tmp_path / "chk"),
        "state": {"path": str(tmp_path / "state")},
        "measures": [{"name": "rows", "sql": "select count(*) from data", "result_type": "single_value"}],
        "checks": [
            {
                "description": "volume",
                "constraints": [
                    {
                        "expression": {
                            "name": "no drop",
                            "expression": 'previous("rows") == null || measures["rows"] >= previous("rows")',
                        }
                    },
                    {
                        "expression": {
                            "name": "not below half",
                            "expression": 'previous_values("rows", 3).all(v, measures["rows"] * 2 >= v)',
                        }
                    },
                ],
            }
        ],
        "pass": "all",
        "sinks": [{"type": "prometheus", "host": "127.0.0.1", "port": exporter}],
    }
    runner = stream(spark, cfg)
    query = runner.start()
    try:
        query.awaitTermination(180)
        assert query.exception() is None
        with urllib.request.urlopen(f"http://127.0.0.1:{exporter}/metrics", timeout=10) as response:
            scraped = response.read().decode()
        store = DeltaStateStore(str(tmp_path / "state"))
        query_id = str(query.id)
        reports = [store.report(query_id, b) for b in range(len(ROWS_PER_FILE))]
    finally:
        runner.stop()
    assert all(r is not None for r in reports)
    docs = [next(d for d in r.measure_check_pass if d.scope == "batch") for r in reports]  # type: ignore[union-attr]
    assert [d.measure for d in docs] == [{"rows": n} for n in ROWS_PER_FILE]
    assert [d.check["no drop"] for d in docs] == NO_DROP
    assert [d.check["not below half"] for d in docs] == NOT_BELOW_HALF
    assert [d.passed for d in docs] == [a and b for a, b in zip(NO_DROP, NOT_BELOW_HALF, strict=True)]
    # the dataset alert: once when pass turns false, resolved when it is true again
    pass_alerts = [
        (r.batch_id, a["kind"], a["alert_id"]) for r in reports for a in r.alerts if a["check"] == "pass"
    ]  # type: ignore[union-attr]
    assert [(b, k) for b, k, _ in pass_alerts] == [(1, "violation"), (2, "resolved"), (3, "violation")]
    for batch_id, kind, alert_id in pass_alerts:
        assert alert_id == alert_id_for(query_id, batch_id, "pass", "pass:batch", kind)
    # the status metric: the last batch did not pass
    assert 'streamdq_dataset_pass{dataset="orders",scope="batch"} 0.0' in scraped
    # the measure's latest value per scope (docs/prometheus.md, SQL measures)
    from prometheus_client.parser import text_string_to_metric_families

    rows_gauge = {
        s.labels["scope"]: s.value
        for f in text_string_to_metric_families(scraped)
        for s in f.samples
        if s.name == "streamdq_measure" and s.labels["measure"] == "rows"
    }
    assert rows_gauge == {"batch": ROWS_PER_FILE[-1], "total": sum(ROWS_PER_FILE)}
    assert 'streamdq_measure_failures_total{dataset="orders",measure="rows"} 0.0' in scraped
    # the documents over time from the Delta tables: streamdq query pass
    state = str(tmp_path / "state")
    assert (
        main(
            ["query", "pass", "--state", state, "--dataset", "orders", "--scope", "batch", "--format", "json"]
        )
        == 0
    )
    stored = json.loads(capsys.readouterr().out)
    assert [d["batch_id"] for d in stored] == [0, 1, 2, 3]
    assert [d["measure_check_pass"] for d in stored] == [d.to_dict() for d in docs]
    assert (
        main(["query", "pass", "--state", state, "--dataset", "orders", "--scope", "batch", "--last", "1"])
        == 0
    )
    text = capsys.readouterr().out
    assert "false" in text and "no drop, not below half" in text and text.count("\n") == 2  # head + 1 row
