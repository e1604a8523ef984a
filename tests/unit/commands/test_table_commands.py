"""``streamdq quarantine | results | alerts`` over a real Delta state store (issue 17, item 9):
time range, limit, text and JSON output, the file:line of a quarantined record."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, timedelta
from pathlib import Path

import pyarrow as pa
import pytest
from streamdq.state import DeltaStateStore, metric_records, result_records

from streamdq.alerts.alert import Alert, alert_id_for
from streamdq.cli import main
from tests.unit.state.state_testkit import T0, report


def _alert(batch_id: int, kind: str) -> dict[str, object]:
    return Alert(
        alert_id=alert_id_for("q1", batch_id, "orders", "c-size", kind),
        kind=kind,
        dataset="orders",
        severity="Error",
        check="orders",
        constraint="SizeConstraint(Size(None))",
        constraint_id="c-size",
        metric_name="Size",
        metric_entity="Dataset",
        metric_instance="*",
        metric_value=float(batch_id),
        expected=">= 1",
        scope="batch",
        window=None,
        query_id="q1",
        batch_id=batch_id,
        event_time=None,
        processing_time=T0 + timedelta(seconds=5 * batch_id),
        message=f"'Size >= 1' {kind} in batch {batch_id}",
    ).to_dict()


@pytest.fixture(scope="module")
def state_root(tmp_path_factory: pytest.TempPathFactory) -> str:
    root = tmp_path_factory.mktemp("state")
    store = DeltaStateStore(str(root))
    for b in range(4):
        failed = b in (1, 2)
        rep = report("orders", "q1", b, failed=failed)
        kinds = {1: ["violation"], 3: ["resolved"]}.get(b, [])
        rep = replace(rep, alerts=tuple(_alert(b, k) for k in kinds))
        quarantine = pa.table(
            {
                "reason": ["missing required field order_id", f"field amount: expected DOUBLE got 'x{b}'"],
                "raw": [f'{{"amount": {b}}}', "{oops"],
                "file": ["file:/data/in/orders-1.json", "file:/data/in/orders-2.json"],
                "line": pa.array([10 + b, 3], pa.int64()),
            }
        )
        store.commit(
            "q1",
            b,
            dataset="orders",
            states=[],
            metrics=metric_records(rep),
            results=result_records(rep),
            report=rep,
            quarantine=quarantine,
        )
    return str(root)


def test_the_commands_are_registered() -> None:
    from streamdq.cli import COMMAND_MODULES

    for name in ("quarantine", "results", "alerts"):
        assert f"streamdq.commands.{name}" in COMMAND_MODULES


def test_quarantine_text_names_file_line_and_reasons(
    state_root: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["quarantine", "--state", state_root]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 8 + 1
    assert "orders-1.json:10" in lines[0] and "missing required field order_id" in lines[0]
    assert "orders-2.json:3" in lines[1] and "field amount: expected DOUBLE got 'x0'" in lines[1]
    # counted per reason without the offending value
    assert lines[-1] == "8 record(s): missing required field order_id 4, field amount: expected DOUBLE 4"


def test_quarantine_range_limit_reason_and_json(state_root: str, capsys: pytest.CaptureFixture[str]) -> None:
    # quarantined records are ranged on ingested_at: the commit time
    store = DeltaStateStore(state_root)
    times = sorted(set(store.table("quarantine").to_pyarrow_table().column("ingested_at").to_pylist()))
    since = times[1].isoformat()
    until = times[3].astimezone(UTC).replace(tzinfo=None).isoformat()  # no zone: UTC
    argv = ["quarantine", "--state", state_root, "--since", since, "--until", until, "--format", "json"]
    assert main(argv) == 0
    rows = json.loads(capsys.readouterr().out)
    assert sorted({r["batch_id"] for r in rows}) == [1, 2]
    assert {r["line"] for r in rows} == {11, 12, 3}
    assert main([*argv, "--limit", "1"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 1 and rows[0]["batch_id"] == 2  # the newest
    assert main(["quarantine", "--state", state_root, "--reason", "MISSING", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 4 and all("missing" in r["reason"] for r in rows)


def test_results_failed_only(state_root: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["results", "--state", state_root, "--format", "json"]) == 0
    assert len(json.loads(capsys.readouterr().out)) == 4
    assert main(["results", "--state", state_root, "--failed"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 2
    assert all("Failure" in line and "too small" in line and "(expected" in line for line in lines)


def test_alerts_text_json_and_kind(state_root: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["alerts", "--state", state_root]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert [line.split()[2] for line in lines] == ["violation", "resolved"]
    assert main(["alerts", "--state", state_root, "--kind", "resolved", "--format", "json"]) == 0
    docs = json.loads(capsys.readouterr().out)
    assert [d["batch_id"] for d in docs] == [3] and docs[0]["schema"] == "streamdq.alert/v1"
    until = (T0 + timedelta(seconds=10)).isoformat()
    assert main(["alerts", "--state", state_root, "--until", until, "--format", "json"]) == 0
    assert [d["kind"] for d in json.loads(capsys.readouterr().out)] == ["violation"]


def test_errors(tmp_path: Path, state_root: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["alerts", "--state", str(tmp_path / "none")]) == 2
    assert "no streamdq state under --state" in capsys.readouterr().err
    since, until = "2026-01-02T00:00:00Z", "2026-01-01T00:00:00Z"
    assert main(["results", "--state", state_root, "--since", since, "--until", until]) == 2
    assert "empty range" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["quarantine", "--state", state_root, "--limit", "0"])
    assert "whole number >= 1" in capsys.readouterr().err
    assert main(["quarantine", "--state", state_root, "--dataset", "other"]) == 0
    assert "no quarantined records in dataset other" in capsys.readouterr().out
