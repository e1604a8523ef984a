"""The 64-bit hash of a group key, computed identically in Spark and on the driver.

The bounded frequency state keeps the groups with the smallest key hashes (a bottom-k
sample). The hash is computed in Spark by ``key_hash(columns)`` (the JVM's
``xxhash64``, seed 42, over the key columns followed by a NULL mask), and on the driver
by ``key_hashes(arrays)`` over the same values as Arrow arrays (driver-side, for exact
tables that must turn into samples; bounded input). Both give the same signed 64-bit
value for the same key, so samples built in Spark and on the driver merge.

Spark's ``xxhash64`` chains the columns: the hash of column i is the seed of column
i + 1; a NULL leaves the running hash unchanged, hence the trailing NULL mask (bit
``i % 63`` set when column i is NULL) that keeps ``(a, NULL)`` and ``(NULL, a)`` apart.
Per type (as Spark does): booleans, bytes, shorts, ints and dates hash as a 4-byte int;
longs and timestamps (microseconds) as an 8-byte long; floats and doubles by their IEEE
bits with -0.0 as 0.0 and one NaN; strings by their UTF-8 bytes, binary as is; decimals
of precision <= 18 by their unscaled long; arrays and structs chain their non-NULL
elements (fields) (Spark cannot group by maps). Other key types (wide decimals, intervals) raise
``ValueError`` on the driver: their groupings still run in Spark, but an exact state of
them cannot be turned into a sample.

The order of the sample is the UNSIGNED order of the hash: ``unsigned = signed + 2**63``
(so ordering by the signed value in Spark is the same order).
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable, Sequence
from decimal import Decimal
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import xxhash
from pyspark.sql import Column
from pyspark.sql import functions as F

from streamdq.errors import InvalidArgument

SEED = 42
MASK_BITS = 63
_U64 = (1 << 64) - 1
_INT = struct.Struct("<i")
_LONG = struct.Struct("<q")
_FLOAT = struct.Struct("<f")
_DOUBLE = struct.Struct("<d")


def key_hash(columns: Sequence[Column]) -> Column:
    """Spark expression: the signed 64-bit hash of the key ``columns`` (see module doc)."""
    mask: Column = F.lit(0).cast("long")
    for i, c in enumerate(columns):
        mask = mask + F.when(c.isNull(), F.lit(1 << (i % MASK_BITS))).otherwise(F.lit(0)).cast("long")
    return F.xxhash64(*columns, mask)


def _h(data: bytes, seed: int) -> int:
    return xxhash.xxh64_intdigest(data, seed=seed)


def _hasher(typ: pa.DataType) -> Callable[[Any, int], int]:
    """Function (python value, unsigned seed) -> unsigned hash, Spark's rule for ``typ``."""
    if pa.types.is_boolean(typ):
        return lambda v, s: _h(_INT.pack(1 if v else 0), s)
    if pa.types.is_int8(typ) or pa.types.is_int16(typ) or pa.types.is_int32(typ):
        return lambda v, s: _h(_INT.pack(v), s)
    if pa.types.is_int64(typ):
        return lambda v, s: _h(_LONG.pack(v), s)
    if pa.types.is_date32(typ):
        return lambda v, s: _h(_INT.pack(v), s)
    if pa.types.is_timestamp(typ):
        return lambda v, s: _h(_LONG.pack(v), s)
    if pa.types.is_float32(typ):

        def h_float(v: float, s: int) -> int:
            if math.isnan(v):
                return _h(_INT.pack(0x7FC00000), s)
            return _h(_FLOAT.pack(0.0 if v == 0.0 else v), s)

        return h_float
    if pa.types.is_float64(typ):

        def h_double(v: float, s: int) -> int:
            if math.isnan(v):
                return _h(_LONG.pack(0x7FF8000000000000), s)
            return _h(_DOUBLE.pack(0.0 if v == 0.0 else v), s)

        return h_double
    if pa.types.is_string(typ) or pa.types.is_large_string(typ):
        return lambda v, s: _h(v.encode("utf-8"), s)
    if pa.types.is_binary(typ) or pa.types.is_large_binary(typ) or pa.types.is_fixed_size_binary(typ):
        return lambda v, s: _h(bytes(v), s)
    if pa.types.is_decimal(typ) and typ.precision <= 18:
        scale = typ.scale

        def h_decimal(v: Decimal, s: int) -> int:
            return _h(_LONG.pack(int(v.scaleb(scale))), s)

        return h_decimal
    if pa.types.is_list(typ) or pa.types.is_large_list(typ) or pa.types.is_fixed_size_list(typ):
        elem = _hasher(typ.value_type)

        def h_list(v: list[Any], s: int) -> int:
            for e in v:
                if e is not None:
                    s = elem(e, s)
            return s

        return h_list
    if pa.types.is_struct(typ):
        fields = [(typ.field(i).name, _hasher(typ.field(i).type)) for i in range(typ.num_fields)]

        def h_struct(v: dict[str, Any], s: int) -> int:
            for name, fn in fields:
                if v.get(name) is not None:
                    s = fn(v[name], s)
            return s

        return h_struct
    raise ValueError(f"cannot hash group keys of type {typ} on the driver (unsupported key type)")


def _raw_values(arr: pa.Array | pa.ChunkedArray) -> list[Any]:
    """Values as Spark hashes them: integers for dates and timestamps, else Python values."""
    typ = arr.type
    if pa.types.is_date32(typ):
        return arr.cast(pa.int32()).to_pylist()  # type: ignore[no-any-return]
    if pa.types.is_timestamp(typ):
        if typ.unit != "us":
            arr = arr.cast(pa.timestamp("us", typ.tz))
        return arr.cast(pa.int64()).to_pylist()  # type: ignore[no-any-return]
    return arr.to_pylist()  # type: ignore[no-any-return]


