"""Access logs end to end: Common/Combined lines plus unparseable ones through ``type: clf`` into
checks on status and bytes; unparseable lines are counted and quarantined with their raw text."""

from __future__ import annotations

import pytest

from tests.integration.conftest import run_to_end

pytestmark = [pytest.mark.integration]

LINES = [
    '127.0.0.1 - frank [10/Oct/2000:13:55:36 -0700] "GET /a.gif HTTP/1.0" 200 2326',
    '10.0.0.2 - - [10/Oct/2000:13:55:40 -0700] "GET /b HTTP/1.1" 404 - "http://x/" "curl/8"',
    '10.0.0.3 - - [10/Oct/2000:13:56:01 -0700] "POST /c HTTP/1.1" 500 100 "-" "Mozilla/5.0"',
    "this is not an access log line",
]


def test_clf_lines_into_checks_and_quarantine(tmp_path, spark):
    from streamdq.engine.streaming import stream

    inbox = tmp_path / "logs"
    inbox.mkdir()
    (tmp_path / "access.log").write_text("\n".join(LINES) + "\n")
    (tmp_path / "access.log").rename(inbox / "access.log")
    cfg = {
        "dataset": "web",
        "source": {"type": "clf", "path": str(inbox)},
        "trigger": "available_now",
        "checkpoint": str(tmp_path / "chk"),
        "state": {"path": str(tmp_path / "state")},
        "checks": [
            {
                "description": "web",
                "level": "error",
                "constraints": [
                    {"has_size": {"assertion": ">= 0", "scope": "total"}},
                    {"has_max": {"column": "status", "assertion": "< 500", "scope": "total"}},
                    {"has_sum": {"column": "bytes", "assertion": ">= 0", "scope": "total"}},
                ],
            }
        ],
        "sinks": [{"type": "jsonl", "path": str(tmp_path / "reports.jsonl")}],
    }
    runner = stream(spark, cfg)
    run_to_end(runner, 90)
    store = runner.store

    def last(name: str, instance: str | None = None) -> float:
        values = store.history("web", name, scope="total", instance=instance).column("value").to_pylist()
        return [v for v in values if v is not None][-1]

    assert last("Size") == 3
    assert last("Maximum", "status") == 500
    assert last("Sum", "bytes") == 2326 + 0 + 100
    bad = store.history("web", "BadRecords", scope="batch").column("value").to_pylist()
    assert sum(v for v in bad if v) == 1
    quarantine = store.table("quarantine").to_pyarrow_table().to_pylist()
    assert [(r["raw"], r["reason"]) for r in quarantine] == [(LINES[3], "unparseable log line")]
