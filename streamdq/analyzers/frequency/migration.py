"""Format-v1 bounded frequency states, converted on read into the current sample form.

Before format v2 the bounded form of a frequency table was a DataSketches **tuple
sketch** (theta sampling of the distinct keys; the summary of a kept key is its summed
row count, ``PyLongsSerDe``) and, for histogram groupings, a **frequent-items sketch** of
the same keys weighted by their counts. Both are still found in state stores.
``from_v1_sketch`` (the one migration function, as whylogs' v0 -> v1 converters read an
old message into the current view) turns them into what a bounded state holds today:

* the tuple sketch is a bottom-k sample already: its kept hashes (63-bit, scaled to the
  64-bit space) with their exact counts and its theta become a ``Sample`` of scheme
  ``V1``. Estimates from it are unchanged (``r / theta``); it merges with other v1-scheme
  samples and with exact tables (hashed by ``v1_hashes`` exactly as v1 hashed them), never
  with samples built since v2 (Spark's ``xxhash64`` of the key: the same key would count
  twice, so that merge raises);
* the frequent-items sketch becomes a ``Top``: each listed key with its guaranteed lower
  and upper count, and the sketch's maximum error as the bound of every unlisted key.
  (A v1 histogram therefore now shows the guaranteed lower bound of a top count, as v2
  samples do, where v1 showed the sketch's point estimate.)

``canonical_keys`` is v1's identity of a group (the value itself for one string or
integer column, its string cast for other single columns, JSON of the values for several
columns; NULL a distinct marker). Driver-side; bounded input.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence

import datasketches as ds
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from streamdq.analyzers.frequency.sample import TOP_SCHEMA, V1, Sample, Top, ordered_top, sample_of

SERDE = ds.PyLongsSerDe()
NULL_KEY = "\x00null"
_THETA_ONE = (1 << 63) - 1  # DataSketches' theta64 of a sketch that dropped no key
_MAX_LG_K = 26  # the largest update sketch DataSketches builds


def _signed(hashes63: np.ndarray) -> np.ndarray:
    """DataSketches' 63-bit hashes in a Sample's storage (64-bit unsigned order, signed int64)."""
    u = np.asarray(hashes63, dtype=np.uint64) << np.uint64(1)
    return (u ^ np.uint64(1 << 63)).view(np.int64)


def from_v1_sketch(sketch: bytes, items: bytes | None) -> tuple[Sample, Top | None]:
    """(sample, top) of a stored v1 tuple sketch and its optional frequent-items sketch."""
    tup = ds.compact_tuple_sketch.deserialize(bytes(sketch), SERDE)
    pairs = list(tup)
    hashes = np.array([h for h, _ in pairs], dtype=np.uint64)
    counts = np.array([c for _, c in pairs], dtype=np.int64)
    theta64 = int(tup.theta64)
    theta_u = None if theta64 >= _THETA_ONE else theta64 << 1
    sample = sample_of(_signed(hashes), counts, max(len(pairs), 1), theta_u, V1)
    if items is None:
        return sample, None
    freq = ds.frequent_strings_sketch.deserialize(bytes(items))
    rows = freq.get_frequent_items(ds.frequent_items_error_type.NO_FALSE_NEGATIVES)
    # an unlisted key's count is at most the sketch's maximum error (upper - lower of any row)
    offset = max((int(r[3]) - int(r[2]) for r in rows), default=math.ceil(freq.epsilon * freq.total_weight))
    table = pa.table(
        {
            "key": pa.array([str(r[0]) for r in rows], pa.string()),
            "lo": pa.array([int(r[2]) for r in rows], pa.int64()),
            "hi": pa.array([int(r[3]) for r in rows], pa.int64()),
        },
        schema=TOP_SCHEMA,
    )
    return sample, Top(ordered_top(table), offset)


def v1_hashes(
    key_columns: Sequence[pa.Array | pa.ChunkedArray], counts: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(hashes, counts) of an exact table's groups as a v1 tuple sketch hashed them (every
    group kept: the sketch is sized above the number of groups)."""
    keys = canonical_keys(key_columns)
    lg_k = min(_MAX_LG_K, max(5, math.ceil(math.log2(max(len(keys), 1)))))
    sketch = ds.update_tuple_sketch(ds.AccumulatorPolicy(), lg_k)
    for key, count in zip(keys, counts.tolist(), strict=True):
        if count > 0:
            sketch.update(key, int(count))
    pairs = list(sketch.compact())
    hashes = np.array([h for h, _ in pairs], dtype=np.uint64)
    return _signed(hashes), np.array([c for _, c in pairs], dtype=np.int64)


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
    """One canonical key per row of the key columns (v1's hashed identity of a group)."""
    if len(columns) == 1 and pa.types.is_integer(columns[0].type):
        return [NULL_KEY if v is None else v for v in columns[0].to_pylist()]
    per = [_column_strings(c) for c in columns]
    if len(per) == 1:
        return [NULL_KEY if v is None else v for v in per[0]]
    return [
        json.dumps(list(vals), ensure_ascii=False, separators=(",", ":")) for vals in zip(*per, strict=True)
    ]