def _signed(v: int) -> int:
    """Wrap an integer to a signed 64-bit value (Spark's long arithmetic)."""
    return ((v + (1 << 63)) & _U64) - (1 << 63)


# XXH64's primes (the JVM's XXH64 and the xxhash package use the same)
_P1 = np.uint64(0x9E3779B185EBCA87)
_P2 = np.uint64(0xC2B2AE3D27D4EB4F)
_P3 = np.uint64(0x165667B19E3779F9)
_P4 = np.uint64(0x85EBCA77C2B2AE63)
_P5 = np.uint64(0x27D4EB2F165667C5)


def _rotl(x: np.ndarray, r: int) -> np.ndarray:
    return (x << np.uint64(r)) | (x >> np.uint64(64 - r))


def _avalanche(h: np.ndarray) -> np.ndarray:
    h = h ^ (h >> np.uint64(33))
    h = h * _P2
    h = h ^ (h >> np.uint64(29))
    h = h * _P3
    return h ^ (h >> np.uint64(32))


def _xxh64_int(values: np.ndarray, seeds: np.ndarray) -> np.ndarray:
    """XXH64 of 4-byte inputs (uint32 bits) with per-row seeds, vectorized (Spark's hashInt)."""
    with np.errstate(over="ignore"):
        h = seeds + _P5 + np.uint64(4)
        h = h ^ (values.astype(np.uint64) * _P1)
        h = _rotl(h, 23) * _P2 + _P3
        return _avalanche(h)


def _xxh64_long(values: np.ndarray, seeds: np.ndarray) -> np.ndarray:
    """XXH64 of 8-byte inputs (uint64 bits) with per-row seeds, vectorized (Spark's hashLong)."""
    with np.errstate(over="ignore"):
        h = seeds + _P5 + np.uint64(8)
        k = _rotl(values * _P2, 31) * _P1
        h = h ^ k
        h = _rotl(h, 27) * _P1 + _P4
        return _avalanche(h)


def _vector_bits(arr: pa.Array | pa.ChunkedArray) -> tuple[np.ndarray, int] | None:
    """(the bits Spark hashes as uint32/uint64, width 4 or 8) of a fixed-width column, with
    NULL slots zero-filled; None for types hashed value by value (strings, nested...)."""
    typ = arr.type
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if pa.types.is_boolean(typ):
        return np.asarray(arr.fill_null(False).to_numpy(zero_copy_only=False), dtype=np.uint32), 4
    if pa.types.is_int8(typ) or pa.types.is_int16(typ) or pa.types.is_int32(typ) or pa.types.is_date32(typ):
        ints = np.asarray(arr.cast(pa.int32()).fill_null(0).to_numpy(zero_copy_only=False), dtype=np.int32)
        return ints.view(np.uint32), 4
    if pa.types.is_int64(typ) or pa.types.is_timestamp(typ):
        if pa.types.is_timestamp(typ) and typ.unit != "us":
            arr = arr.cast(pa.timestamp("us", typ.tz))
        longs = np.asarray(arr.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False), dtype=np.int64)
        return longs.view(np.uint64), 8
    if pa.types.is_float64(typ):
        x = np.asarray(arr.fill_null(0.0).to_numpy(zero_copy_only=False), dtype=np.float64)
        x = np.where(x == 0.0, 0.0, x)  # -0.0 hashes as 0.0
        bits = x.view(np.uint64).copy()
        bits[np.isnan(x)] = np.uint64(0x7FF8000000000000)  # one NaN
        return bits, 8
    if pa.types.is_float32(typ):
        f = np.asarray(arr.fill_null(0.0).to_numpy(zero_copy_only=False), dtype=np.float32)
        f = np.where(f == 0.0, np.float32(0.0), f).astype(np.float32)
        bits32 = f.view(np.uint32).copy()
        bits32[np.isnan(f)] = np.uint32(0x7FC00000)
        return bits32, 4
    return None


def key_hashes(columns: Sequence[pa.Array | pa.ChunkedArray]) -> np.ndarray:
    """Signed int64 hashes of the rows of the key ``columns``, equal to ``key_hash`` in Spark.

    Driver-side. Fixed-width columns (booleans, integers, dates, timestamps, floats) and the
    NULL mask hash vectorized with numpy (XXH64 of a 4- or 8-byte input has a closed form);
    other types one hash call per value (use on bounded tables only).
    """
    if not columns:
        raise InvalidArgument("a group key has at least one column")
    rows = len(columns[0])
    seeds = np.full(rows, SEED, dtype=np.uint64)
    masks = np.zeros(rows, dtype=np.int64)
    for i, arr in enumerate(columns):
        bit = 1 << (i % MASK_BITS)
        valid = np.asarray(pc.is_valid(arr).to_numpy(zero_copy_only=False), dtype=bool)
        masks[~valid] += np.int64(bit)
        vector = _vector_bits(arr)
        if vector is not None:
            bits, width = vector
            hashed = _xxh64_int(bits, seeds) if width == 4 else _xxh64_long(bits, seeds)
            seeds = np.where(valid, hashed, seeds)
            continue
        fn = _hasher(arr.type)
        current = seeds.tolist()
        for r, v in enumerate(_raw_values(arr)):
            if v is not None:
                current[r] = fn(v, current[r])
        seeds = np.asarray(current, dtype=np.uint64)
    return _xxh64_long(masks.view(np.uint64), seeds).view(np.int64)


def unsigned(hashes: np.ndarray) -> np.ndarray:
    """The sample order of signed hashes: ``signed + 2**63`` as uint64."""
    return (hashes.view(np.uint64) ^ np.uint64(1 << 63)).astype(np.uint64)
