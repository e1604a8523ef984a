"""SQL measures through a real streaming query (files source, two microbatches, Delta state):
per-batch values of every measure on the good rows, compiled measures also per closed window and
in total, all stored in Delta and read back by name (``state.measure_history``) and shown by
``streamdq query measure``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.integration.conftest import run_to_end

pytestmark = [pytest.mark.integration]

SCHEMA = "order_id STRING, ts TIMESTAMP, amount DOUBLE"
FILE_1 = [  # window [00:00, 00:01)
    {"order_id": "a", "ts": "2024-01-01T00:00:05Z", "amount": 10.0},
    {"order_id": "b", "ts": "2024-01-01T00:00:15Z", "amount": None},
    {"order_id": "a", "ts": "2024-01-01T00:00:25Z", "amount": 5.0},
]
FILE_2 = [  # window [00:02, 00:03): closes the first window
    {"order_id": "d", "ts": "2024-01-01T00:02:05Z", "amount": None},
    {"order_id": "e", "ts": "2024-01-01T00:02:15Z", "amount": None},
    {"order_id": "f", "ts": "2024-01-01T00:02:25Z", "amount": 7.0},
]
CHECKS = """
checks:
  - description: orders
    constraints: [{has_size: {assertion: ">= 0"}}]
measures:
  - {name: Null Count, sql: "select sum(cast((amount is null) as int)) from data", result_type: single_value}
  - name: rows
    sql: select count(*) as n, max(amount) as top from data
    result_type: map
  - name: counts
    sql: select count(order_id) as c, count(distinct order_id) as cd from data
    result_type: map
"""


def _drop(inbox: Path, tmp: Path, name: str, rows: list[dict], extra: str = "") -> None:
    staged = tmp / name
    staged.write_text("\n".join(json.dumps(r) for r in rows) + "\n" + extra)
    staged.rename(inbox / name)


def test_measures_per_batch_window_and_total_are_stored_and_queryable(tmp_path, spark, capsys):
    from streamdq.state.measure_history import measure_history

    from streamdq.cli import main
    from streamdq.engine.streaming import stream

    inbox = tmp_path / "in"
    inbox.mkdir()
    _drop(inbox, tmp_path, "1.json", FILE_1, '{"order_id": "x", "ts": \n')  # a malformed line
    _drop(inbox, tmp_path, "2.json", FILE_2)
    (tmp_path / "checks.yaml").write_text(CHECKS)
    cfg = {
        "dataset": "orders",
        "source": {"type": "files", "path": str(inbox), "format": "json", "schema": SCHEMA},
        "event_time": "ts",
        "window": "1 minute",
        "trigger": "available_now",
        "checkpoint": str(tmp_path / "chk"),
        "state": {"path": str(tmp_path / "state")},
        "checks_file": str(tmp_path / "checks.yaml"),
        "sinks": [{"type": "jsonl", "path": str(tmp_path / "reports.jsonl")}],
    }
    cfg["source"]["max_files_per_trigger"] = 1
    (tmp_path / "run.yaml").write_text(yaml.safe_dump(cfg))
    runner = stream(spark, str(tmp_path / "run.yaml"))
    run_to_end(runner, 120)

    store = runner.store
    assert runner.handler is not None
    reports = [store.report(runner.handler.query_id, b) for b in (0, 1)]
    assert all(r is not None for r in reports)

    def values(report, scope):
        return {m.name: m.value for m in report.measures if m.scope == scope}

    # batch scope: every measure, on the good rows only (the malformed line is not data)
    assert values(reports[0], "batch") == {
        "Null Count": 1,
        "rows": {"n": 3, "top": 10.0},
        "counts": {"c": 3, "cd": 2},
    }
    assert values(reports[1], "batch") == {
        "Null Count": 2,
        "rows": {"n": 3, "top": 7.0},
        "counts": {"c": 3, "cd": 3},
    }
    # compiled measures merge: the total, and the window closed by the second batch
    assert values(reports[0], "total") == {"Null Count": 1, "rows": {"n": 3, "top": 10.0}}
    assert values(reports[1], "total") == {"Null Count": 3, "rows": {"n": 6, "top": 10.0}}
    closed = [m for m in reports[1].measures if m.scope == "window"]
    assert {m.name: m.value for m in closed} == {"Null Count": 1, "rows": {"n": 3, "top": 10.0}}
    assert closed[0].window == ("2024-01-01T00:00:00+00:00", "2024-01-01T00:01:00+00:00")

    # stored in Delta, read back by name
    assert measure_history(store, "orders", "Null Count", 30) == [1, 2]
    assert measure_history(store, "orders", "Null Count", 30, scope="total") == [1, 3]
    assert measure_history(store, "orders", "Null Count", 30, scope="window") == [1]
    assert measure_history(store, "orders", "counts", 1) == [{"c": 3, "cd": 3}]

    assert main(["query", "measure", "--state", str(tmp_path / "state"), "--dataset", "orders",
                 "--name", "counts", "--format", "json"]) == 0  # fmt: skip
    points = json.loads(capsys.readouterr().out)
    assert [p["value"] for p in points] == [{"c": 3, "cd": 2}, {"c": 3, "cd": 3}]
    assert main(["query", "measure", "--state", str(tmp_path / "state"), "--dataset", "orders",
                 "--name", "Null Count", "--scope", "total", "--last", "1"]) == 0  # fmt: skip
    text = capsys.readouterr().out
    assert text.splitlines()[-1].split()[-2:] == ["1", "3"], text
