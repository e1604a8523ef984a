"""Golden bytes: FrequencyState formats as stored by streamdq.

Every stored format must still read and compute the same metrics, and re-serialize as the
current format (version 3), whose files must read and re-serialize byte for byte:

* version 1: exact table; DataSketches tuple-sketch form (``kind: sketch``, also written
  by version 2 when it re-serialized a v1 sketch);
* version 2: exact table; bottom-k sample of key hashes with a top-keys table (its
  payloads are unchanged in version 3: only the header's version differs);
* version 3: adds ``hash: "v1"`` to samples converted from v1 tuple sketches on read
  (``frequency.migration.from_v1_sketch``).

A change that cannot read these files (or reads them differently) breaks stored states in
the Delta state store and must bump FORMAT_VERSION and keep a reader for the old versions.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from streamdq.analyzers import CountDistinct, FrequencyState, Histogram, MutualInformation, Uniqueness
from streamdq.analyzers.frequency import ExactFrequencies, SampledFrequencies
from streamdq.analyzers.frequency.sample import V1
from streamdq.analyzers.register import state_from_bytes

GOLDEN = Path(__file__).parent / "golden"
HEADER = 17  # magic, tag length, "frequency", version: the payload starts here


def _read(name: str) -> bytes:
    return (GOLDEN / name).read_bytes()


def test_exact_v1_reads_back():
    state = state_from_bytes(_read("frequency_exact_v1.bin"))
    assert isinstance(state, ExactFrequencies) and not state.is_sketch
    assert (state.n, state.total, state.max_groups) == (6, 7, 100)
    assert state.table is not None
    assert state.table.to_pydict() == {"k0": ["a", "b", None], "k1": [1, None, 3], "count": [3, 1, 2]}
    assert Uniqueness(("x", "y")).metric(state).value == 1 / 6
    assert MutualInformation(("x", "y")).metric(state).ok
    assert state.to_bytes() == _read("frequency_exact_v3.bin")


def test_sketch_v1_is_converted_to_a_v1_hashed_sample_on_read():
    data = _read("frequency_sketch_v1.bin")
    state = state_from_bytes(data)
    assert isinstance(state, SampledFrequencies) and state.sample.scheme == V1
    assert (state.n, state.total, state.max_groups) == (1275, 1300, 32)
    m = CountDistinct(("x",)).metric(state)
    assert m.approximate and m.value == pytest.approx(46.53611751595838, rel=1e-9)  # as v1 estimated
    assert abs(m.value - 50) <= m.error_bound
    h = Histogram("x", max_detail_bins=2).metric(state)
    assert list(h.value["values"]) == ["v49", "v48"]
    # the frequent-items sketch's guaranteed bounds: 24 <= count of v49 (50) <= 50
    assert h.value["values"]["v49"]["absolute"] == 24 and 24 + h.error_bound * 1300 >= 50
    assert data[15:17] == b"\x00\x01" and state.to_bytes() == _read("frequency_sample_v1hash_v3.bin")
    back = state_from_bytes(state.to_bytes())
    assert back == state and back.sample.scheme == V1
    assert back.merge(back).n == 2 * 1275  # v1 samples still merge with each other


def test_v1_sketch_does_not_silently_merge_with_a_v2_sample():
    old = state_from_bytes(_read("frequency_sketch_v1.bin"))
    new = state_from_bytes(_read("frequency_sample_v2.bin"))
    for a, b in ((old, new), (new, old)):
        with pytest.raises(ValueError, match="v1 tuple-sketch"):
            a.merge(b)


@pytest.mark.parametrize("form", ["exact", "sample"])
def test_v2_reads_back_and_keeps_its_payload_in_v3(form):
    v2, v3 = _read(f"frequency_{form}_v2.bin"), _read(f"frequency_{form}_v3.bin")
    state = state_from_bytes(v2)
    assert state == state_from_bytes(v3)
    assert v2[HEADER:] == v3[HEADER:] and v2[15:17] == b"\x00\x02" and v3[15:17] == b"\x00\x03"
    assert state.to_bytes() == v3


def test_exact_v2_reads_back():
    state = state_from_bytes(_read("frequency_exact_v2.bin"))
    assert isinstance(state, ExactFrequencies) and not state.is_sketch
    assert state.table is not None
    assert state.table.to_pydict() == {"k0": ["a", "b", None], "k1": [1, None, 3], "count": [3, 1, 2]}


def test_sample_v2_reads_back():
    # written by: FrequencyState.from_table(pa.table({"k0": ["v0".."v49"], "count": [1..50]}),
    #             n=1275, total=1300, max_groups=32)
    state = state_from_bytes(_read("frequency_sample_v2.bin"))
    assert isinstance(state, SampledFrequencies) and state.is_sketch and state.sample is not None
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


@pytest.mark.parametrize(
    "name", ["frequency_exact_v3.bin", "frequency_sample_v3.bin", "frequency_sample_v1hash_v3.bin"]
)
def test_v3_reads_back_byte_for_byte(name):
    data = _read(name)
    assert state_from_bytes(data).to_bytes() == data


def _exact_part() -> FrequencyState:
    # 15 rows: 10 more of the v1 sketch's heaviest key "v49", and 5 of a key it has never seen
    table = pa.table({"k0": ["v49", "new"], "count": pa.array([10, 5], pa.int64())})
    return FrequencyState.from_table(table, n=15, total=15, max_groups=100)


def test_v1_sketch_merges_with_a_non_empty_exact_state():
    """A window stored as a v1 tuple sketch goes on merging with the exact states written now
    (the exact keys hashed as v1 hashed them, at the smaller bound), in either order."""
    old = state_from_bytes(_read("frequency_sketch_v1.bin"))
    exact = _exact_part()
    merged = old.merge(exact)
    assert merged == exact.merge(old) and merged.to_bytes() == exact.merge(old).to_bytes()
    assert isinstance(merged, SampledFrequencies) and merged.sample.scheme == V1
    assert (merged.n, merged.total, merged.max_groups) == (1290, 1315, 32)
    h = Histogram("x", max_detail_bins=2).metric(merged)
    assert h.approximate and list(h.value["values"]) == ["v49", "v48"]
    assert h.value["values"]["v49"] == {"absolute": 24 + 10, "ratio": 34 / 1315}  # lower bounds add
    m = CountDistinct(("x",)).metric(merged)
    assert m.approximate and abs(m.value - 51) <= m.error_bound
    # the same merge as the format-2 code stored it (a v1 tuple sketch) reads to the same state
    assert state_from_bytes(_read("frequency_sketch_v1_merged_exact.bin")) == merged


def test_weighted_exact_v3_reads_back():
    # written by: FrequencyState.from_table(pa.table({"k0": ["a", "b", "NullValue"], "count": [2, 1, 1],
    #             "sum": [15, None, 7]}), n=4, total=6, max_groups=100, sums=Sums(22, 42))
    data = _read("frequency_weighted_exact_v3.bin")
    state = state_from_bytes(data)
    assert isinstance(state, ExactFrequencies) and state.sums is not None
    assert (state.sums.kept, state.sums.total) == (22, 42)
    assert state.table is not None and state.table.to_pydict() == {
        "k0": ["NullValue", "a", "b"],
        "count": [1, 2, 1],
        "sum": [7, 15, None],
    }
    h = Histogram("x", sum_column="y").metric(state)
    assert h.value["values"] == {
        "a": {"absolute": 15, "ratio": 15 / 42},
        "NullValue": {"absolute": 7, "ratio": 7 / 42},
        "b": {"absolute": 0, "ratio": 0.0},
    }
    assert state.to_bytes() == data


def test_weighted_sample_v3_reads_back():
    # written by: FrequencyState.from_table(pa.table({"k0": ["v0".."v49"], "count": [1] * 50,
    #             "sum": [-10..39]}), n=50, total=50, max_groups=32, sums=Sums(725, 725))
    data = _read("frequency_weighted_sample_v3.bin")
    state = state_from_bytes(data)
    assert isinstance(state, SampledFrequencies) and state.sums is not None and state.top is not None
    assert (state.top.threshold, state.top.floor) == (7, -10)  # unlisted bins: sums in [-10, 7]
    h = Histogram("x", sum_column="y", max_detail_bins=2).metric(state)
    assert h.approximate and h.value["values"] == {
        "v49": {"absolute": 39, "ratio": 39 / 725},
        "v48": {"absolute": 38, "ratio": 38 / 725},
    }
    assert h.value["tail_count"] == 725 - 39 - 38
    assert state.to_bytes() == data
