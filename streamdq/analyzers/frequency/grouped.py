"""From collected grouped counts to a frequency state: the step both engine paths share.

The fused Spark path collects grouped counts (``query.grouped_counts``); the small-batch
path groups collected key columns with pyarrow (``arrow.state_from_keys``). Both hand a
table ``in_scope, k0.., count`` (and ``sum`` for a histogram with a ``Sum`` aggregate) to
``state_from_grouped``, so equal rows give equal
states on both paths. Driver-side; the table holds at most ``max_groups`` + 2 rows when
bounded (plus the rows the caller knows to be all the groups).

>>> import pyarrow as pa
>>> grouped = pa.table({"in_scope": [True, True, False], "k0": ["a", None, None],
...                     "count": pa.array([2, 1, 4], pa.int64())})
>>> s = state_from_grouped(grouped, n_keys=1, histogram=False, max_groups=10)
>>> s.n, s.total, s.table.to_pydict()
(2, 7, {'k0': ['a'], 'count': [2]})
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from streamdq.analyzers.frequency.states import FrequencyState, Sums


def keep_in_scope(table: pa.Table, *, n_keys: int, drop_all_null: bool) -> pa.Table:
    """Rows of a grouped-counts table that are in scope (and not all-NULL when asked)."""
    mask = table["in_scope"]
    if drop_all_null and n_keys:
        any_valid = pc.is_valid(table["k0"])
        for i in range(1, n_keys):
            any_valid = pc.or_(any_valid, pc.is_valid(table[f"k{i}"]))
        mask = pc.and_(mask, any_valid)
    return table.filter(mask)


def state_from_grouped(
    arrow: pa.Table, *, n_keys: int, histogram: bool, max_groups: int | None
) -> FrequencyState:
    """The state of a fully collected grouped-counts table (``in_scope, k0.., count[, sum]``):
    ``total`` = every row, ``n`` = the rows kept (in scope; for plain groupings, not NULL
    in every key column); with a ``sum`` column, a weighted state whose ``sums`` are the
    sums over the rows kept and over every row."""
    total = int(pc.sum(arrow["count"]).as_py() or 0)
    kept = keep_in_scope(arrow, n_keys=n_keys, drop_all_null=not histogram)
    n = int(pc.sum(kept["count"]).as_py() or 0)
    weighted = "sum" in arrow.column_names
    values = ["count", "sum"] if weighted else ["count"]
    table = kept.select([*(f"k{i}" for i in range(n_keys)), *values])
    sums = Sums(_sum(kept["sum"]), _sum(arrow["sum"])) if weighted else None
    return FrequencyState.from_table(table, n=n, total=total, max_groups=max_groups, sums=sums)


def _sum(values: pa.ChunkedArray) -> int | None:
    """The sum of the non-NULL values; ``None`` when there is none."""
    return None if values.null_count == len(values) else int(pc.sum(values).as_py())
