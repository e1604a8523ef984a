"""The pipelined commit through real queries: a JSON file source, a real Delta state store.

``foreachBatch`` returns once a batch is computed; its judge, commit and emit run while Spark
plans the next batch (engine/pipeline.py). Spark then writes its commit log before the batch is
in the store, and the runner rewinds the checkpoint to the store at start
(engine/checkpoint_log.py). Two ways the store falls behind Spark's commit log:

* ``test_a_failed_commit_is_run_again_by_the_restart``: batch 2's commit raises (after its
  ``foreachBatch`` returned); batch 3 fails the query naming batch 2; the restart runs batch 2
  again from its own offsets, then batch 3.
* ``test_a_kill_while_the_commit_log_is_ahead_of_the_store_loses_nothing``: a ``streamdq run``
  subprocess is SIGKILLed while Spark's commit log holds batch 2 and the store does not
  (``STREAMDQ_HOLD_TAIL_OF_BATCH``); the next run, with the pipelined commit turned off, stores
  it (the rewind does not depend on the option).

Both end with every row counted once: each batch's report once, batch-scope sizes summing to
the rows, the total size equal to the rows, the order ids unique in the total.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.integration.conftest import start_streamdq_run

pytestmark = [pytest.mark.integration]

SCHEMA = "order_id STRING, ts TIMESTAMP, amount DOUBLE"
FILES, ROWS = 5, 4


def _inbox(tmp: Path) -> Path:
    inbox = tmp / "in"
    inbox.mkdir()
    for f in range(FILES):
        rows = [
            {"order_id": f"o{f}-{i}", "ts": f"2024-01-01T00:0{f}:{10 * i:02d}Z", "amount": float(i)}
            for i in range(ROWS)
        ]
        (inbox / f"orders-{f}.json").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return inbox


def _run_config(tmp: Path) -> Path:
    cfg = {
        "dataset": "orders",
        "source": {
            "type": "files",
            "path": str(_inbox(tmp)),
            "format": "json",
            "schema": SCHEMA,
            "max_files_per_trigger": 1,
        },
        "event_time": "ts",
        "window": "1 minute",
        "trigger": "available_now",
        "checkpoint": str(tmp / "chk"),
        "state": {"path": str(tmp / "state"), "pipelined_commit": True},
        "checks": [
            {
                "description": "orders",
                "level": "error",
                "constraints": [
                    {"has_size": {"assertion": ">= 0", "scope": "batch"}},
                    {"has_size": {"assertion": ">= 0", "scope": "total"}},
                    {"is_unique": {"column": "order_id", "scope": "total"}},
                ],
            }
        ],
        "sinks": [{"type": "jsonl", "path": str(tmp / "reports.jsonl")}],
        "supervision": False,
    }
    path = tmp / "run.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def _assert_every_row_once(state: Path) -> None:
    from streamdq.state import DeltaStateStore

    store = DeltaStateStore(str(state))
    reports = store.table("reports")
    assert reports is not None
    # each batch once, none missing (a batch run again after a rewind may take the files that
    # followed it along: Spark plans the next batch anew)
    batches = sorted(reports.to_pyarrow_table().column("batch_id").to_pylist())
    assert batches == list(range(len(batches))), batches
    sizes = store.history("orders", "Size", scope="batch")
    assert sorted(sizes.column("batch_id").to_pylist()) == batches
    assert sum(sizes.column("value").to_pylist()) == FILES * ROWS
    total = store.history("orders", "Size", scope="total")
    assert total.column("value").to_pylist()[-1] == FILES * ROWS
    unique = store.history("orders", "Uniqueness", scope="total", instance="order_id")
    assert unique.column("value").to_pylist()[-1] == 1.0  # no row counted twice


def test_a_failed_commit_is_run_again_by_the_restart(tmp_path: Path, spark: Any, monkeypatch: Any) -> None:
    from pyspark.errors import StreamingQueryException
    from streamdq.state import DeltaStateStore

    import streamdq
    from streamdq.engine.checkpoint_log import committed_batch
    from streamdq.engine.pipeline import PipelinedBatchFailed

    real = DeltaStateStore.commit
    failed: list[int] = []

    def commit(self: Any, query_id: str, batch_id: int, **kw: Any) -> bool:
        if batch_id == 2 and not failed:
            failed.append(batch_id)
            raise OSError("disk full")
        return real(self, query_id, batch_id, **kw)

    monkeypatch.setattr(DeltaStateStore, "commit", commit)
    runner = streamdq.stream(spark, str(_run_config(tmp_path)))
    assert runner.pipelined
    query = runner.start()
    try:
        with pytest.raises(StreamingQueryException, match="PipelinedBatchFailed: batch 2"):
            query.awaitTermination(180)  # batch 3 raised batch 2's failure
    finally:
        runner.stop_query()
    assert failed == [2]
    assert runner.failed_batch is not None and runner.failed_batch[0] == 2
    assert isinstance(runner.failed_batch[1], OSError)
    assert runner.store.last_committed_batch(str(query.id)) == 1
    assert committed_batch(str(tmp_path / "chk")) == 2  # Spark moved past it

    query = runner.start()  # rewinds the checkpoint: Spark runs batch 2 again, then 3 and 4
    try:
        query.awaitTermination(180)
        assert query.exception() is None
    finally:
        runner.stop()
    assert not isinstance(runner.tail_failure, PipelinedBatchFailed)
    _assert_every_row_once(tmp_path / "state")


def _job(config: Path, log: Path, hold: int | None) -> subprocess.Popen[bytes]:
    return start_streamdq_run(
        config, log, {"STREAMDQ_HOLD_TAIL_OF_BATCH": None if hold is None else str(hold)}
    )


@pytest.mark.slow
def test_a_kill_while_the_commit_log_is_ahead_of_the_store_loses_nothing(tmp_path: Path) -> None:
    from streamdq.state import DeltaStateStore

    config, log = _run_config(tmp_path), tmp_path / "job.log"
    commits = tmp_path / "chk" / "commits"
    job = _job(config, log, hold=2)
    try:
        deadline = time.monotonic() + 240
        while not (commits / "2").exists():
            assert job.poll() is None, log.read_text(errors="replace")[-3000:]
            assert time.monotonic() < deadline, "Spark did not commit batch 2 in time"
            time.sleep(0.2)
        # batch 3 is planned (its offsets logged) and waits for batch 2's tail, which never ends
        while not (tmp_path / "chk" / "offsets" / "3").exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(1.0)
    finally:
        job.send_signal(signal.SIGKILL)
        job.wait(60)
    meta = (tmp_path / "chk" / "metadata").read_text().splitlines()[0]
    assert DeltaStateStore(str(tmp_path / "state")).last_committed_batch(json.loads(meta)["id"]) == 1

    # the next run commits inline: the checkpoint is rewound on every start all the same
    cfg = yaml.safe_load(config.read_text())
    cfg["state"]["pipelined_commit"] = False
    inline = tmp_path / "run-inline.yaml"
    inline.write_text(yaml.safe_dump(cfg))
    job = _job(inline, log, hold=None)
    assert job.wait(300) == 0, log.read_text(errors="replace")[-3000:]
    assert "Spark runs it again with the same offsets" in log.read_text(errors="replace")
    _assert_every_row_once(tmp_path / "state")
