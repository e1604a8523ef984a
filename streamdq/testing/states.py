"""``check_state``: the State contract (DESIGN.md section 3) on sample states of one class.

Runs on the driver in pure Python. For a state class and sample states (the class's
``_unit_test_states()`` when it defines one, else just its empty state):

* the empty state is the identity of ``merge`` (both sides), and ``merge`` leaves its
  operands unchanged (immutability);
* ``merge`` is commutative and associative over the samples (same state, or same bytes);
* ``to_bytes`` carries the class's type tag and format version, ``state_from_bytes`` reads it
  back to the same state, and writing it again gives the same bytes (stable at rest); bytes of a
  newer format version are rejected.

Every registered state is checked this way by the suite (tests/laws/test_contract_kit.py);
aggregations get the fuller ``check_aggregation`` (built from data, metric homomorphism, bounds).

>>> from streamdq.analyzers.basic_states import SumState
>>> check_state(SumState, [SumState(1.0), SumState(2.5)]).laws > 0
True
"""

from __future__ import annotations

import itertools
import struct
from collections.abc import Callable, Sequence

from streamdq.analyzers.register import state_from_bytes
from streamdq.analyzers.state import State, StateFormatError, split_header
from streamdq.testing.laws import ContractReport, ContractViolation, same


def sample_states(cls: type[State]) -> list[State]:
    """The class's ``_unit_test_states()`` (when defined) plus its empty state."""
    samples = getattr(cls, "_unit_test_states", None)
    out: list[State] = [cls.empty()]
    if samples is not None:
        out.extend(samples())
    return out


def check_roundtrip(
    state: State,
    where: str,
    load: Callable[[bytes], State] | None = None,
    report: ContractReport | None = None,
) -> None:
    """Tag, version, round trip and stable bytes of one state (``load``: bytes -> state)."""
    cls = type(state)
    loader = load or state_from_bytes
    data = state.to_bytes()
    tag, version, _ = split_header(data)
    if tag != cls.TYPE_TAG or version != cls.FORMAT_VERSION:
        raise ContractViolation(
            f"{where}: to_bytes carries tag {tag!r} version {version}, expected "
            f"{cls.TYPE_TAG!r} version {cls.FORMAT_VERSION}"
        )
    back = loader(data)
    if not same(back, state):
        raise ContractViolation(f"{where}: from_bytes(to_bytes(s)) is not s: {back!r} != {state!r}")
    if back.to_bytes() != data:
        raise ContractViolation(f"{where}: bytes are not stable: writing the loaded state gives other bytes")
    newer = _with_version(data, cls.FORMAT_VERSION + 1)
    try:
        loader(newer)
    except StateFormatError:
        pass
    else:
        raise ContractViolation(f"{where}: bytes of format version {cls.FORMAT_VERSION + 1} were accepted")
    if report is not None:
        report.laws += 4


def _with_version(data: bytes, version: int) -> bytes:
    tag_len = struct.unpack_from(">H", data, 4)[0]
    at = 6 + tag_len
    return data[:at] + struct.pack(">H", version) + data[at + 2 :]


def check_state(
    cls: type[State], states: Sequence[State] | None = None, *, load: Callable[[bytes], State] | None = None
) -> ContractReport:
    """Run the merge laws and serialization round trips on ``states`` of ``cls`` (default: its
    samples); ``load`` reads bytes back (default ``state_from_bytes``, the registry)."""
    report = ContractReport(cls.__name__)
    samples = list(states) if states is not None else sample_states(cls)
    empty = cls.empty()
    where = cls.__name__
    for i, s in enumerate(samples):
        before = s.to_bytes()
        for merged, law in ((s.merge(empty), "s.merge(empty)"), (empty.merge(s), "empty.merge(s)")):
            if not same(merged, s):
                raise ContractViolation(f"{where}: {law} is not s for sample {i}: {merged!r} != {s!r}")
        if s.to_bytes() != before:
            raise ContractViolation(f"{where}: merge changed its operand (sample {i})")
        check_roundtrip(s, f"{where} sample {i}", load=load, report=report)
        report.laws += 3
    for (i, a), (j, b) in itertools.combinations(enumerate(samples), 2):
        if not same(a.merge(b), b.merge(a)):
            raise ContractViolation(f"{where}: merge is not commutative for samples {i}, {j}")
        report.laws += 1
    for (i, a), (j, b), (k, c) in itertools.combinations(enumerate(samples), 3):
        if not same(a.merge(b).merge(c), a.merge(b.merge(c))):
            raise ContractViolation(f"{where}: merge is not associative for samples {i}, {j}, {k}")
        report.laws += 1
    return report


__all__ = ["check_roundtrip", "check_state", "sample_states"]
