"""Golden bytes pin the on-disk format of every exact and sketch state of the scan analyzers.

If one of these fails, the serialized format changed: bump the state's FORMAT_VERSION and
keep reading the old bytes, never silently rewrite stored states.
"""

from __future__ import annotations

import datasketches as ds
import pytest

from streamdq.analyzers import DataTypeState, HllState, KllState, RatioOfSumsState, State, state_from_bytes
from streamdq.analyzers.basic_states import (
    CoMomentsState,
    MaxState,
    MinState,
    MomentsState,
    NumMatches,
    NumMatchesAndCount,
    SumState,
)

GOLDEN = {
    "NumMatches": "53445153000a4e756d4d61746368657300017b226d617463686573223a377d",
    "NumMatchesAndCount": (
        "5344515300124e756d4d617463686573416e64436f756e7400017b22636f756e74223a352c226576616c7561746564"
        "223a342c226d617463686573223a337d"
    ),
    "Sum": "53445153000353756d00017b226e223a332c22746f74616c223a322e357d",
    "Min": "5344515300034d696e00017b2276616c7565223a2d312e357d",
    "Max": "5344515300034d617800017b2276616c7565223a7b225f5f666c6f61745f5f223a22696e66227d7d",
    "Moments": (  # format v2: carries ``order``
        "5344515300074d6f6d656e747300027b226d32223a352e302c226d33223a302e302c226d34223a31302e32352c226d"
        "65616e223a322e352c226e223a342c226f72646572223a347d"
    ),
    "CoMoments": (
        "534451530009436f4d6f6d656e747300017b22636b223a342e302c226e223a332c22785f6d65616e223a322e302c22"
        "785f6d6b223a322e302c22795f6d65616e223a342e302c22795f6d6b223a382e307d"
    ),
    "DataTypeHistogram": (
        "5344515300114461746154797065486973746f6772616d00017b22626f6f6c65616e223a342c226672616374696f6e"
        "616c223a322c22696e74656772616c223a332c22737472696e67223a352c22756e6b6e6f776e223a317d"
    ),
    "RatioOfSums": (
        "53445153000b526174696f4f6653756d7300017b2264656e6f6d696e61746f72223a302e302c226e223a332c226e75"
        "6d657261746f72223a362e307d"
    ),
    "HllSketch": "534451530009486c6c536b6574636800010201070c030805082bf2fb06862ff90d7581660781bc5d067b65e608",
    "KllDoublesSketch": (
        "5344515300104b6c6c446f75626c6573536b65746368000105010f00c80008000500000000000000c8000100c30000"
        "00000000000000f03f00000000000014400000000000001440000000000000104000000000000008400000000000"
        "000040000000000000f03f"
    ),
}


def _expected() -> dict[str, State]:
    hll = ds.hll_sketch(12)
    kll = ds.kll_doubles_sketch(200)
    for v in range(1, 6):
        hll.update(v)
        kll.update(float(v))
    return {
        "NumMatches": NumMatches(7),
        "NumMatchesAndCount": NumMatchesAndCount(3, 5, 4),
        "Sum": SumState(2.5, 3),
        "Min": MinState(-1.5),
        "Max": MaxState(float("inf")),
        "Moments": MomentsState(4, 2.5, 5.0, 0.0, 10.25),
        "CoMoments": CoMomentsState(3, 2.0, 4.0, 4.0, 2.0, 8.0),
        "DataTypeHistogram": DataTypeState(1, 2, 3, 4, 5),
        "RatioOfSums": RatioOfSumsState(6.0, 0.0, 3),
        "HllSketch": HllState.of_sketch(hll),
        "KllDoublesSketch": KllState.of_sketch(kll),
    }


# Moments format v1 (before ``order``: all four moments): must still load, as order 4
MOMENTS_V1 = (
    "5344515300074d6f6d656e747300017b226d32223a352e302c226d33223a302e302c226d34223a31302e32352c226d"
    "65616e223a322e352c226e223a347d"
)
# Moments format v2 of order 2 (what StandardDeviation and Variance store)
MOMENTS_V2_ORDER2 = (
    "5344515300074d6f6d656e747300027b226d32223a352e302c226d33223a302e302c226d34223a302e302c226d65"
    "616e223a322e352c226e223a342c226f72646572223a327d"
)


def test_moments_v1_bytes_load_as_order_4_and_merge_with_order_2():
    old = state_from_bytes(bytes.fromhex(MOMENTS_V1))
    assert old == MomentsState(4, 2.5, 5.0, 0.0, 10.25) and isinstance(old, MomentsState) and old.order == 4
    assert old.to_bytes().hex() == GOLDEN["Moments"]  # re-written as v2
    new = state_from_bytes(bytes.fromhex(MOMENTS_V2_ORDER2))
    assert new == MomentsState(4, 2.5, 5.0, order=2) and new.to_bytes().hex() == MOMENTS_V2_ORDER2
    # a stored v1 state of StandardDeviation merges with the order-2 states written now
    merged = old.merge(new)
    assert isinstance(merged, MomentsState)
    assert (merged.n, merged.mean, merged.m2, merged.order) == (8, 2.5, 10.0, 2)


@pytest.mark.parametrize("tag", sorted(GOLDEN))
def test_golden_bytes_load_to_the_same_state(tag):
    expected = _expected()[tag]
    assert tag == expected.TYPE_TAG
    loaded = state_from_bytes(bytes.fromhex(GOLDEN[tag]))
    assert loaded == expected
    assert loaded.to_bytes().hex() == GOLDEN[tag]


def test_loaded_sketches_still_answer():
    hll = state_from_bytes(bytes.fromhex(GOLDEN["HllSketch"]))
    kll = state_from_bytes(bytes.fromhex(GOLDEN["KllDoublesSketch"]))
    assert isinstance(hll, HllState) and hll.estimate() == 5.0
    assert isinstance(kll, KllState) and kll.quantile(0.5) == 3.0 and kll.n == 5


def test_empty_sketch_states_round_trip():
    for state in (HllState.empty(), KllState.empty()):
        assert state_from_bytes(state.to_bytes()) == state
    # an empty sketch as Spark returns it normalises to the empty state
    assert HllState.from_sketch_bytes(ds.hll_sketch(12).serialize_compact()) == HllState.empty()
    assert KllState.from_sketch_bytes(ds.kll_doubles_sketch(200).serialize()) == KllState.empty()
