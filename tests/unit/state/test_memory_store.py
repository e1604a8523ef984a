"""InMemoryStateStore: the store contract (shared with DeltaStateStore) plus its own extras."""

from __future__ import annotations

import doctest
from pathlib import Path
from typing import Any

import pytest
from streamdq.state import InMemoryStateStore, memory_store
from streamdq.state import schemas as S

from streamdq.analyzers.basic_states import NumMatches
from tests.unit.state.state_testkit import SIZE, size_record, window
from tests.unit.state.store_contract import StoreContract, commit, quarantine

_STORES: dict[Path, InMemoryStateStore] = {}


class TestInMemoryStoreContract(StoreContract):
    def open_store(self, root: Path) -> Any:
        # a "restarted driver" sees the same memory: one store per root
        return _STORES.setdefault(root, InMemoryStateStore())

    def crash_next(self, store: Any, root: Path) -> Any:
        store.crash_before_report()
        return store


def test_the_module_docstring_example_runs() -> None:
    failed, attempted = doctest.testmod(memory_store)
    assert attempted > 0 and failed == 0


def test_rows_are_kept_in_the_delta_schemas() -> None:
    store = InMemoryStateStore()
    commit(store, 0, states=[size_record(2), size_record(2, "window", window(0))], quarantine=quarantine(2))
    commit(store, 0)  # replay: nothing added
    for name in S.SCHEMAS:
        assert store.table(name).schema == S.SCHEMAS[name], name
    assert store.table(S.STATES).num_rows == 2
    assert store.table(S.QUARANTINE).column("reason").to_pylist() == ["bad json"] * 2
    assert store.table(S.REPORTS).column("batch_id").to_pylist() == [0]
    assert store.table(S.DETECTORS).num_rows == 0
    assert store.commits == 1


def test_a_simulated_crash_leaves_nothing_and_applies_once() -> None:
    store = InMemoryStateStore()
    store.crash_before_report()
    with pytest.raises(RuntimeError, match="simulated crash"):
        commit(store, 0, states=[size_record(5)])
    assert store.last_committed_batch("q1") is None and store.table(S.STATES).num_rows == 0
    assert commit(store, 0, states=[size_record(5)]) is True  # the next commit is not affected
    assert store.load_states("orders") == {("total", None, SIZE.state_key()): NumMatches(5)}


def test_a_window_closed_by_the_report_leaves_the_latest_states_but_stays_in_range_queries() -> None:
    store = InMemoryStateStore()
    w0, w1 = window(0), window(1)
    commit(store, 0, states=[size_record(1, "window", w0), size_record(3, "window", w1)])
    commit(store, 1, states=[size_record(4)], closed=(w0,))
    assert store.load_states("orders") == {
        ("total", None, SIZE.state_key()): NumMatches(4),
        ("window", w1.start, SIZE.state_key()): NumMatches(3),
    }
    assert store.merge_range("orders", SIZE, w0.start, w1.end) == NumMatches(4)
