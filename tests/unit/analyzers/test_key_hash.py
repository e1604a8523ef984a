"""The driver's key hash equals Spark's for every supported key type (samples must merge)."""

from __future__ import annotations

import datetime
import decimal

import pyarrow as pa
import pytest
from pyspark.sql import functions as F

from streamdq.analyzers.key_hash import key_hash, key_hashes, unsigned

ROWS = [
    (1, 2**40, "héllo", 1.5, -0.0, True, datetime.date(2020, 1, 2), datetime.datetime(2020, 1, 2, 3, 4, 5),
     decimal.Decimal("12.34"), 3, 7, bytearray(b"ab"), "x" * 50),
    (None, None, None, float("nan"), None, None, None, None, None, None, None, None, ""),
    (-7, -1, "", 0.0, 2.5, False, datetime.date(1960, 1, 1), datetime.datetime(1960, 1, 1),
     decimal.Decimal("-1.00"), -3, -128, bytearray(b""), "y" * 33),
    (0, 0, "0", -0.0, float("nan"), None, None, None, decimal.Decimal("0"), 0, 0, None, None),
]  # fmt: skip
SCHEMA = (
    "a int, b long, c string, d double, e float, f boolean, g date, t timestamp, "
    "m decimal(10,2), s short, y byte, z binary, w string"
)


@pytest.fixture(scope="module")
def typed(spark):
    return spark.createDataFrame(ROWS, SCHEMA)


def test_each_type_hashes_as_in_spark(typed):
    for c in typed.columns:
        out = typed.select(key_hash([F.col(c)]).alias("h"), c).toArrow()
        assert key_hashes([out[c]]).tolist() == out["h"].to_pylist(), c


def test_multi_column_keys_hash_as_in_spark_and_nulls_are_positional(spark, typed):
    cols = typed.columns
    out = typed.select(key_hash([F.col(c) for c in cols]).alias("h"), *cols).toArrow()
    assert key_hashes([out[c] for c in cols]).tolist() == out["h"].to_pylist()
    swapped = spark.createDataFrame([("a", None), (None, "a")], "p string, q string")
    hs = swapped.select(key_hash([F.col("p"), F.col("q")]).alias("h")).toArrow()["h"].to_pylist()
    assert hs[0] != hs[1]


def test_nested_keys_hash_as_in_spark(spark):
    nested = spark.createDataFrame(
        [([1, None, 3], ("a", None)), (None, None), ([], ("", 2))],
        "arr array<int>, st struct<p: string, q: int>",
    )
    for c in nested.columns:
        out = nested.select(key_hash([F.col(c)]).alias("h"), c).toArrow()
        assert key_hashes([out[c]]).tolist() == out["h"].to_pylist(), c


def test_unsupported_type_is_a_clear_error():
    with pytest.raises(ValueError, match="cannot hash group keys of type decimal128"):
        key_hashes([pa.array([1], pa.decimal128(30, 2))])


def test_unsigned_order_matches_signed_order():
    import numpy as np

    signed = np.array([-(2**63), -1, 0, 2**63 - 1], dtype=np.int64)
    u = unsigned(signed)
    assert list(np.argsort(u)) == [0, 1, 2, 3] and u[0] == 0 and u[-1] == 2**64 - 1


def test_vectorized_fixed_width_hashes_equal_spark_on_many_values(spark):
    """The numpy XXH64 of 4- and 8-byte keys (the hot path of a uniqueness state turning into
    a sample) equals Spark's on extremes, negatives, NULLs, NaN and -0.0."""
    import random

    rnd = random.Random(7)
    longs = [0, -1, 1, 2**63 - 1, -(2**63), None] + [rnd.randrange(-(2**63), 2**63) for _ in range(500)]
    ints = [0, -1, 2**31 - 1, -(2**31), None] + [rnd.randrange(-(2**31), 2**31) for _ in range(501)]
    doubles = [0.0, -0.0, float("nan"), float("inf"), None, 1e-300] + [
        rnd.uniform(-1e9, 1e9) for _ in range(500)
    ]
    df = spark.createDataFrame(list(zip(longs, ints, doubles, strict=True)), "l long, i int, d double")
    out = df.select(
        key_hash([F.col("l")]).alias("hl"),
        key_hash([F.col("i")]).alias("hi"),
        key_hash([F.col("d")]).alias("hd"),
        key_hash([F.col("l"), F.col("i"), F.col("d")]).alias("h3"),
        "l",
        "i",
        "d",
    ).toArrow()
    assert key_hashes([out["l"]]).tolist() == out["hl"].to_pylist()
    assert key_hashes([out["i"]]).tolist() == out["hi"].to_pylist()
    assert key_hashes([out["d"]]).tolist() == out["hd"].to_pylist()
    assert key_hashes([out["l"], out["i"], out["d"]]).tolist() == out["h3"].to_pylist()
