"""Profiles for the profile-level AVH tests (no Spark): a numeric column's profile from its raw
values, with a real KLL sketch and the scalars the engine's profile carries."""

from __future__ import annotations

from collections.abc import Sequence

import datasketches as ds
import numpy as np

from streamdq.autovalidate.avh.profile import KLL_K, NUMERIC, ColumnProfile


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
