"""Synthetic corruptions of a batch known only by its profile (the streaming case).

The streaming job keeps no raw rows of a closed window, only its states. To estimate
recall there, ``corrupted_profiles(profile, seed)``:

1. rebuilds a sample of the column from the profile: a categorical column from its value
   counts (exact up to the profile's ``MAX_KEYS`` heaviest values, NULLs included), a
   numeric one from evenly spaced quantiles of its KLL sketch plus its NULL share, at
   most ``max_rows`` rows;
2. corrupts that sample with every applicable synthetic issue (``corruptions.py``;
   ``schema_change`` has no neighbouring column here, so it only permutes the sample and
   is left out);
3. profiles clean and corrupted samples with ``analysis`` (the engine's segmented run, handed in:
   ``streamdq.monitors.SegmentedAnalysis``; one run) and maps each
   corrupted sample back to the real batch's scale: extensive metrics (row count, sum,
   distinct count) by the corrupted/clean ratio, every other single metric by the
   corrupted-minus-clean shift; value counts, patterns and the sketch are the corrupted
   sample's own (distances to the previous batch are scale-free).

Runs on the driver; an empty profile gives no corruptions.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from streamdq.autovalidate.avh.profile import NULL_KEY, NUMERIC, ColumnProfile
from streamdq.monitors import SegmentedAnalysis

EXTENSIVE = frozenset({"row_count", "sum", "distinct_count"})


def sample_frame(profile: ColumnProfile, max_rows: int = 5000) -> pd.DataFrame:
    """A frame of one column whose profile approximates ``profile`` (at most ``max_rows`` rows)."""
    n = int(min(profile.rows, max_rows))
    column = profile.column
    if n <= 0:
        return pd.DataFrame({column: pd.Series([], dtype="float64" if profile.kind == NUMERIC else object)})
    if profile.kind == NUMERIC:
        completeness = profile.scalars.get("completeness", 1.0)
        non_null = int(round(n * completeness))
        sketch = profile.kll_sketch()
        if sketch is None or sketch.is_empty() or non_null == 0:
            values = np.full(n, np.nan)
        else:
            ranks = (np.arange(non_null) + 0.5) / non_null
            values = np.concatenate([np.asarray(sketch.get_quantiles(ranks)), np.full(n - non_null, np.nan)])
        return pd.DataFrame({column: values.astype("float64")})
    keys = list(profile.values)
    counts = np.asarray([profile.values[k] for k in keys], dtype=float)
    if counts.sum() <= 0:
        return pd.DataFrame({column: pd.Series([None] * n, dtype=object)})
    share = counts / counts.sum() * n
    take = np.floor(share).astype(int)
    order = np.argsort(-(share - take), kind="stable")
    take[order[: n - int(take.sum())]] += 1  # largest remainders
    out: list[Any] = []
    for key, k in zip(keys, take, strict=True):
        out.extend([None if key == NULL_KEY else key] * int(k))
    return pd.DataFrame({column: pd.Series(out, dtype=object)})


def corrupted_profiles(
    profile: ColumnProfile,
    seed: int | None = 0,
    *,
    analysis: SegmentedAnalysis,
    max_rows: int = 5000,
    spark: Any = None,
) -> dict[str, ColumnProfile]:
    """name -> the profile a corrupted copy of the batch behind ``profile`` would have; the
    samples are profiled by ``analysis`` (e.g. ``streamdq.engine.monitor.analyze_segments``)."""
    from streamdq.autovalidate.avh import corruptions as cx
    from streamdq.autovalidate.avh.profiling import profile_frames

    sample = sample_frame(profile, max_rows)
    if len(sample) == 0:
        return {}
    rng = np.random.default_rng(seed)
    names, frames = [], []
    for c in cx.corruptions_for(profile.kind):
        if c.issue == "schema_change":
            continue
        try:
            frames.append(cx.apply(sample, profile.column, c, rng))
        except ValueError:
            continue
        names.append(c.name)
    clean, *bad = profile_frames(
        [sample, *frames], profile.column, profile.kind, analysis=analysis, spark=spark
    )
    return {name: rescale(profile, clean, p) for name, p in zip(names, bad, strict=True)}


def rescale(real: ColumnProfile, clean: ColumnProfile, corrupted: ColumnProfile) -> ColumnProfile:
    """``corrupted`` (a profile of a corrupted sample) moved to the scale of the ``real`` batch."""
    scalars: dict[str, float] = {}
    for name, value in corrupted.scalars.items():
        base, sample = real.scalars.get(name), clean.scalars.get(name)
        if base is None or sample is None:
            scalars[name] = value
        elif name in EXTENSIVE:
            scalars[name] = base * value / sample if sample else value
        else:
            scalars[name] = base + (value - sample)
    rows = scalars.get("row_count", corrupted.rows)
    return replace(corrupted, rows=rows, scalars=scalars)
