"""Row aggregates: one definition of a scan analyzer's aggregates, two ways to run it.

A ``ScanShareableAnalyzer`` declares its aggregates as ``RowAggregate`` values: a *kind*
(count_if, sum, count, avg, min, max, var_pop, skewness, kurtosis, covar_pop, kll, hll, rows)
applied to per-row Spark expressions (``inputs``). The two paths of the engine run the same
declaration:

* the **fused Spark path** (large batches, ``verify``): ``to_spark()`` turns each aggregate
  into the Spark aggregate expression of its kind, and the plan concatenates them into ONE
  ``agg`` (or one ``groupBy(segment).agg``);
* the **Arrow path** (small microbatches): the plan projects every distinct per-row input in
  ONE Spark job (``select(...).toArrow()``), so where-filters, predicates, casts and regexes
  are still evaluated by Spark exactly as the fused path evaluates them, and
  ``evaluate_arrow`` reduces the projected column(s) on the driver with pyarrow, numpy and
  datasketches to the value Spark's aggregate returns (the same Python type the fused
  ``collect()`` gives), which the analyzer's unchanged ``state_from`` turns into its state.

So both paths give equal exact states by construction, up to floating-point summation order
for sums and moments (both paths are exact on integer-valued data), and sketches within their
bounds (KLL compacts randomly; HLL hashes as Spark's DataSketches-Java does, so coupon-mode
estimates agree exactly). Empty input: ``count_if``/``rows``/``count`` give 0, the others
``None`` (Spark's NULL), a ``kll``/``hll`` sketch that saw nothing gives ``None``.

Spark semantics kept by ``evaluate_arrow``: NULLs are skipped; ``max`` is NaN when any value
is NaN (Spark orders NaN above every number) and ``min`` is NaN only when every value is;
``sum``/``avg``/moments propagate NaN; ``var_pop`` of one value is 0.0; ``skewness`` and
``kurtosis`` are NULL when the second central moment is 0 (Spark's default, non-legacy
statistical aggregates); KLL skips NaN; HLL skips the empty string (DataSketches' rule).

Example (the Arrow side alone; the inputs are already projected):

>>> import pyarrow as pa
>>> evaluate_arrow("count_if", [pa.array([True, None, False, True])], None)
2
>>> evaluate_arrow("max", [pa.array([1.0, float("nan"), None])], None)
nan
>>> evaluate_arrow("min", [pa.array([1.0, float("nan"), None])], None)
1.0
>>> evaluate_arrow("var_pop", [pa.array([1.0, 3.0, None])], None)
1.0
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import datasketches as ds
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import Column
from pyspark.sql import functions as F

from streamdq.errors import InvalidArgument

# kind -> number of per-row inputs
KINDS: dict[str, int] = {
    "rows": 0,  # the number of rows (count(1))
    "constant": 0,  # ``param`` itself, whatever the rows (none too): a value known from the schema
    "count_if": 1,  # rows on which a boolean input is TRUE (NULL counts as FALSE), BIGINT
    "sum": 1,
    "count": 1,  # non-NULL values
    "avg": 1,
    "min": 1,
    "max": 1,
    "var_pop": 1,
    "skewness": 1,
    "kurtosis": 1,
    "covar_pop": 2,  # over rows where both inputs are non-NULL
    "kll": 1,  # kll_sketch_agg_double(input, param=k): serialized KLL doubles sketch
    "hll": 1,  # hll_sketch_agg(input, param=lgConfigK): serialized HLL sketch
    "percentile": 1,  # percentile(input, param=q): exact, linearly interpolated (not mergeable)
    # the first ``param`` distinct strings, sorted, of an ARRAY<STRING> input (NULL arrays and
    # NULL elements skipped): names of drifting fields, a short list even over many rows
    "distinct_strings": 1,
    # the input's non-NULL values themselves (user aggregations built from Arrow columns,
    # streamdq.aggregations): a pyarrow Array on the Arrow path, collect_list's list on Spark's
    "values": 1,
}


@dataclass(frozen=True, eq=False)
class RowAggregate:
    """An aggregate ``kind`` over per-row Spark expressions ``inputs`` (see the module doc).

    ``param`` is the sketch parameter of ``kll`` (k) and ``hll`` (lgConfigK), the quantile
    of ``percentile`` (a float in [0, 1]), else None.
    """

    kind: str
    inputs: tuple[Column, ...] = ()
    param: int | float | None = None

    def __post_init__(self) -> None:
        arity = KINDS.get(self.kind)
        if arity is None:
            raise InvalidArgument(f"unknown row aggregate kind {self.kind!r}; known: {', '.join(KINDS)}")
        if len(self.inputs) != arity:
            raise InvalidArgument(f"row aggregate {self.kind} takes {arity} input(s), got {len(self.inputs)}")
        if self.kind in ("kll", "hll", "percentile", "distinct_strings", "constant") and self.param is None:
            raise InvalidArgument(f"row aggregate {self.kind} needs its sketch parameter")

    def to_spark(self) -> Column:
        """The Spark aggregate expression of this aggregate (the fused path)."""
        x = self.inputs[0] if self.inputs else None
        if self.kind == "rows":
            return F.count(F.lit(1))
        if self.kind == "constant":
            return F.lit(self.param)
        assert x is not None
        if self.kind == "count_if":
            return F.sum(F.when(x, F.lit(1)).otherwise(F.lit(0))).cast("long")
        if self.kind == "covar_pop":
            return F.covar_pop(x, self.inputs[1])
        if self.kind == "kll":
            assert self.param is not None
            return F.kll_sketch_agg_double(x, int(self.param))
        if self.kind == "hll":
            assert self.param is not None
            return F.hll_sketch_agg(x, int(self.param))
        if self.kind == "distinct_strings":
            assert self.param is not None
            names = F.array_compact(F.array_distinct(F.flatten(F.collect_set(x))))
            return F.slice(F.array_sort(names), 1, int(self.param))
        if self.kind == "percentile":
            assert self.param is not None
            return F.percentile(x, F.lit(float(self.param)))
        if self.kind == "values":
            return F.collect_list(x)
        fn = {
            "sum": F.sum,
            "count": F.count,
            "avg": F.avg,
            "min": F.min,
            "max": F.max,
            "var_pop": F.var_pop,
            "skewness": F.skewness,
            "kurtosis": F.kurtosis,
        }[self.kind]
        return fn(x)


def count_if(condition: Column) -> RowAggregate:
    return RowAggregate("count_if", (condition,))


def of(kind: str, value: Column, param: int | float | None = None) -> RowAggregate:
    return RowAggregate(kind, (value,), param)


# -- the Arrow side ------------------------------------------------------------------------
def _floats(array: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """The non-NULL values as float64 (NaN kept)."""
    values = array.drop_null() if array.null_count else array
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    out = values.to_numpy(zero_copy_only=False)
    return np.asarray(out, dtype=np.float64)


def _is_float(array: pa.Array | pa.ChunkedArray) -> bool:
    return pa.types.is_floating(array.type)


def _extreme(array: pa.Array | pa.ChunkedArray, kind: str) -> Any:
    if len(array) == array.null_count:
        return None
    if not _is_float(array):
        return pc.max(array).as_py() if kind == "max" else pc.min(array).as_py()
    x = _floats(array)
    nan = np.isnan(x)
    if kind == "max":
        return math.nan if nan.any() else float(x.max())
    if nan.all():
        return math.nan
    return float(x[~nan].min()) if nan.any() else float(x.min())


def _moments(x: np.ndarray, kind: str) -> float | None:
    n = x.size
    if n == 0:
        return None
    with np.errstate(over="ignore", invalid="ignore"):  # overflow gives inf/NaN, as in Spark
        return _central_moments(x, kind)


def _central_moments(x: np.ndarray, kind: str) -> float | None:
    n = x.size
    mean = x.sum() / n
    d = x - mean
    m2 = float(np.dot(d, d))
    if kind == "var_pop":
        return m2 / n
    if math.isnan(m2):
        return math.nan
    if m2 == 0.0:
        return None
    if kind == "skewness":
        m3 = float((d * d * d).sum())
        return math.sqrt(n) * m3 / math.sqrt(m2 * m2 * m2)
    d2 = d * d
    m4 = float(np.dot(d2, d2))
    return n * m4 / (m2 * m2) - 3.0


def _hll(array: pa.Array | pa.ChunkedArray, lg_k: int) -> bytes | None:
    values = pc.unique(array.drop_null() if array.null_count else array)
    if len(values) == 0:
        return None
    sketch = ds.hll_sketch(lg_k)
    # datasketches' HLL takes one value per call: map() drives the calls from C (3-8x the
    # speed of a Python loop over 20,000 values), in the same order, so the same sketch
    if pa.types.is_integer(values.type):
        deque(map(sketch.update, values.to_numpy(zero_copy_only=False).tolist()), maxlen=0)
    elif pa.types.is_string(values.type) or pa.types.is_large_string(values.type):
        deque(map(sketch.update, values.to_pylist()), maxlen=0)
    else:
        raise TypeError(f"hll over {values.type} has no Arrow form")
    return bytes(sketch.serialize_compact())


def exact_percentile(values: np.ndarray, q: float) -> float | None:
    """Spark's ``percentile``: position (n - 1) * q in the sorted values, linear interpolation
    between its floor and ceiling, in Spark's own arithmetic (so both paths agree to the bit)."""
    if values.size == 0:
        return None
    ordered = np.sort(values)
    position = (ordered.size - 1) * q
    lower, higher = math.floor(position), math.ceil(position)
    low, high = float(ordered[lower]), float(ordered[higher])
    if lower == higher or low == high:
        return low
    return (higher - position) * low + (position - lower) * high


