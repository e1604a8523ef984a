"""Golden bytes pin the on-disk format of the built-in aggregations (the Delta ``states`` table
holds them): a change of payload must bump FORMAT_VERSION and keep reading these."""

from __future__ import annotations

import pyarrow as pa
import pytest

from streamdq.aggregations import registry

KLL = "05010f00c80008000300000000000000c8000100c5000000000000000000f03f00000000000008400000000000000040000000000000f03f0000000000000840"
MOMENTS = (
    "7b226d32223a342e3636363636363636363636363636372c226d33223a302e302c226d34223a302e302c226d65616e22"
    "3a322e333333333333333333333333333333352c226e223a332c226f72646572223a327d"
)
GOLDEN = {
    "discreteValuesHistogram": (
        ["200", "404", "200"],
        "53445153001b6167672e446973637265746556616c756573486973746f6772616d00017b22636f756e7473223a7b"
        "22323030223a322c22343034223a317d7d",
    ),
    "uniqueValues": (
        ["b", "a", "b"],
        "5344515300106167672e556e6971756556616c75657300017b2276616c756573223a5b2261222c2262225d7d",
    ),
    "average": ([1.0, 2.0, 4.0], "53445153000b6167672e417665726167650001" + MOMENTS),
    "standardDeviation": (
        [1.0, 2.0, 4.0],
        "5344515300156167672e5374616e64617264446576696174696f6e0001" + MOMENTS,
    ),
    "median": ([3.0, 1.0, 2.0], "53445153000a6167672e4d656469616e0001" + KLL),
    "numericHistogram": ([3.0, 1.0, 2.0], "5344515300146167672e4e756d65726963486973746f6772616d0001" + KLL),
}


def test_every_builtin_has_golden_bytes() -> None:
    from streamdq.aggregations.builtins import BUILTINS

    assert set(GOLDEN) == {cls.metric_name() for cls in BUILTINS}


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_golden_bytes(name: str) -> None:
    values, golden = GOLDEN[name]
    cls = registry().resolve(name)
    state = cls.from_arrow(pa.array(values), {})
    assert state.to_bytes().hex() == golden
    loaded = cls.from_bytes(bytes.fromhex(golden))
    assert loaded.value({}) == state.value({})
