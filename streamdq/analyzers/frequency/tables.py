"""Exact frequency tables as Arrow: canonical form, IPC bytes, summing two tables.

A table has key columns ``k0..k{m-1}``, ``count`` (int64) and, for a histogram with a
``Sum`` aggregate, ``sum`` (int64, NULL for a bin whose summed values were all NULL; NULL
is the identity when two tables are summed). Canonical form: no schema metadata, one
chunk, ``sum`` nullable, rows sorted by the key columns (nulls last), so equal tables
compare and serialize equally. Driver-side, bounded input (at most ``max_groups`` rows,
unless an unbounded state was asked for).

``sum_tables`` sums any two tables (a hash group-by of their concatenation, then a sort);
``merge_canonical`` sums two tables already in canonical form, as the states' merge does
every microbatch, without re-grouping or re-sorting the larger one when it can (one key
column of a type whose equality and order Arrow's hashing and sorting agree on); its
result equals ``sum_tables``'s, schema included.

>>> import pyarrow as pa
>>> a = pa.table({"k0": ["x", "y"], "count": pa.array([1, 2], pa.int64())})
>>> b = pa.table({"k0": ["y", None], "count": pa.array([3, 4], pa.int64())})
>>> sum_tables(a, b).to_pydict()
{'k0': ['x', 'y', None], 'count': [1, 5, 4]}
>>> read_table(table_bytes(a)).equals(a)
True
"""

from __future__ import annotations

import contextlib
import io

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from streamdq.errors import InvalidArgument

VALUE_COLUMNS = ("count", "sum")


def key_names(table: pa.Table) -> list[str]:
    """The key columns of a frequency table (every column but the values)."""
    return [name for name in table.column_names if name not in VALUE_COLUMNS]


