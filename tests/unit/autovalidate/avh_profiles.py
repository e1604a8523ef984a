"""Profiles for the profile-level AVH tests (no Spark): a numeric column's profile from its raw
values, with a real KLL sketch and the scalars the engine's profile carries; a categorical
column's from its raw values through the engine's profile builder."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import datasketches as ds
import numpy as np

from streamdq.autovalidate.avh.profile import (
    CATEGORICAL,
    KLL_K,
    MAX_KEYS,
    NULL_KEY,
    NUMERIC,
    ColumnProfile,
    column_analyzers,
    profile_from_states,
)


def numeric_profile(values: Sequence[float], column: str) -> ColumnProfile:
    """The profile of a numeric batch of ``values`` (no NULLs): row count, completeness, mean,
    min, max, std and the values' KLL sketch (exact up to its k)."""
    sketch = ds.kll_doubles_sketch(KLL_K)
    for v in values:
        sketch.update(float(v))
    arr = np.asarray(values, dtype=float)
    scalars = {
        "row_count": float(len(arr)),
        "completeness": 1.0,
        "mean": float(arr.mean()),
        "min": float(arr.min()),
        "max": float(arr.max()),
        "std": float(arr.std(ddof=1)),
    }
    return ColumnProfile(column, NUMERIC, float(len(arr)), scalars, kll=bytes(sketch.serialize()))


def categorical_profile(values: Sequence[str | None], column: str) -> ColumnProfile:
    """The profile of a categorical batch of ``values`` (None: NULL), through the engine's own
    profile builder from a Size and an exact Histogram state, as a Spark run would give it."""
    import pyarrow as pa

    from streamdq.analyzers.basic_states import NumMatches
    from streamdq.analyzers.frequency.states import FrequencyState

    size, histogram = column_analyzers(column, CATEGORICAL)
    counts = Counter(NULL_KEY if v is None else v for v in values)
    keys = sorted(counts)
    table = pa.table({"k0": keys, "count": pa.array([counts[k] for k in keys], pa.int64())})
    state = FrequencyState.from_table(table, n=len(values), total=len(values), max_groups=MAX_KEYS)
    return profile_from_states(column, CATEGORICAL, {size: NumMatches(len(values)), histogram: state})
