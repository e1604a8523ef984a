"""The ``StateStore`` contract, run against every store implementation.

Subclass ``StoreContract`` with ``open_store(root)`` (a store on ``root``; called again to
simulate a restarted driver) and ``crash_next(store, root)`` (a store on the same data whose
next ``commit`` dies right before the report is written), and name the subclass ``Test...``:
tests/unit/state/test_memory_store.py (``InMemoryStateStore``) and
tests/integration/test_delta_store_contract.py (``DeltaStateStore``).
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from streamdq.state import DetectorStateRecord, StateStore, metric_records, result_records

from streamdq.analyzers import Size
from streamdq.analyzers.basic_states import NumMatches, NumMatchesAndCount, SumState
from streamdq.report import ScopedMetric
from tests.unit.state.state_testkit import (
    COMPLETE,
    MEAN,
    SIZE,
    T0,
    complete_record,
    mean_record,
    report,
    size_metric,
    size_record,
    window,
)


def commit(store: Any, batch_id: int, *, query_id: str = "q1", dataset: str = "orders", **kw: Any) -> bool:
    rep = kw.pop("rep", None) or report(
        dataset,
        query_id,
        batch_id,
        metrics=(ScopedMetric("batch", size_metric(float(batch_id)), analyzer_key=SIZE.key()),),
        closed=kw.pop("closed", ()),
    )
    return bool(
        store.commit(
            query_id,
            batch_id,
            dataset=dataset,
            states=kw.pop("states", [size_record(batch_id)]),
            metrics=kw.pop("metrics", metric_records(rep)),
            results=result_records(rep),
            report=rep,
            **kw,
        )
    )


def quarantine(n: int) -> pa.Table:
    return pa.table({"reason": ["bad json"] * n, "raw": [f"{{bad {i}" for i in range(n)]})


class StoreContract:
    def open_store(self, root: Path) -> Any:
        raise NotImplementedError

    def crash_next(self, store: Any, root: Path) -> Any:
        raise NotImplementedError

    def test_satisfies_the_protocol(self, tmp_path: Path) -> None:
        assert isinstance(self.open_store(tmp_path), StateStore)

    def test_commit_is_idempotent_per_query_and_batch(self, tmp_path: Path) -> None:
        store = self.open_store(tmp_path)
        assert store.last_committed_batch("q1") is None
        assert commit(store, 0) is True
        assert commit(store, 0) is False
        assert commit(self.open_store(tmp_path), 0) is False  # after a restart too
        assert commit(store, 0, query_id="q2") is True  # another query has its own batch ids
        assert commit(store, 1) is True
        assert commit(store, 0) is False  # an older batch than the last committed one
        assert store.last_committed_batch("q1") == 1
        assert store.last_committed_batch("q2") == 0
        assert store.last_committed_batch("other") is None
        assert [r["batch_id"] for r in store.history("orders", "Size", scope="batch").to_pylist()] == [
            0,
            0,
            1,
        ]

    def test_report_round_trips(self, tmp_path: Path) -> None:
        store = self.open_store(tmp_path)
        rep = report("orders", "q1", 3, failed=True)
        assert store.commit(
            "q1", 3, dataset="orders", states=[], metrics=[], results=result_records(rep), report=rep
        )
        assert self.open_store(tmp_path).report("q1", 3) == rep
        assert store.report("q1", 4) is None and store.report("q2", 3) is None

    def test_bad_input_is_rejected_before_anything_is_committed(self, tmp_path: Path) -> None:
        store = self.open_store(tmp_path)
        with pytest.raises(ValueError, match="batch=1"):
            commit(store, 2, rep=report("orders", "q1", 1))
        with pytest.raises(ValueError, match="two state records"):
            commit(store, 0, states=[size_record(1), size_record(2)])
        bad = quarantine(1).append_column("colour", pa.array(["red"]))
        with pytest.raises(ValueError, match="colour"):
            commit(store, 0, quarantine=bad)
        assert store.last_committed_batch("q1") is None
        assert store.load_states("orders") == {}
        assert store.history("orders", "Size").num_rows == 0

    def test_load_states_latest_per_key_without_closed_windows(self, tmp_path: Path) -> None:
        store = self.open_store(tmp_path)
        w0, w1, w2 = window(0), window(1), window(2)
        commit(store, 0, states=[size_record(3), size_record(3, "window", w0), mean_record(6.0, 3, "total")])
        commit(store, 1, states=[size_record(5), size_record(4, "window", w0), size_record(1, "window", w1)])
        commit(
            store,
            2,
            states=[size_record(9), size_record(5, "window", w0, final=True), size_record(4, "window", w2)],
        )
        commit(store, 3, states=[size_record(11), size_record(2, "window", w2)], closed=(w1,))
        commit(store, 0, query_id="q2", dataset="clicks", states=[size_record(100)])
        expected = {
            ("total", None, SIZE.state_key()): NumMatches(11),
            ("total", None, MEAN.state_key()): SumState(6.0, 3),
            ("window", w2.start, SIZE.state_key()): NumMatches(2),
        }
        assert store.load_states("orders") == expected
        assert self.open_store(tmp_path).load_states("orders") == expected
        assert store.load_states("clicks") == {("total", None, SIZE.state_key()): NumMatches(100)}
        assert store.load_states("nothing") == {}

    def test_an_empty_batch_commits_its_report_and_keeps_the_states(self, tmp_path: Path) -> None:
        store = self.open_store(tmp_path)
        w0 = window(0)
        states = [size_record(7), size_record(7, "window", w0)]
        commit(store, 0, states=states)
        for b in range(1, 4):  # nothing arrived: same states (or none), no metrics
            assert commit(store, b, states=states if b % 2 else [], metrics=[]) is True
        assert store.last_committed_batch("q1") == 3
        assert store.report("q1", 3) is not None
        expected = {
            ("total", None, SIZE.state_key()): NumMatches(7),
            ("window", w0.start, SIZE.state_key()): NumMatches(7),
        }
        assert store.load_states("orders") == expected
        assert self.open_store(tmp_path).load_states("orders") == expected
        assert store.merge_range("orders", SIZE, w0.start, w0.end) == NumMatches(7)

    def test_a_crash_before_the_report_is_invisible_and_repaired_by_the_replay(self, tmp_path: Path) -> None:
        store = self.open_store(tmp_path)
        w0 = window(0)
        commit(store, 0, states=[size_record(10), size_record(4, "window", w0)])
        batch1 = [size_record(25), size_record(9, "window", w0), size_record(6, "window", window(1))]
        det = [DetectorStateRecord.from_json("c-size", "OnlineNormal", {"mean": 1.0}, 1)]
        crashing = self.crash_next(store, tmp_path)
        with pytest.raises(Exception):  # noqa: B017 - whatever the store raises when the driver dies
            commit(crashing, 1, states=batch1, quarantine=quarantine(1), detector_states=det)
        restarted = self.open_store(tmp_path)
        assert restarted.last_committed_batch("q1") == 0
        assert restarted.report("q1", 1) is None
        assert restarted.load_states("orders") == {
            ("total", None, SIZE.state_key()): NumMatches(10),
            ("window", w0.start, SIZE.state_key()): NumMatches(4),
        }
        assert restarted.load_detector_states("orders") == {}
        assert [r["batch_id"] for r in restarted.history("orders", "Size").to_pylist()] == [0]
        assert restarted.merge_range("orders", SIZE, w0.start, w0.end) == NumMatches(4)
        assert commit(restarted, 1, states=batch1, quarantine=quarantine(1), detector_states=det) is True
        assert commit(restarted, 1, states=batch1) is False
        assert restarted.load_states("orders") == {
            ("total", None, SIZE.state_key()): NumMatches(25),
            ("window", w0.start, SIZE.state_key()): NumMatches(9),
            ("window", window(1).start, SIZE.state_key()): NumMatches(6),
        }
        assert restarted.load_detector_states("orders")["c-size"].json() == {"mean": 1.0}
        assert [r["batch_id"] for r in restarted.history("orders", "Size").to_pylist()] == [0, 1]

    def test_detector_states_latest_per_key(self, tmp_path: Path) -> None:
        store = self.open_store(tmp_path)

        def d(v: float, seq: int) -> DetectorStateRecord:
            return DetectorStateRecord.from_json("c-size", "OnlineNormal", {"mean": v}, seq)

        commit(store, 0, detector_states=[d(1.0, 0), DetectorStateRecord.from_json("k2", "Threshold", {}, 0)])
        commit(store, 1, detector_states=[d(2.0, 1), DetectorStateRecord.from_json("k2", "Threshold", {}, 1)])
        got = self.open_store(tmp_path).load_detector_states("orders")
        assert set(got) == {"c-size", "k2"}
        assert got["c-size"].json() == {"mean": 2.0}
        assert (got["c-size"].last_seq, got["c-size"].batch_id, got["c-size"].query_id) == (1, 1, "q1")
        # an unchanged state is not rewritten: it keeps the batch that last changed it
        assert (got["k2"].last_seq, got["k2"].batch_id) == (0, 0)
        assert store.load_detector_states("clicks") == {}

    def test_history_is_ordered_and_filtered(self, tmp_path: Path) -> None:
        store = self.open_store(tmp_path)
        for b in range(6):
            w = window(b // 2)
            metrics = (
                ScopedMetric("batch", size_metric(float(b)), analyzer_key=SIZE.key()),
                ScopedMetric("total", size_metric(float(10 * b)), analyzer_key=SIZE.key()),
                ScopedMetric("window", size_metric(float(100 + b)), window=w, analyzer_key=SIZE.key()),
            )
            commit(store, b, rep=report("orders", "q1", b, metrics=metrics))
        assert store.history("orders", "Size", scope="batch").column("value").to_pylist() == [
            float(b) for b in range(6)
        ]
        win = store.history("orders", "Size", scope="window")
        assert win.column("value").to_pylist() == [101.0, 103.0, 105.0]
        ranged = store.history(
            "orders", "Size", scope="batch", start=T0 + timedelta(seconds=5), end=T0 + timedelta(seconds=20)
        )
        assert ranged.column("batch_id").to_pylist() == [1, 2, 3]
        assert store.history("orders", "Size").num_rows == 15
        assert store.history("orders", "Size", instance="other").num_rows == 0
        with pytest.raises(ValueError, match="scope"):
            store.history("orders", "Size", scope="weekly")
        with pytest.raises(ValueError, match="timezone"):
            store.history("orders", "Size", start=T0.replace(tzinfo=None))

    def test_merge_range_folds_the_latest_state_of_each_window(self, tmp_path: Path) -> None:
        store = self.open_store(tmp_path)
        for i in range(4):
            w = window(i)
            commit(store, i, states=[size_record(i + 1, "window", w), complete_record(i, i + 1, w)])
        commit(store, 4, states=[size_record(10, "window", window(0))])  # window 0 updated later
        start, end = window(0).start, window(2).end
        assert store.merge_range("orders", SIZE, start, end) == NumMatches(10 + 2 + 3)
        assert store.merge_range("orders", Size().key(), start, end) == NumMatches(15)
        assert store.merge_range("orders", COMPLETE.state_key(), start, end) == NumMatchesAndCount(3, 6, 6)
        assert store.merge_range("orders", SIZE, start + timedelta(seconds=1), end) == NumMatches(5)
        assert store.merge_range("orders", SIZE, window(9).start, window(9).end) == NumMatches(0)
        with pytest.raises(LookupError):
            store.merge_range("orders", "no-such-key", start, end)
        with pytest.raises(ValueError, match="empty range"):
            store.merge_range("orders", SIZE, end, start)

    def test_maintain_keeps_everything_readable(self, tmp_path: Path) -> None:
        store = self.open_store(tmp_path)
        for b in range(3):
            commit(store, b, states=[size_record(b), size_record(b, "window", window(0))])
        store.maintain(retention_hours=0)
        assert store.last_committed_batch("q1") == 2
        assert store.load_states("orders")[("total", None, SIZE.state_key())] == NumMatches(2)
        assert store.history("orders", "Size").num_rows == 3
        assert commit(store, 2) is False
