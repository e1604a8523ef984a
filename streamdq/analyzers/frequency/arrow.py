"""The Arrow form of a grouping: per-row key columns projected by Spark, grouped on the driver.

Where it runs: the small-batch path of the engine. ``query.key_projection(df, spec)``
gives the per-row Spark expressions ``query.grouped_counts`` groups by: the
scope flag (``where`` evaluated by Spark) and the key columns (histogram keys cast to
string with NULL as ``"NullValue"``, plain keys NULL out of scope). The plan projects them in
its one Spark job; ``state_from_keys`` groups the collected columns with pyarrow and hands
the counts to ``grouped.state_from_grouped``, the same function the fused path's grouped
counts go through, so both paths give equal states for the same rows (exact tables equal;
beyond ``max_groups`` the same bounded sample, since the driver hashes keys as Spark does).

Spark's grouping semantics kept: NULL keys group together; floating keys are normalized as
Spark's ``NormalizeFloatingNumbers`` does (-0.0 groups with 0.0, every NaN with NaN). Empty
input gives a state with ``n == 0``.

>>> import pyarrow as pa
>>> state = state_from_keys(pa.array([True, True, True]), [pa.array(["a", "a", None])],
...                         histogram=False, max_groups=10)
>>> state.n, state.table.to_pylist()
(2, [{'k0': 'a', 'count': 2}])
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa
import pyarrow.compute as pc

from streamdq.analyzers.frequency.grouped import state_from_grouped
from streamdq.analyzers.frequency.states import FrequencyState


def _normalized(key: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    if pa.types.is_floating(key.type):
        zero = pa.scalar(0.0, key.type)
        return pc.if_else(pc.equal(key, zero), zero, key)
    return key


def state_from_keys(
    scope: pa.Array | pa.ChunkedArray,
    keys: Sequence[pa.Array | pa.ChunkedArray],
    *,
    histogram: bool,
    max_groups: int | None,
    nullable: Sequence[bool] | None = None,
    weights: pa.Array | pa.ChunkedArray | None = None,
) -> FrequencyState:
    """The frequency state of collected per-row (scope, keys) columns (driver).

    ``nullable``: per key, whether Spark's schema says it may be NULL (default: all may);
    the state's table carries it as Spark's grouped counts do, so equal groups give equal
    states on both paths. ``weights``: the per-row values a histogram with a ``Sum``
    aggregate sums per bin (``query.weight_projection``, already cast to long by Spark),
    summed as Spark's ``sum`` does (NULLs skipped, NULL for a group without a value)."""
    names = [f"k{i}" for i in range(len(keys))]
    columns = {"in_scope": scope, **{n: _normalized(k) for n, k in zip(names, keys, strict=True)}}
    aggregates: list[tuple[str | list[str], str]] = [([], "count_all")]
    if weights is not None:
        columns["w"] = weights.cast(pa.int64())
        aggregates.append(("w", "sum"))
    table = pa.table(columns)
    grouped = table.group_by(["in_scope", *names], use_threads=False).aggregate(aggregates)
    fields = [pa.field("in_scope", pa.bool_())]
    flags = list(nullable) if nullable is not None else [True] * len(names)
    fields += [
        pa.field(n, grouped.schema.field(n).type, nullable=f) for n, f in zip(names, flags, strict=True)
    ]
    out = [grouped["in_scope"], *(grouped[n] for n in names), grouped["count_all"]]
    fields.append(pa.field("count", pa.int64(), nullable=False))
    if weights is not None:
        out.append(grouped["w_sum"])
        fields.append(pa.field("sum", pa.int64(), nullable=True))
    counts = pa.Table.from_arrays(out, schema=pa.schema(fields))
    return state_from_grouped(counts, n_keys=len(names), histogram=histogram, max_groups=max_groups)
