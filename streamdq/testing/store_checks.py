"""``check_store``: the ``StateStore`` protocol laws (state/protocol.py, DESIGN.md sections 3
and 5), checked on a store class from its ``_unit_test_params(root)``.

Runs on the driver (the Delta store writes with delta-rs: no Spark). For every parameter set
the class's own ``_unit_test_params(root)`` yields (``root``: a fresh empty directory), on a
store built as ``cls(**params)``:

* **protocol**: the store is a ``StateStore``; a new store has committed nothing (no batch, no
  report, no states, no detector states);
* **commit then restore**: after a commit, ``load_states``, ``report`` and
  ``load_detector_states`` give back what was committed: from the same store, and, for a class
  with ``PERSISTENT = True``, from a new store on the same params (a restarted driver);
* **exactly once**: committing a batch id again returns False and changes nothing (its states,
  report and detector states stay those of the first commit); so does an older batch id after a
  newer one; ``last_committed_batch`` is the highest committed id of that query;
* **ordering**: the latest committed batch's state wins for each key; another query id keeps
  its own sequence.

A class without its own ``_unit_test_params`` or without ``PERSISTENT`` fails
(``ContractViolation``): a new store cannot skip the laws. ``store_classes()`` finds every store
implementation in ``streamdq.state`` (classes with every method of the protocol); the suite runs
the laws on each (tests/laws/test_store_conformance.py).

>>> from streamdq.state import InMemoryStateStore
>>> check_store(InMemoryStateStore, root=None).laws >= 10
True
"""

from __future__ import annotations

import inspect
import tempfile
from collections.abc import Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any

from streamdq.analyzers import Mean, Size
from streamdq.analyzers.basic_states import NumMatches, SumState
from streamdq.report import Window
from streamdq.state.protocol import StateStore
from streamdq.state.records import DetectorStateRecord, StateRecord, metric_records, result_records
from streamdq.testing.laws import ContractReport, ContractViolation, classes_in, unit_test_params
from streamdq.testing.reports import T0, batch_report

DATASET = "orders"
PROTOCOL_METHODS = tuple(
    name for name, _ in inspect.getmembers(StateStore, inspect.isfunction) if not name.startswith("_")
)


def store_classes() -> dict[str, type]:
    """Every class in the ``streamdq.state`` package that implements each method of the
    ``StateStore`` protocol, by qualified name."""
    import streamdq.state as package

    return classes_in(
        package,
        lambda cls: cls is not StateStore and all(callable(getattr(cls, m, None)) for m in PROTOCOL_METHODS),
    )


def _window(i: int) -> Window:
    return Window(T0 + timedelta(minutes=i), T0 + timedelta(minutes=i + 1))


class _Batch:
    """What one commit writes, and what a store must give back after it."""

    def __init__(self, query_id: str, batch_id: int, total: int) -> None:
        self.query_id, self.batch_id = query_id, batch_id
        self.report = batch_report(batch_id, query_id, dataset=DATASET, rows=total)
        w = _window(batch_id % 2)
        self.states = [
            StateRecord.of(Size(), NumMatches(total), "total"),
            StateRecord.of(Mean("amount"), SumState(1.5 * total, total), "window", w),
        ]
        self.expected = {
            ("total", None, Size().state_key()): NumMatches(total),
            ("window", w.start, Mean("amount").state_key()): SumState(1.5 * total, total),
        }
        self.detectors = [DetectorStateRecord.from_json("c-size", "online_normal", {"n": total}, batch_id)]

    def commit(self, store: Any) -> bool:
        return bool(
            store.commit(
                self.query_id,
                self.batch_id,
                dataset=DATASET,
                states=self.states,
                metrics=metric_records(self.report),
                results=result_records(self.report),
                report=self.report,
                detector_states=self.detectors,
            )
        )


def _params(cls: type, root: Path) -> list[dict[str, Any]]:
    params = unit_test_params(cls, root, gives="the keyword arguments of stores on the directory it is given")
    if not isinstance(cls.__dict__.get("PERSISTENT"), bool):
        raise ContractViolation(
            f"{cls.__name__} does not say whether it persists: set PERSISTENT = True (a new store on "
            "the same params sees the commits) or False (in memory)"
        )
    return params


def _state_bytes(states: Mapping[Any, Any]) -> dict[Any, bytes]:
    return {k: v.to_bytes() for k, v in states.items()}


def _seen(store: Any, batch: _Batch, where: str, what: str) -> None:
    """The store gives back exactly what ``batch`` committed (states, report, detector states)."""
    got = store.load_states(DATASET)
    if _state_bytes(got) != _state_bytes(batch.expected):
        raise ContractViolation(f"{where}: {what}: load_states gives {got!r}, not {batch.expected!r}")
    report = store.report(batch.query_id, batch.batch_id)
    if report != batch.report:
        raise ContractViolation(
            f"{where}: {what}: report({batch.query_id!r}, {batch.batch_id}) is {report!r}"
        )
    detectors = store.load_detector_states(DATASET)
    if set(detectors) != {"c-size"} or detectors["c-size"].json() != batch.detectors[0].json():
        raise ContractViolation(f"{where}: {what}: load_detector_states gives {detectors!r}")


