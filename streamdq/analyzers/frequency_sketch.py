"""Format-v1 bounded form of a frequency table: a DataSketches tuple sketch of counts.

Since FrequencyState format v2 the bounded form is a bottom-k sample of key hashes built
in Spark (``frequency_sample``, ``key_hash``). This module keeps what is needed to READ
and use states stored in the v1 form, and the sizing rule both forms share:

* a **tuple sketch** (theta sampling of the distinct keys, lg_k nominal entries) whose
  summary per retained key is its summed row count (int64, ``PyLongsSerDe``); the retained
  keys are a uniform sample of the distinct keys with inclusion probability theta, and
  their counts are exact;
* for histogram groupings (string keys), a **frequent-items sketch**
  (``frequent_strings_sketch``) of the same keys weighted by their counts.

v1 sketches still merge with each other and with exact states (``build`` turns an exact
table into a v1 sketch on the driver, one update per key of a bounded table); they cannot
merge with v2 samples (different key hashing). The v1 sketch was built with one Python
``update`` per distinct key in a ``mapInArrow`` pass: far too slow for 10M distinct ids,
which is why v2 replaced it. Spark's own ``tuple_sketch_agg_integer`` was tried first: its
bytes do not load correctly in the Python package (garbled summaries, different key
hashes).

``canonical_keys``: the hashed identity of a v1 key: the value itself for one string or
integer column, its string cast for other single columns, JSON of the values for several
columns; NULL is a distinct marker. ``keep_in_scope`` filters grouped counts (both forms).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from typing import Any

import datasketches as ds
import pyarrow as pa
import pyarrow.compute as pc

SERDE = ds.PyLongsSerDe()
NULL_KEY = "\x00null"
MIN_LG_K = 5  # the smallest tuple sketch datasketches builds
# Cap of the sketch size (4096 entries: ~1.6% relative standard error on distinct counts).
# Larger tuple sketches cost seconds to deserialize with the Python summary serde.
MAX_LG_K = 12
MAX_LG_ITEMS = 14


# Tuple-sketch policy of the datasketches package: the summary of a key is the sum of
# its counts, on update and on union.
SumCounts = ds.AccumulatorPolicy


def lg_k_for(max_groups: int) -> int:
    """log2 of the sketch's nominal entries for a bound of ``max_groups`` groups (K <= max(max_groups, 32))."""
    return max(MIN_LG_K, min(MAX_LG_K, int(math.floor(math.log2(max(max_groups, 1))))))


def lg_items_for(lg_k: int) -> int:
    """log2 of the frequent-items map size used next to a tuple sketch of ``lg_k``."""
    return max(6, min(MAX_LG_ITEMS, lg_k + 1))


def _column_strings(arr: pa.Array | pa.ChunkedArray) -> list[str | None]:
    if pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type):
        return arr.to_pylist()  # type: ignore[no-any-return]
    if (
        pa.types.is_binary(arr.type)
        or pa.types.is_large_binary(arr.type)
        or pa.types.is_fixed_size_binary(arr.type)
    ):
        # hex, never a UTF-8 cast: that cast fails batch by batch, which would make the
        # same key canonicalize differently in different batches
        return [None if v is None else "0x" + v.hex() for v in arr.to_pylist()]
    try:
        return pc.cast(arr, pa.string()).to_pylist()  # type: ignore[no-any-return]
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return [None if v is None else repr(v) for v in arr.to_pylist()]


def canonical_keys(columns: Sequence[pa.Array | pa.ChunkedArray]) -> list[str | int]:
    """One canonical key per row of the key columns (the hashed identity of a group)."""
    if len(columns) == 1 and pa.types.is_integer(columns[0].type):
        return [NULL_KEY if v is None else v for v in columns[0].to_pylist()]
    per = [_column_strings(c) for c in columns]
    if len(per) == 1:
        return [NULL_KEY if v is None else v for v in per[0]]
    return [
        json.dumps(list(vals), ensure_ascii=False, separators=(",", ":")) for vals in zip(*per, strict=True)
    ]


def build(
    keys: Iterable[str | int], counts: Iterable[int], lg_k: int, *, with_items: bool
) -> tuple[bytes, bytes | None]:
    """Serialized tuple sketch (and frequent-items sketch when asked) of ``keys`` weighted by ``counts``."""
    sketch = ds.update_tuple_sketch(SumCounts(), lg_k)
    items = ds.frequent_strings_sketch(lg_items_for(lg_k)) if with_items else None
    for k, c in zip(keys, counts, strict=True):
        c = int(c)
        if c <= 0:
            continue
        sketch.update(k, c)
        if items is not None:
            items.update(str(k), c)
    sketch.trim()  # at most 2**lg_k entries
    return sketch.compact().serialize(SERDE), None if items is None else items.serialize()


def union(parts: Sequence[tuple[Any, bytes | None]], lg_k: int) -> tuple[bytes, bytes | None]:
    """Union of (tuple sketch as bytes or loaded, items sketch bytes or None), summing counts.

    The result has an items sketch only when every part has one.
    """
    u = ds.tuple_union(SumCounts(), lg_k)
    with_items = all(it is not None for _, it in parts)
    items = ds.frequent_strings_sketch(lg_items_for(lg_k)) if with_items else None
    for sk, it in parts:
        u.update(load_tuple(bytes(sk)) if isinstance(sk, bytes | bytearray) else sk)
        if items is not None and it is not None:
            items.merge(ds.frequent_strings_sketch.deserialize(it))
    return u.get_result().serialize(SERDE), None if items is None else items.serialize()


def load_tuple(blob: bytes) -> ds.compact_tuple_sketch:
    return ds.compact_tuple_sketch.deserialize(blob, SERDE)


def load_items(blob: bytes) -> ds.frequent_strings_sketch:
    return ds.frequent_strings_sketch.deserialize(blob)


def keep_in_scope(table: pa.Table, *, n_keys: int, drop_all_null: bool) -> pa.Table:
    """Rows of a grouped-counts table that are in scope (and not all-NULL when asked)."""
    mask = table["in_scope"]
    if drop_all_null and n_keys:
        any_valid = pc.is_valid(table["k0"])
        for i in range(1, n_keys):
            any_valid = pc.or_(any_valid, pc.is_valid(table[f"k{i}"]))
        mask = pc.and_(mask, any_valid)
    return table.filter(mask)
