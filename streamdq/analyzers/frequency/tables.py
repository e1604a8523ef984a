"""Exact frequency tables as Arrow: canonical form, IPC bytes, summing two tables.

A table has key columns ``k0..k{m-1}``, ``count`` (int64) and, for a histogram with a
``Sum`` aggregate, ``sum`` (int64, NULL for a bin whose summed values were all NULL; NULL
is the identity when two tables are summed). Canonical form: no schema metadata, one
chunk, ``sum`` nullable, rows sorted by the key columns (nulls last), so equal tables
compare and serialize equally. Driver-side, bounded input (at most ``max_groups`` rows,
unless an unbounded state was asked for).

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

import pyarrow as pa

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
