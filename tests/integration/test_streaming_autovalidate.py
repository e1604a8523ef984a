"""auto_validate: and quality_score: through a real streaming query: JSON files, one event-time
minute each, read one file per trigger -> stream(spark, run.yaml) -> learned programs judge the
closed windows; a unit change becomes an alert on the JSON-lines sink like any hand-written check,
and the programs are in the Delta state store for `streamdq autovalidate show`."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml

pytestmark = [pytest.mark.integration]

SCHEMA = "order_id STRING, ts TIMESTAMP, amount DOUBLE"
INCIDENT_MINUTE = 8


def _write_files(inbox: Path, tmp: Path) -> None:
    rng = np.random.default_rng(4)
    for minute in range(11):
        unit = 100.0 if minute == INCIDENT_MINUTE else 1.0
        lines = [
            json.dumps(
                {
                    "order_id": f"{minute}-{i}",
                    "ts": f"2024-01-01T00:{minute:02d}:{int(i * 59 / 120):02d}Z",
                    "amount": round(float(rng.normal(40, 4)) * unit, 2),
                }
            )
            for i in range(120)
        ]
        staged = tmp / f"orders-{minute:02d}.json"
        staged.write_text("\n".join(lines) + "\n")
        staged.rename(inbox / staged.name)


def test_learned_programs_alert_through_the_sinks(tmp_path, spark):
    from streamdq.connectors.sinks.jsonl import read_lines

    from streamdq.commands.autovalidate import stored_programs
    from streamdq.engine.streaming import stream

    inbox = tmp_path / "in"
    inbox.mkdir()
    _write_files(inbox, tmp_path)
    cfg = {
        "dataset": "orders",
        "source": {
            "type": "files",
            "path": str(inbox),
            "format": "json",
            "schema": SCHEMA,
            "max_files_per_trigger": 1,
        },
        "event_time": "ts",
        "window": "1 minute",
        "trigger": "available_now",
        "checkpoint": str(tmp_path / "chk"),
        "state": {"path": str(tmp_path / "state")},
        "auto_validate": {"columns": {"amount": "numeric"}, "history": 8, "min_history": 4},
        "sinks": [{"type": "jsonl", "path": str(tmp_path / "reports.jsonl")}],
    }
    run = tmp_path / "run.yaml"
    run.write_text(yaml.safe_dump(cfg))
    runner = stream(spark, str(run))
    assert [m.key for m in runner.monitors] == ["auto_validate"]
    query = runner.start()
    try:
        query.awaitTermination(300)
        assert query.exception() is None
    finally:
        runner.stop()
    lines = read_lines(tmp_path / "reports.jsonl")
    assert len(lines) == 11
    alerts = [a for line in lines for a in line["alerts"] if a["check"] == "auto-validated amount"]
    violations = [a for a in alerts if a["kind"] == "violation"]
    assert violations, "the unit change was not alerted"
    assert {a["window"]["start"][:16] for a in violations} == {f"2024-01-01T00:{INCIDENT_MINUTE:02d}"}
    assert all(a["scope"] == "window" for a in violations)
    # windows closed before the incident were judged and passed (no false alarm)
    judged = [
        r
        for line in lines
        for c in line["report"]["check_results"]
        if c["check"] == "auto-validated amount"
        for r in c["constraint_results"]
    ]
    clean = [r for r in judged if not r["window"]["start"].startswith(f"2024-01-01T00:{INCIDENT_MINUTE:02d}")]
    assert clean and all(r["status"] == "Success" for r in clean)
    (program,) = stored_programs(str(tmp_path / "state"), "orders")
    assert program.column == "amount" and program.constraints
