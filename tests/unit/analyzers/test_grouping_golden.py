"""Golden bytes: FrequencyState format version 1 as stored by streamdq (exact and sketch form).

The files were written by this version; a change that cannot read them (or reads them
differently) breaks stored states in the Delta state store and must bump FORMAT_VERSION.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from streamdq.analyzers import CountDistinct, FrequencyState, Histogram, MutualInformation, Uniqueness
from streamdq.analyzers.state import state_from_bytes

GOLDEN = Path(__file__).parent / "golden"


def test_exact_v1_reads_back():
    data = (GOLDEN / "frequency_exact_v1.bin").read_bytes()
    state = state_from_bytes(data)
    assert isinstance(state, FrequencyState) and not state.is_sketch
    assert (state.n, state.total, state.max_groups) == (6, 7, 100)
    assert state.table is not None
    assert state.table.to_pydict() == {"k0": ["a", "b", None], "k1": [1, None, 3], "count": [3, 1, 2]}
    assert Uniqueness(("x", "y")).metric(state).value == 1 / 6
    assert MutualInformation(("x", "y")).metric(state).ok
    assert state.to_bytes() == data


def test_sketch_v1_reads_back():
    data = (GOLDEN / "frequency_sketch_v1.bin").read_bytes()
    state = state_from_bytes(data)
    assert isinstance(state, FrequencyState) and state.is_sketch
    assert (state.n, state.total, state.max_groups) == (1275, 1300, 32)
    m = CountDistinct(("x",)).metric(state)
    assert m.approximate and m.value == pytest.approx(46.53611751595838, rel=1e-9)
    h = Histogram("x", max_detail_bins=2).metric(state)
    assert list(h.value["values"]) == ["v49", "v48"]
    assert h.value["values"]["v49"]["absolute"] == 50
    assert state.to_bytes() == data