def table_bytes(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue()


def read_table(blob: bytes) -> pa.Table:
    return pa.ipc.open_stream(blob).read_all()


def canonical_table(table: pa.Table) -> pa.Table:
    """Drop schema metadata, one chunk, rows sorted by key columns (nulls last)."""
    table = table.replace_schema_metadata(None)
    if "sum" in table.column_names:
        i = table.column_names.index("sum")
        table = table.set_column(i, pa.field("sum", pa.int64(), nullable=True), table["sum"].cast(pa.int64()))
    keys = key_names(table)
    if keys and table.num_rows > 1:
        # unsortable key types (nested): equality then depends on row order
        with contextlib.suppress(pa.ArrowNotImplementedError, pa.ArrowTypeError):
            table = table.sort_by([(k, "ascending") for k in keys])
    return table.combine_chunks()


def merge_canonical(a: pa.Table, b: pa.Table) -> pa.Table:
    """``sum_tables(a, b)`` for two tables in canonical form (the states' merge).

    When both have the same columns and types, one key column of a type whose equality
    and order Arrow's hashing and sorting agree on (integers, strings, binaries, booleans,
    dates, times, timestamps, durations, decimals; not floats, where -0.0 and NaN differ
    between the two) without NULL keys, and int64 value columns without NULL counts: the
    keys of the smaller table are looked up in the larger one (a binary search for
    integers, a hash of the smaller one's keys otherwise); counts and sums
    are added in place, and the new keys are appended, prepended, or sorted in only when
    they interleave with the old ones. Tables whose key ranges do not overlap (a growing
    id) are just concatenated. Otherwise ``sum_tables``. Equal results either way.

    >>> a = pa.table({"k0": ["a", "c"], "count": pa.array([1, 2], pa.int64())})
    >>> merge_canonical(a, pa.table({"k0": ["b", "c"], "count": pa.array([3, 4], pa.int64())})).to_pydict()
    {'k0': ['a', 'b', 'c'], 'count': [1, 3, 6]}
    """
    merged = _merge_by_lookup(a, b)
    return sum_tables(a, b) if merged is None else merged


def _lookup_key_type(t: pa.DataType) -> bool:
    """A sortable key type whose value equality (``index_in``) is the grouping's and the
    sort's (intervals do not sort: their tables are not in key order)."""
    return bool(
        pa.types.is_integer(t)
        or pa.types.is_string(t)
        or pa.types.is_large_string(t)
        or pa.types.is_binary(t)
        or pa.types.is_large_binary(t)
        or pa.types.is_fixed_size_binary(t)
        or pa.types.is_boolean(t)
        or pa.types.is_date(t)
        or pa.types.is_time(t)
        or pa.types.is_timestamp(t)
        or pa.types.is_duration(t)
        or pa.types.is_decimal(t)
    )


def _one_chunk(column: pa.ChunkedArray) -> pa.Array:
    return column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()


def _before(x: pa.Array, y: pa.Array) -> bool:
    """Whether the one value of ``x`` sorts before the (different) one of ``y`` (nulls last)."""
    order = pc.array_sort_indices(pa.concat_arrays([x, y]), null_placement="at_end")
    return bool(order[0].as_py() == 0)


def _strictly_before(x: pa.Array, y: pa.Array) -> bool:
    """Whether the one (non-NULL) value of ``x`` sorts strictly before the one of ``y``."""
    return not pc.equal(x, y)[0].as_py() and _before(x, y)


def _concat(tables: list[pa.Table], schema: pa.Schema) -> pa.Table:
    """The rows of ``tables`` (same columns) in this order, as one chunk of ``schema``."""
    columns = [pa.concat_arrays([_one_chunk(t[name]) for t in tables]) for name in schema.names]
    return pa.Table.from_arrays(columns, schema=schema)


def _matches(big: pa.Array, small: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(rows of ``big``, rows of ``small``) holding the same keys, ascending in ``big``;
    both sorted, unique, without NULLs. Integers: a binary search of ``small``'s keys in
    ``big``'s; other types: a hash of ``small``'s keys probed with ``big``'s."""
    if pa.types.is_integer(big.type):
        mine = np.asarray(big.to_numpy(zero_copy_only=False))
        theirs = np.asarray(small.to_numpy(zero_copy_only=False))
        where = np.searchsorted(mine, theirs)
        inside = where < len(mine)
        hit = np.zeros(len(theirs), dtype=bool)
        hit[inside] = mine[where[inside]] == theirs[inside]
        return where[hit], np.flatnonzero(hit)
    found = pc.index_in(big, value_set=small, skip_nulls=False)  # big row -> small row
    rows = np.asarray(found.fill_null(-1).to_numpy(zero_copy_only=False), dtype=np.int64)
    at = np.flatnonzero(rows >= 0)
    return at, rows[at]


def _merge_by_lookup(a: pa.Table, b: pa.Table) -> pa.Table | None:
    """``merge_canonical``'s keyed merge, or ``None`` when it does not apply."""
    keys = key_names(a)
    if len(keys) != 1 or a.column_names != b.column_names or a.num_rows == 0 or b.num_rows == 0:
        return None
    if any(a.schema.field(c).type != b.schema.field(c).type for c in a.column_names):
        return None
    key = keys[0]
    values = [v for v in VALUE_COLUMNS if v in a.column_names]
    if not _lookup_key_type(a.schema.field(key).type) or any(
        a.schema.field(v).type != pa.int64() for v in values
    ):
        return None
    # NULL keys (never in a plain grouping's single key, "NullValue" in a histogram's) and
    # NULL counts: the group-by path, whose bytes under NULL slots the states keep
    if any(t[c].null_count for t in (a, b) for c in (key, "count")):
        return None
    # the output schema sum_tables gives: keys nullable, a value nullable when either was
    # (canonical_table makes ``sum`` nullable), no metadata
    fields = [pa.field(key, a.schema.field(key).type)]
    for v in values:
        nullable = v == "sum" or a.schema.field(v).nullable or b.schema.field(v).nullable
        fields.append(pa.field(v, pa.int64(), nullable=nullable))
    schema = pa.schema(fields)
    ak, bk = _one_chunk(a[key]), _one_chunk(b[key])
    # disjoint key ranges (a growing id: each batch's keys after the total's): no lookup
    if _strictly_before(ak.slice(a.num_rows - 1), bk.slice(0, 1)):
        return _concat([a, b], schema)
    if _strictly_before(bk.slice(b.num_rows - 1), ak.slice(0, 1)):
        return _concat([b, a], schema)
    big, small = (a, b) if a.num_rows >= b.num_rows else (b, a)
    big_keys, small_keys = (ak, bk) if big is a else (bk, ak)
    at, matched = _matches(big_keys, small_keys)
    counts = np.array(_one_chunk(big["count"]).to_numpy(zero_copy_only=False), dtype=np.int64)
    small_counts = np.asarray(_one_chunk(small["count"]).to_numpy(zero_copy_only=False), dtype=np.int64)
    counts[at] += small_counts[matched]
    columns: list[pa.Array] = [big_keys, pa.array(counts, pa.int64())]
    if "sum" in values:
        rows = np.full(big.num_rows, -1, dtype=np.int64)  # big row -> small row (-1: none)
        rows[at] = matched
        found = pa.array(rows, mask=rows < 0)
        mine, theirs = _one_chunk(big["sum"]), _one_chunk(small["sum"]).take(found)
        columns.append(pc.coalesce(pc.add(mine, theirs), mine, theirs))  # NULL is the identity
    updated = pa.Table.from_arrays(columns, schema=schema)
    fresh = np.ones(small.num_rows, dtype=bool)
    fresh[matched] = False
    if not fresh.any():
        return updated
    added = small.take(pa.array(np.flatnonzero(fresh))).select(schema.names)
    added = pa.Table.from_arrays([_one_chunk(added[c]) for c in schema.names], schema=schema)
    new_keys, n = added[key], big.num_rows
    if _before(big_keys.slice(n - 1), _one_chunk(new_keys.slice(0, 1))):
        out = pa.concat_tables([updated, added])
    elif _before(_one_chunk(new_keys.slice(added.num_rows - 1)), big_keys.slice(0, 1)):
        out = pa.concat_tables([added, updated])
    else:
        out = pa.concat_tables([updated, added]).sort_by([(key, "ascending")])
    return out.combine_chunks()


def sum_tables(a: pa.Table, b: pa.Table) -> pa.Table:
    """The counts of ``a`` and ``b`` added per key (key types unified, else ``ValueError``)."""
    if a.schema != b.schema:
        try:
            schema = pa.unify_schemas([a.schema, b.schema], promote_options="permissive")
            a, b = a.cast(schema), b.cast(schema)
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as exc:
            raise InvalidArgument(
                f"cannot merge frequency tables with key types {a.schema} and {b.schema}"
            ) from exc
    keys = key_names(a)
    both = pa.concat_tables([a, b])
    values = [v for v in VALUE_COLUMNS if v in a.column_names]
    summed = both.group_by(keys, use_threads=False).aggregate([(v, "sum") for v in values])
    columns = {k: summed[k] for k in keys}
    for v in values:
        columns[v] = summed[f"{v}_sum"]  # NULL only when NULL on both sides
    out = pa.table(columns).select(a.column_names)
    # a value column stays non-nullable when it was on both sides (Spark's counts are)
    schema = pa.schema(
        [
            f.with_nullable(a.schema.field(f.name).nullable or b.schema.field(f.name).nullable)
            if f.name in values
            else f
            for f in out.schema
        ]
    )
    return canonical_table(out.cast(schema))
