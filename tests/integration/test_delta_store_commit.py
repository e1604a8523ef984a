"""What one DeltaStateStore.commit writes (fewer table writes per batch) and that restores stay exact.

* a batch whose states and detector states did not change writes its report and nothing else;
* ``states_latest`` is a snapshot written every ``snapshot_every`` state-changing batches; a
  restarted store lays the committed ``states`` log rows after it over it, so its
  ``load_states`` equals the in-memory store's after any sequence of batches, restarts and
  crashes mid-commit (a randomized differential test against ``InMemoryStateStore``).
"""

from __future__ import annotations

import contextlib
import random
from pathlib import Path

import pytest
from deltalake import DeltaTable
from streamdq.state import DeltaStateStore, DetectorStateRecord, InMemoryStateStore, result_records
from streamdq.state import schemas as S

from tests.integration.test_delta_store import CrashAt, crashing_store
from tests.unit.state.state_testkit import mean_record, report, size_record, window

pytestmark = pytest.mark.integration


def versions(root: Path) -> dict[str, int]:
    out = {}
    for name in S.SCHEMAS:
        if (root / name / "_delta_log").exists():
            out[name] = DeltaTable(str(root / name)).version()
    return out


def test_an_unchanged_batch_writes_only_its_report(tmp_path: Path) -> None:
    store = DeltaStateStore(str(tmp_path))
    states = [size_record(5), size_record(5, "window", window(0)), mean_record(3.0, 2, "total")]
    det = [DetectorStateRecord.from_json("c-size", "OnlineNormal", {"mean": 1.0}, 0)]
    rep = report("orders", "q1", 0)
    store.commit(
        "q1",
        0,
        dataset="orders",
        states=states,
        metrics=[],
        results=result_records(rep),
        report=rep,
        detector_states=det,
    )
    before = versions(tmp_path)
    for b in (1, 2):  # the handler sends every running state again, unchanged
        det_b = [DetectorStateRecord.from_json("c-size", "OnlineNormal", {"mean": 1.0}, b)]
        rep = report("orders", "q1", b)
        assert store.commit(
            "q1",
            b,
            dataset="orders",
            states=states,
            metrics=[],
            results=[],
            report=rep,
            detector_states=det_b,
        )
    after = versions(tmp_path)
    assert {k: after[k] - before[k] for k in after} == {k: (2 if k == S.REPORTS else 0) for k in after}
    assert DeltaStateStore(str(tmp_path)).load_states("orders") == InMemoryStateStore_states(states)


def InMemoryStateStore_states(states):  # type: ignore[no-untyped-def]  # noqa: N802
    mem = InMemoryStateStore()
    mem.commit(
        "q", 0, dataset="orders", states=states, metrics=[], results=[], report=report("orders", "q", 0)
    )
    return mem.load_states("orders")


def test_states_latest_is_a_periodic_snapshot_and_restores_are_exact(tmp_path: Path) -> None:
    store = DeltaStateStore(str(tmp_path), snapshot_every=5)
    mem = InMemoryStateStore()
    for b in range(12):
        w = window(b // 4)
        states = [size_record(b + 1), size_record(b % 4 + 1, "window", w)]
        closed = (window(b // 4 - 1),) if b % 4 == 0 and b else ()
        for s in (store, mem):
            s.commit(
                "q1",
                b,
                dataset="orders",
                states=states,
                metrics=[],
                results=[],
                report=report("orders", "q1", b, closed=closed),
            )
    # snapshots at batch 0 (first of this store instance), 5 and 10, not on every batch
    assert DeltaTable(str(tmp_path / S.STATES_LATEST)).version() == 3
    assert DeltaTable(str(tmp_path / S.STATES)).version() == 12
    assert DeltaStateStore(str(tmp_path)).load_states("orders") == mem.load_states("orders")


def detector_states(store) -> dict:  # type: ignore[no-untyped-def]
    return {k: r.state for k, r in store.load_detector_states("orders").items()}


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_restores_equal_the_in_memory_store_through_restarts_and_crashes(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    mem = InMemoryStateStore()
    store = DeltaStateStore(str(tmp_path), snapshot_every=rng.choice([1, 2, 3, 7]))
    total, windows, b = 0, {}, 0
    while b < 25:
        n = rng.choice([0, 0, 1, 3])  # rows in this batch; 0: an empty batch
        ws = rng.choice([0, 1]) + b // 5
        total += n
        if n:
            windows[ws] = windows.get(ws, 0) + n
        closed = tuple(window(i) for i in sorted(windows) if i < b // 5 - 1)
        finals = [size_record(windows.pop(w.start.minute), "window", w, final=True) for w in closed[:1]]
        late_close = closed[1:]  # closed through the report only
        for w in late_close:
            windows.pop(w.start.minute)
        states = (
            [size_record(total)] + [size_record(v, "window", window(i)) for i, v in windows.items()] + finals
        )
        det = [DetectorStateRecord.from_json("c", "OnlineNormal", {"total": total}, b)]
        rep = report("orders", "q1", b, closed=late_close)
        kw = dict(dataset="orders", states=states, metrics=[], results=[], report=rep, detector_states=det)
        roll = rng.random()
        done = False
        if roll < 0.15:  # the driver dies mid-commit, before one of the tables (if this batch writes it)
            table = rng.choice([S.STATES, S.STATES_LATEST, S.DETECTORS, S.REPORTS])
            with contextlib.suppress(CrashAt):
                done = crashing_store(tmp_path, table).commit("q1", b, **kw)
            store = DeltaStateStore(str(tmp_path), snapshot_every=store.snapshot_every)
        elif roll < 0.3:  # a restart between batches
            store = DeltaStateStore(str(tmp_path), snapshot_every=store.snapshot_every)
        if not done:
            assert store.load_states("orders") == mem.load_states("orders"), b
            assert detector_states(store) == detector_states(mem), b
            assert store.commit("q1", b, **kw) is True
        assert mem.commit("q1", b, **kw) is True
        assert store.commit("q1", b, **kw) is False
        assert store.load_states("orders") == mem.load_states("orders"), b
        b += 1
    assert DeltaStateStore(str(tmp_path)).load_states("orders") == mem.load_states("orders")
