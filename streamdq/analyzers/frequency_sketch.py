"""Bounded sketch form of a frequency table: a DataSketches tuple sketch of counts.

When a grouping has more distinct groups than a ``FrequencyState`` may hold exactly, the
table is replaced by two Apache DataSketches sketches, built and merged with the
``datasketches`` Python package:

* a **tuple sketch** (theta sampling of the distinct keys, lg_k nominal entries) whose
  summary per retained key is its summed row count (int64, ``PyLongsSerDe``). A key is
  retained iff its hash is below theta, so the retained keys are a uniform sample of the
  distinct keys with inclusion probability theta, and the count of a retained key is
  EXACT (every partial sketch that saw the key kept it, since theta only decreases and
  the union sums the summaries).
* for histogram groupings only (string keys), a **frequent-items sketch**
  (``frequent_strings_sketch``) over the same keys weighted by their counts: estimates of
  the heaviest keys (Histogram's top bins) with guaranteed lower/upper bounds.

Both are built from *grouped counts* (one update per distinct key of a batch, never per
row): on the driver from a bounded Arrow table, or on the executors in a single
``mapInArrow`` pass over the grouped aggregation. Spark's own ``tuple_sketch_agg_integer``
was tried first: its bytes do not load correctly in the Python package (summaries come
back garbled and key hashes differ), so it is not used.

Keys are hashed in a canonical form (``canonical_keys``): the value itself for one string
or integer column, its string cast for other single columns, JSON of the values for
several columns; NULL is a distinct marker. The same function runs on the driver and on
the executors over the same Arrow types, so a key hashes the same in every batch.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator, Sequence
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


def build_partition(
    batches: Iterator[pa.RecordBatch], *, n_keys: int, drop_all_null: bool, lg_k: int, with_items: bool
) -> Iterator[pa.RecordBatch]:
    """``mapInArrow`` body over grouped counts (``in_scope``, ``k0..``, ``count``).

    Yields ONE row per partition: the serialized sketches of the in-scope groups (minus
    the all-NULL group when ``drop_all_null``), the in-scope row count ``n`` and the
    unfiltered row count ``total``. Runs on the executors.
    """
    sketch = ds.update_tuple_sketch(SumCounts(), lg_k)
    items = ds.frequent_strings_sketch(lg_items_for(lg_k)) if with_items else None
    n = 0
    total = 0
    for batch in batches:
        table = pa.Table.from_batches([batch])
        total += int(pc.sum(table["count"]).as_py() or 0)
        table = keep_in_scope(table, n_keys=n_keys, drop_all_null=drop_all_null)
        n += int(pc.sum(table["count"]).as_py() or 0)
        keys = canonical_keys([table[f"k{i}"] for i in range(n_keys)])
        for k, c in zip(keys, table["count"].to_pylist(), strict=True):
            sketch.update(k, int(c))
            if items is not None:
                items.update(str(k), int(c))
    sketch.trim()
    out: dict[str, Any] = {
        "sketch": [sketch.compact().serialize(SERDE)],
        "items": [None if items is None else items.serialize()],
        "n": [n],
        "total": [total],
    }
    yield pa.RecordBatch.from_pydict(out, schema=PARTITION_SCHEMA)


PARTITION_SCHEMA = pa.schema(
    [("sketch", pa.binary()), ("items", pa.binary()), ("n", pa.int64()), ("total", pa.int64())]
)
PARTITION_DDL = "sketch binary, items binary, n long, total long"


def keep_in_scope(table: pa.Table, *, n_keys: int, drop_all_null: bool) -> pa.Table:
    """Rows of a grouped-counts table that are in scope (and not all-NULL when asked)."""
    mask = table["in_scope"]
    if drop_all_null and n_keys:
        any_valid = pc.is_valid(table["k0"])
        for i in range(1, n_keys):
            any_valid = pc.or_(any_valid, pc.is_valid(table[f"k{i}"]))
        mask = pc.and_(mask, any_valid)
    return table.filter(mask)
