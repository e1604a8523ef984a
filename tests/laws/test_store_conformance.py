"""Every StateStore implementation in streamdq.state through the store laws
(streamdq.testing.store_checks): commit then restore, a replayed batch id not applied twice,
ordering of commits. The classes are found by walking the package for classes with every
method of the protocol, not listed by hand: a new store without ``_unit_test_params`` fails.
The Delta store writes real Delta tables with delta-rs under ``tmp_path`` (no Spark)."""

from __future__ import annotations

import doctest
from pathlib import Path
from typing import Any, ClassVar

import pytest
from streamdq.state import DeltaStateStore, InMemoryStateStore

from streamdq.testing import ContractViolation
from streamdq.testing.store_checks import check_store, store_classes


def _marks(name: str) -> list[pytest.MarkDecorator]:
    return [pytest.mark.integration] if "delta" in name else []


@pytest.mark.parametrize("name", [pytest.param(n, marks=_marks(n)) for n in sorted(store_classes())])
def test_every_store_keeps_the_laws(name: str, tmp_path: Path) -> None:
    report = check_store(store_classes()[name], tmp_path)
    assert report.params and report.laws >= 10 * len(report.params)


def test_both_stores_are_found() -> None:
    assert {DeltaStateStore, InMemoryStateStore} <= set(store_classes().values())


class _Forgetful(InMemoryStateStore):
    """Applies a replayed batch again: the exactly-once law must catch it."""

    PERSISTENT: ClassVar[bool] = False

    @classmethod
    def _unit_test_params(cls, root: Path) -> Any:
        yield {}

    def commit(self, query_id: str, batch_id: int, **kw: Any) -> bool:
        last = self.last_committed_batch(query_id)
        if last is not None and batch_id <= last:
            with self._lock:
                self._last[query_id] = batch_id - 1 if batch_id else -1
                if batch_id == 0:
                    self._last.pop(query_id)
        return bool(super().commit(query_id, batch_id, **kw))


def test_a_store_that_applies_a_replayed_batch_twice_fails(tmp_path: Path) -> None:
    with pytest.raises(ContractViolation, match="applied twice|again returned True"):
        check_store(_Forgetful, tmp_path)


def test_a_store_without_unit_test_params_or_persistence_flag_fails(tmp_path: Path) -> None:
    class NoParams(InMemoryStateStore):
        pass

    class NoFlag(InMemoryStateStore):
        @classmethod
        def _unit_test_params(cls, root: Path) -> Any:
            yield {}

    with pytest.raises(ContractViolation, match="defines no _unit_test_params"):
        check_store(NoParams, tmp_path)
    with pytest.raises(ContractViolation, match="PERSISTENT"):
        check_store(NoFlag, tmp_path)


def test_a_persistent_store_that_forgets_on_restart_fails(tmp_path: Path) -> None:
    class Amnesic(InMemoryStateStore):
        PERSISTENT: ClassVar[bool] = True  # claims to persist, but a new instance starts empty

        @classmethod
        def _unit_test_params(cls, root: Path) -> Any:
            yield {}

    with pytest.raises(ContractViolation, match="restored store"):
        check_store(Amnesic, tmp_path)


def test_the_kit_examples_run() -> None:
    import streamdq.testing.reports as reports
    import streamdq.testing.store_checks as kit

    assert doctest.testmod(kit).failed == 0
    assert doctest.testmod(reports).failed == 0
