"""``streamdq verify --state``: expressions' ``previous``/``previous_values`` read the batch-scope
history a streaming run stored in the Delta state store (committed here as a run would)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from streamdq.state.delta_store import DeltaStateStore
from streamdq.state.records import records_for_batch

from streamdq.cli import main
from streamdq.measure_result import MeasureResult
from streamdq.report import BatchReport

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "measure-check-pass"
CHECKS = """dataset: orders
measures:
  - {name: Null Count, sql: "select sum(cast((`col1` is null) as int)) from data", result_type: single_value}
checks:
  - description: orders
    constraints:
      - expression: {name: history, expression: 'previous_values("Null Count", 5) == [80, 95] && previous("Null Count") == 95'}
      - expression: {name: no more nulls than before, expression: 'measures["Null Count"] <= previous("Null Count")'}
pass: all
"""


def test_verify_reads_the_stored_history_of_a_measure(spark, capsys, tmp_path):
    state = tmp_path / "state"
    store = DeltaStateStore(str(state))
    t0 = datetime(2026, 11, 26, 12, 0, tzinfo=UTC)
    for batch_id, nulls in enumerate([80, 95]):
        report = BatchReport(
            "orders",
            "q",
            batch_id,
            t0 + timedelta(minutes=batch_id),
            measures=(MeasureResult("Null Count", "single_value", nulls),),
        )
        records = records_for_batch(report, total={}, open_windows={})
        store.commit(
            "q",
            batch_id,
            dataset="orders",
            states=records.states,
            metrics=records.metrics,
            results=(),
            report=report,
        )
    checks = tmp_path / "checks.yaml"
    checks.write_text(CHECKS)
    data = str(EXAMPLE / "orders.csv")  # 100 NULLs in col1: more than the 95 before
    code = main(
        ["verify", "--data", data, "--checks", str(checks), "--state", str(state), "--format", "json"]
    )
    document = json.loads(capsys.readouterr().out)["measure_check_pass"]
    assert document["check"] == {"history": True, "no more nulls than before": False}
    assert (document["pass"], code) == (False, 1)
    # without --state there is no history: previous() is null, the comparison a type error
    code = main(["verify", "--data", data, "--checks", str(checks), "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert report["measure_check_pass"]["check"] == {"history": False, "no more nulls than before": False}
    messages = [r["message"] for c in report["check_results"] for r in c["constraint_results"]]
    assert any("no more nulls than before: type error" in (m or "") for m in messages), messages