def _check_one(cls: type, params: dict[str, Any], report: ContractReport) -> None:
    where = f"{cls.__name__} with params {params}"
    store = cls(**params)
    if not isinstance(store, StateStore):
        raise ContractViolation(f"{where}: is not a StateStore (state/protocol.py)")
    if store.last_committed_batch("q1") is not None or store.report("q1", 0) is not None:
        raise ContractViolation(f"{where}: a new store has a committed batch")
    if store.load_states(DATASET) or store.load_detector_states(DATASET):
        raise ContractViolation(f"{where}: a new store has states")
    report.laws += 2

    first = _Batch("q1", 0, 10)
    if not first.commit(store):
        raise ContractViolation(f"{where}: the first commit of (q1, 0) returned False")
    _seen(store, first, where, "after committing batch 0")
    report.laws += 1

    replayed = _Batch("q1", 0, 99)  # the same batch id with other content: a replay
    if replayed.commit(store):
        raise ContractViolation(f"{where}: committing batch 0 again returned True (applied twice)")
    _seen(store, first, where, "after replaying batch 0")
    if store.last_committed_batch("q1") != 0:
        raise ContractViolation(f"{where}: last_committed_batch changed on a replay")
    report.laws += 2

    second, third = _Batch("q1", 1, 20), _Batch("q1", 2, 30)
    if not (second.commit(store) and third.commit(store)):
        raise ContractViolation(f"{where}: committing batches 1 then 2 did not return True")
    older = _Batch("q1", 1, 77)
    if older.commit(store):
        raise ContractViolation(f"{where}: batch 1 committed again after batch 2 returned True")
    if store.last_committed_batch("q1") != 2:
        raise ContractViolation(f"{where}: last_committed_batch is {store.last_committed_batch('q1')}, not 2")
    expected = dict(third.expected)
    expected.update({k: v for k, v in second.expected.items() if k[0] == "window" and k not in expected})
    got = store.load_states(DATASET)
    if _state_bytes(got) != _state_bytes(expected):
        raise ContractViolation(f"{where}: after batches 0, 1, 2 load_states gives {got!r}, not {expected!r}")
    report.laws += 3

    other = _Batch("q2", 0, 5)
    if not other.commit(store) or store.last_committed_batch("q1") != 2:
        raise ContractViolation(f"{where}: another query id does not keep its own batch sequence")
    if store.last_committed_batch("q2") != 0:
        raise ContractViolation(f"{where}: last_committed_batch of q2 is not 0")
    report.laws += 1

    if cls.PERSISTENT:  # type: ignore[attr-defined]
        restored = cls(**params)
        for query_id, last in (("q1", 2), ("q2", 0)):
            if restored.last_committed_batch(query_id) != last:
                raise ContractViolation(f"{where}: a restored store lost the last batch of {query_id}")
        for batch in (first, second, third, other):
            if restored.report(batch.query_id, batch.batch_id) != batch.report:
                raise ContractViolation(f"{where}: a restored store lost the report of {batch.batch_id}")
        if _state_bytes(restored.load_states(DATASET)) != _state_bytes(store.load_states(DATASET)):
            raise ContractViolation(f"{where}: a restored store gives other states")
        if _Batch("q1", 2, 1).commit(restored):
            raise ContractViolation(f"{where}: a restored store applied a replayed batch again")
        report.laws += 4
    maintain = getattr(store, "maintain", None)
    if maintain is not None:
        maintain()
        if store.last_committed_batch("q1") != 2 or store.report("q1", 2) != third.report:
            raise ContractViolation(f"{where}: maintain() lost committed batches")
        report.laws += 1
    close = getattr(store, "close", None)
    if close is not None:
        close()


def check_store(cls: type, root: Path | None = None) -> ContractReport:
    """Check the store class ``cls`` against the StateStore laws; ``root`` is the directory its
    ``_unit_test_params`` may use (a fresh temporary directory when None; it must be empty)."""
    if root is None:
        with tempfile.TemporaryDirectory(prefix="streamdq-store-kit-") as tmp:
            return check_store(cls, Path(tmp))
    param_sets = _params(cls, root)
    report = ContractReport(cls.__name__, param_sets)
    for i in range(len(param_sets)):
        fresh = root / f"params{i}"  # each parameter set gets its own empty directory
        fresh.mkdir(parents=True)
        _check_one(cls, _params(cls, fresh)[i], report)
    return report


__all__ = ["PROTOCOL_METHODS", "check_store", "store_classes"]
