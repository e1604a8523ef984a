"""Golden bytes: FrequencyState formats as stored by streamdq.

Version 1 (exact table; DataSketches tuple-sketch form) must still read, compute the same
metrics, and re-serialize as version 2. Version 2 (exact table; bottom-k sample of key
hashes with a top-keys table) must read and re-serialize byte for byte. A change that
cannot read these files (or reads them differently) breaks stored states in the Delta
state store and must bump FORMAT_VERSION and keep a reader for the old versions.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
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
    assert state.to_bytes() == (GOLDEN / "frequency_exact_v2.bin").read_bytes()


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
    back = state_from_bytes(state.to_bytes())  # written as v2, still the tuple-sketch form
    assert back == state and data[15:17] == b"\x00\x01" and state.to_bytes()[15:17] == b"\x00\x02"
    assert back.merge(back).n == 2 * 1275  # v1 sketches still merge with each other


def test_v1_sketch_does_not_silently_merge_with_a_v2_sample():
    old = state_from_bytes((GOLDEN / "frequency_sketch_v1.bin").read_bytes())
    new = state_from_bytes((GOLDEN / "frequency_sample_v2.bin").read_bytes())
    with pytest.raises(ValueError, match="v1 tuple-sketch"):
        old.merge(new)


def test_exact_v2_reads_back():
    data = (GOLDEN / "frequency_exact_v2.bin").read_bytes()
    state = state_from_bytes(data)
    assert isinstance(state, FrequencyState) and not state.is_sketch
    assert state.table is not None
    assert state.table.to_pydict() == {"k0": ["a", "b", None], "k1": [1, None, 3], "count": [3, 1, 2]}
    assert state.to_bytes() == data


def test_sample_v2_reads_back():
    # written by: FrequencyState.from_table(pa.table({"k0": ["v0".."v49"], "count": [1..50]}),
    #             n=1275, total=1300, max_groups=32)
    data = (GOLDEN / "frequency_sample_v2.bin").read_bytes()
    state = state_from_bytes(data)
    assert isinstance(state, FrequencyState) and state.is_sketch and state.sample is not None
    assert (state.n, state.total, state.max_groups) == (1275, 1300, 32)
    assert len(state.counts()) == 32 and state.theta == pytest.approx(0.6827514411604297, rel=1e-12)
    m = CountDistinct(("x",)).metric(state)
    assert m.approximate and m.value == pytest.approx(46.86917972023846, rel=1e-9)
    assert abs(m.value - 50) <= m.error_bound
    h = Histogram("x", max_detail_bins=2).metric(state)
    assert h.value["values"] == {
        "v49": {"absolute": 50, "ratio": 50 / 1300},
        "v48": {"absolute": 49, "ratio": 49 / 1300},
    }
    assert state.to_bytes() == data


def _exact_part() -> FrequencyState:
    # 15 rows: 10 more of the v1 sketch's heaviest key "v49", and 5 of a key it has never seen
    table = pa.table({"k0": ["v49", "new"], "count": pa.array([10, 5], pa.int64())})
    return FrequencyState.from_table(table, n=15, total=15, max_groups=100)


def test_v1_sketch_merges_with_a_non_empty_exact_state():
    """A window stored as a v1 tuple sketch goes on merging with the exact states written now
    (the exact side becomes a v1 sketch at the smaller bound), in either order."""
    old = state_from_bytes((GOLDEN / "frequency_sketch_v1.bin").read_bytes())
    exact = _exact_part()
    merged = old.merge(exact)
    swapped = exact.merge(old)  # the same summaries (the items sketch's bytes follow merge order)
    assert merged.sketch == swapped.sketch and merged.items is not None and swapped.items is not None
    for analyzer in (Histogram("x", max_detail_bins=10), CountDistinct(("x",))):
        assert analyzer.metric(merged) == analyzer.metric(swapped)
    assert merged.is_sketch and (merged.n, merged.total, merged.max_groups) == (1290, 1315, 32)
    h = Histogram("x", max_detail_bins=2).metric(merged)
    assert h.approximate and list(h.value["values"]) == ["v49", "v48"]
    assert h.value["values"]["v49"] == {"absolute": 60, "ratio": 60 / 1315}
    m = CountDistinct(("x",)).metric(merged)
    assert m.approximate and abs(m.value - 51) <= m.error_bound
    # the merged bytes are pinned: reading them gives the same state, and they re-serialize as is
    golden = (GOLDEN / "frequency_sketch_v1_merged_exact.bin").read_bytes()
    assert merged.to_bytes() == golden
    assert state_from_bytes(golden) == merged
