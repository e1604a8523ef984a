"""FrequencyState serialization, spec keys, analyzer specs and merge edge cases (driver only)."""

from __future__ import annotations

import pickle

import pyarrow as pa
import pytest

from streamdq.analyzers import (
    CountDistinct,
    Distinctness,
    DuplicateRowCount,
    Entropy,
    FrequencySpec,
    FrequencyState,
    Histogram,
    MutualInformation,
    Uniqueness,
    UniqueValueRatio,
)
from streamdq.analyzers.frequency.grouped import state_from_grouped
from streamdq.analyzers.register import analyzer_from_spec, state_from_bytes
from streamdq.analyzers.state import StateFormatError


def exact(keys: list, counts: list[int], key_type: pa.DataType = pa.int64(), max_groups: int | None = None):
    table = pa.table({"k0": pa.array(keys, key_type), "count": pa.array(counts, pa.int64())})
    return FrequencyState.from_table(table, n=sum(counts), total=sum(counts), max_groups=max_groups)


def test_exact_state_round_trips_and_is_not_pickled():
    s = exact([1, 2, None], [3, 1, 2])
    data = s.to_bytes()
    assert state_from_bytes(data) == s
    assert b"ARROW" in data or b"\xff\xff\xff\xff" in data  # Arrow IPC stream inside
    with pytest.raises(pickle.UnpicklingError):
        pickle.loads(data)


def test_empty_state_round_trips():
    assert state_from_bytes(FrequencyState.empty().to_bytes()) == FrequencyState.empty()
    assert FrequencyState.empty().is_empty


def test_corrupt_payload_is_a_clear_error():
    data = exact([1], [1]).to_bytes()
    with pytest.raises(StateFormatError, match="frequency"):
        state_from_bytes(data[:-7] + b"garbage")


def test_state_carries_unfiltered_total_and_n():
    grouped = pa.table(
        {
            "in_scope": pa.array([True, True, False, True], pa.bool_()),
            "k0": pa.array(["a", "b", None, None], pa.string()),
            "count": pa.array([2, 1, 5, 4], pa.int64()),
        }
    )
    s = state_from_grouped(grouped, n_keys=1, histogram=False, max_groups=10)
    assert (s.n, s.total) == (3, 12)  # out-of-scope and all-NULL groups dropped from n, kept in total
    assert s.table is not None and s.table.num_rows == 2


def test_merge_unifies_widened_key_types():
    a = exact([1, 2], [1, 1], pa.int32())
    b = exact([2, 3], [1, 1], pa.int64())
    merged = a.merge(b)
    assert merged.table is not None and merged.table["count"].to_pylist() == [1, 2, 1]
    assert CountDistinct(("x",)).metric(merged).value == 3.0


def test_merge_of_incompatible_key_types_is_a_clear_error():
    a = exact([1], [1], pa.int64())
    b = exact([[1, 2]], [1], pa.list_(pa.int64()))
    with pytest.raises((ValueError, pa.ArrowException)):
        a.merge(b)


def test_exact_over_bound_becomes_sketch_with_smallest_bound():
    a = exact(list(range(40)), [1] * 40, max_groups=None)
    b = exact(list(range(40, 80)), [2] * 40, max_groups=64)
    merged = a.merge(b)
    assert merged.is_sketch and merged.max_groups == 64 and merged.n == 120
    m = Uniqueness(("x",)).metric(merged)
    assert m.approximate and abs(m.value - 40 / 120) <= m.error_bound


def test_spec_keys_are_stable_and_shared():
    spec = FrequencySpec(("a", "b"), "x > 1")
    assert spec.key() == '{"columns":["a","b"],"histogram":false,"where":"x > 1"}'
    shared = {
        a.state_key() for a in (Uniqueness(("a",)), Distinctness(("a",)), Entropy("a"), CountDistinct(("a",)))
    }
    assert len(shared) == 1
    assert Uniqueness(("a",), where="x > 1").state_key() != Uniqueness(("a",)).state_key()
    assert DuplicateRowCount().frequency_spec().columns == ()


@pytest.mark.parametrize(
    "analyzer",
    [
        Uniqueness(("a", "b"), where="a > 0"),
        Distinctness(("a",)),
        UniqueValueRatio(("a",)),
        CountDistinct(("a",)),
        Entropy("a"),
        MutualInformation(("a", "b")),
        Histogram("a", max_detail_bins=3, compute_frequencies_as_ratio=False),
        DuplicateRowCount(),
    ],
)
def test_analyzer_specs_round_trip(analyzer):
    assert analyzer_from_spec(analyzer.to_spec()) == analyzer
    assert analyzer.metric(analyzer.empty_state()).name == analyzer.NAME


def test_preconditions_reject_bad_parameters():
    from pyspark.sql.types import IntegerType, StructField, StructType

    schema = StructType([StructField("a", IntegerType())])
    assert Uniqueness(()).preconditions(schema) is not None
    assert MutualInformation(("a",)).preconditions(schema) is not None  # type: ignore[arg-type]
    assert Histogram("a", max_detail_bins=0).preconditions(schema) is not None
    assert Histogram("a").preconditions(schema) is None
    assert Entropy("zz").preconditions(schema) is not None


def test_top_keys_only_for_string_keys():
    ints = exact(list(range(100)), [1] * 100, max_groups=32)
    strings = exact([f"k{i}" for i in range(100)], [2] * 100, pa.string(), max_groups=32)
    assert ints.is_sketch and ints.top is None
    assert strings.is_sketch and strings.top is not None
    top = Histogram("x", max_detail_bins=3).metric(strings)
    # the top of an exact table is exact: ties broken by key, no count error
    assert top.approximate and top.error_bound == 0.0
    assert list(top.value["values"]) == ["k0", "k1", "k10"]
    for bin_ in top.value["values"].values():
        assert abs(bin_["absolute"] - 2) <= top.error_bound * 200
    assert state_from_bytes(ints.to_bytes()) == ints
    assert state_from_bytes(strings.to_bytes()) == strings
    failed = Histogram("x").metric(ints)  # a numeric grouping has no top-bin sketch
    assert failed.failure is not None and "top-keys" in failed.failure


def test_binary_keys_canonicalize_the_same_in_every_batch():
    from streamdq.analyzers.frequency.migration import canonical_keys

    valid_utf8 = pa.array([b"ab", None], pa.binary())
    mixed = pa.array([b"ab", b"\xff"], pa.binary())
    assert canonical_keys([valid_utf8])[0] == canonical_keys([mixed])[0] == "0x6162"