def evaluate_arrow(kind: str, inputs: Sequence[pa.Array | pa.ChunkedArray], param: int | float | None) -> Any:
    """The value Spark's aggregate of ``kind`` returns over these projected inputs.

    ``inputs`` are the projected per-row columns (NULLs included), all of one length.
    """
    if kind == "rows":
        raise InvalidArgument("'rows' has no input: the caller counts the rows")
    if kind == "constant":
        return param
    x = inputs[0]
    if kind == "count_if":
        if x.null_count:
            x = x.fill_null(False)
        return int(pc.sum(x, min_count=0).as_py())
    if kind == "count":
        return len(x) - x.null_count
    if kind in ("min", "max"):
        return _extreme(x, kind)
    if kind == "kll":
        assert param is not None
        values = _floats(x)
        sketch = ds.kll_doubles_sketch(int(param))
        if values.size:
            # the binding takes a writable, contiguous float64 array (Arrow's buffers are read-only)
            sketch.update(np.array(values, dtype=np.float64, copy=True, order="C"))
        return None if sketch.is_empty() else bytes(sketch.serialize())
    if kind == "hll":
        assert param is not None
        return _hll(x, int(param))
    if kind == "distinct_strings":
        assert param is not None
        flat = pc.list_flatten(x)
        names = pc.unique(flat.drop_null() if flat.null_count else flat)
        return sorted(names.to_pylist())[: int(param)]
    if kind == "percentile":
        assert param is not None
        return exact_percentile(_floats(x), float(param))
    if kind == "values":
        values = x.combine_chunks() if isinstance(x, pa.ChunkedArray) else x
        return values.drop_null() if values.null_count else values
    if kind == "covar_pop":
        y = inputs[1]
        both = pc.and_(pc.is_valid(x), pc.is_valid(y))
        xs = np.asarray(x.filter(both).to_numpy(zero_copy_only=False), dtype=np.float64)
        ys = np.asarray(y.filter(both).to_numpy(zero_copy_only=False), dtype=np.float64)
        if xs.size == 0:
            return None
        return float(np.dot(xs - xs.mean(), ys - ys.mean()) / xs.size)
    if kind == "sum" and not _is_float(x):
        total = pc.sum(x, min_count=1).as_py()
        return total
    values = _floats(x)
    if kind == "sum":
        return float(values.sum()) if values.size else None
    if kind == "avg":
        return float(values.sum()) / values.size if values.size else None
    if kind in ("var_pop", "skewness", "kurtosis"):
        return _moments(values, kind)
    raise InvalidArgument(f"unknown row aggregate kind {kind!r}")
