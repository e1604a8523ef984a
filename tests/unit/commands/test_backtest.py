"""``streamdq backtest`` replays stored window metrics through a detector (real Delta tables)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from streamdq.state.delta_store import DeltaStateStore
from streamdq.state.records import records_for_batch

from streamdq.analyzers.metric import DATASET, Metric
from streamdq.cli import main
from streamdq.report import BatchReport, ScopedMetric, Window


def _store_with_window_sizes(path: str, sizes: list[float]) -> None:
    store = DeltaStateStore(path)
    t0 = datetime(2026, 11, 1, tzinfo=UTC)
    for i, size in enumerate(sizes):
        window = Window(t0 + timedelta(minutes=i), t0 + timedelta(minutes=i + 1))
        report = BatchReport(
            dataset="orders",
            query_id="q",
            batch_id=i,
            processing_time=window.end,
            metrics=(ScopedMetric("window", Metric(DATASET, "Size", "*", value=size), window, "size"),),
            closed_windows=(window,),
        )
        records = records_for_batch(report, total={}, open_windows={})
        store.commit(
            "q",
            i,
            dataset="orders",
            states=records.states,
            metrics=records.metrics,
            results=[],
            report=report,
        )


def test_backtest_flags_the_spike(tmp_path, capsys):
    sizes = [100.0, 101.0, 99.0, 100.0, 102.0, 98.0, 100.0, 5000.0, 100.0, 101.0]
    _store_with_window_sizes(str(tmp_path / "state"), sizes)
    code = main(
        [
            "backtest",
            "--state",
            str(tmp_path / "state"),
            "--dataset",
            "orders",
            "--metric",
            "Size",
            "--detector",
            '{"type": "simple_threshold", "lower_bound": 50, "upper_bound": 200}',
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "10 points" in out
    assert "5000" in out
    assert "1 anomalous of 10 points" in out


def test_backtest_bad_detector_spec_is_a_usage_error(tmp_path, capsys):
    _store_with_window_sizes(str(tmp_path / "state"), [1.0])
    code = main(
        [
            "backtest",
            "--state",
            str(tmp_path / "state"),
            "--dataset",
            "orders",
            "--metric",
            "Size",
            "--detector",
            '{"type": "no_such_detector"}',
        ]
    )
    assert code == 2
    assert "no_such_detector" in capsys.readouterr().err


def test_backtest_leaves_out_the_window_still_filling(tmp_path, capsys):
    """The last window has 80 rows of ~900 so far: the watermark has not closed it, so it is
    not judged (the streaming detectors judge closed windows only)."""

    store = DeltaStateStore(str(tmp_path / "state"))
    t0 = datetime(2026, 11, 1, tzinfo=UTC)
    sizes = [900.0, 910.0, 890.0, 905.0, 80.0]
    for i, size in enumerate(sizes):
        window = Window(t0 + timedelta(minutes=i), t0 + timedelta(minutes=i + 1))
        report = BatchReport(
            dataset="orders",
            query_id="q",
            batch_id=i,
            processing_time=window.end,
            metrics=(ScopedMetric("window", Metric(DATASET, "Size", "*", value=size), window, "size"),),
            watermark=window.start,  # closes the previous window, not this one
        )
        records = records_for_batch(report, total={}, open_windows={})
        store.commit(
            "q",
            i,
            dataset="orders",
            states=records.states,
            metrics=records.metrics,
            results=[],
            report=report,
        )
    argv = ["backtest", "--state", str(tmp_path / "state"), "--dataset", "orders", "--metric", "Size"]
    argv += ["--detector", '{"type": "simple_threshold", "lower_bound": 500, "upper_bound": 2000}']
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "4 points (1 open window(s) left out)" in out
    assert "0 anomalous of 4 points" in out
