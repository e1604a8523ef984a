"""``streamdq query history|merge`` over a small real Delta state store."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
from streamdq.state import DeltaStateStore, metric_records, result_records

from streamdq.analyzers import Mean
from streamdq.commands import query
from streamdq.report import ScopedMetric
from tests.unit.state.state_testkit import MEAN, mean_record, report, size_metric, window


def run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="streamdq")
    query.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return int(args.func(args))


@pytest.fixture
def store_root(tmp_path: Path) -> str:
    store = DeltaStateStore(str(tmp_path))
    for b, (total, n) in enumerate([(6.0, 3), (10.0, 2), (3.0, 3)]):
        rep = report(
            "orders",
            "q1",
            b,
            metrics=(ScopedMetric("window", size_metric(float(n)), window=window(b)),),
        )
        store.commit(
            "q1",
            b,
            dataset="orders",
            states=[mean_record(total, n, "window", window(b))],
            metrics=metric_records(rep),
            results=result_records(rep),
            report=rep,
        )
    return str(tmp_path)


def test_query_is_a_registered_command() -> None:
    from streamdq.cli import COMMAND_MODULES

    assert "streamdq.commands.query" in COMMAND_MODULES


def test_history_json(store_root: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        run(
            [
                "query",
                "history",
                "--state",
                store_root,
                "--dataset",
                "orders",
                "--metric",
                "Size",
                "--format",
                "json",
            ]
        )
        == 0
    )
    rows = json.loads(capsys.readouterr().out)
    assert [r["value"] for r in rows] == [3.0, 2.0, 3.0]
    assert rows[0]["window_start"] == window(0).start.isoformat()


def test_history_text_with_range(store_root: str, capsys: pytest.CaptureFixture[str]) -> None:
    start, end = window(1).start.isoformat(), window(2).start.strftime("%Y-%m-%dT%H:%M:%S")  # naive = UTC
    code = run(
        [
            "query",
            "history",
            "--state",
            store_root,
            "--dataset",
            "orders",
            "--metric",
            "Size",
            "--start",
            start,
            "--end",
            end,
        ]
    )
    assert code == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 2 and lines[1].split()[-1] == "1"


def test_merge_prints_the_metric_of_the_merged_windows(
    store_root: str, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = json.dumps(Mean("amount").to_spec())
    argv = ["query", "merge", "--state", store_root, "--dataset", "orders", "--analyzer", spec]
    argv += ["--start", window(0).start.isoformat(), "--end", window(1).end.isoformat(), "--format", "json"]
    assert run(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["windows"] == 2
    assert out["metric"]["value"] == pytest.approx(16.0 / 5)
    # by stored state key, text output
    argv = ["query", "merge", "--state", store_root, "--dataset", "orders", "--analyzer", MEAN.state_key()]
    argv += ["--start", window(0).start.isoformat(), "--end", window(2).end.isoformat()]
    assert run(argv) == 0
    assert "over 3 window(s)" in capsys.readouterr().out


def test_errors_name_the_problem(tmp_path: Path, store_root: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        run(["query", "history", "--state", str(tmp_path / "missing"), "--dataset", "d", "--metric", "Size"])
        == 2
    )
    assert "no streamdq state" in capsys.readouterr().err
    argv = ["query", "merge", "--state", store_root, "--dataset", "orders", "--analyzer", "nokey"]
    argv += ["--start", "2026-01-01T00:00:00Z", "--end", "2026-01-02T00:00:00Z"]
    assert run(argv) == 2
    assert "no window states" in capsys.readouterr().err
    # an analyzer spec naming no analyzer: the message itself, not a KeyError's quoted repr
    argv[argv.index("nokey")] = json.dumps({"analyzer": "Meen", "column": "amount"})
    assert run(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("streamdq query merge: unknown analyzer 'Meen'; did you mean 'Mean'? (known: "), err
    with pytest.raises(SystemExit):
        run(
            [
                "query",
                "history",
                "--state",
                store_root,
                "--dataset",
                "d",
                "--metric",
                "Size",
                "--start",
                "yesterday",
            ]
        )
    assert "not an ISO-8601 time" in capsys.readouterr().err


def test_history_marks_open_windows_and_tells_filtered_metrics_apart(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Windows the last committed watermark has not closed are flagged open (their value is
    partial); a metric with a where filter is its own point, not the latest of one name."""
    from dataclasses import replace

    from streamdq.analyzers.metric import Metric

    store = DeltaStateStore(str(tmp_path))
    plain, filtered = Mean("amount"), Mean("amount", where="amount > 0")
    for b in range(3):
        metrics = (
            ScopedMetric("window", size_metric(900.0 if b < 2 else 80.0), window=window(b)),
            ScopedMetric("window", Metric("Column", "Mean", "amount", value=1.0 + b), window(b), plain.key()),
            ScopedMetric(
                "window", Metric("Column", "Mean", "amount", value=5.0 + b), window(b), filtered.key()
            ),
        )
        # after batch 2 the watermark has closed windows 0 and 1; window 2 is still filling
        rep = replace(
            report("orders", "q1", b, metrics=metrics, closed=(window(b - 1),) if b else ()),
            watermark=window(b).start,
        )
        store.commit(
            "q1",
            b,
            dataset="orders",
            states=[],
            metrics=metric_records(rep),
            results=result_records(rep),
            report=rep,
        )
    table = store.history("orders", "Size", scope="window")
    assert table.column("open").to_pylist() == [False, False, True]
    assert len(store.history("orders", "Mean", scope="window")) == 6
    argv = ["query", "history", "--state", str(tmp_path), "--dataset", "orders", "--metric", "Size"]
    assert run([*argv, "--format", "json"]) == 0
    assert [r["open"] for r in json.loads(capsys.readouterr().out)] == [False, False, True]
    assert run(argv) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert [line.split()[2] for line in lines[1:]] == ["closed", "closed", "open"]
    assert run([*argv[:-1], "Mean"]) == 0
    text = capsys.readouterr().out
    instances = [line.split(maxsplit=3)[3].rsplit(maxsplit=2)[0] for line in text.strip().splitlines()[1:]]
    assert sorted(instances) == ["amount"] * 3 + ["amount where amount > 0"] * 3
