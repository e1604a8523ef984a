"""Column profiles of frames, computed by an analysis the caller hands in (no engine import).

AVH learns and judges on profiles (``profile.ColumnProfile``); a profile of a frame needs the
analyzers of ``profile.column_analyzers`` computed over it. The engine's segmented run of its
plan does that, but the engine sits above autovalidate (docs/architecture.md), so the functions
here take it as ``analysis`` (``streamdq.monitors.SegmentedAnalysis``; the engine's is
``streamdq.engine.monitor.analyze_segments``): :mod:`streamdq.learning` (above the engine) binds
it for ``learn``/``judge``/``profile_frames``, and the engine hands it to the streaming monitor.

* ``profile_frames(frames, column, kind, analysis=...)``: every frame (pandas or Spark) in ONE run
  over their union, segmented by ``SEGMENT``.
* ``profile_segments(df, segment, keys, column, kind, analysis=...)``: the segments of one frame.
* ``corrupted_frames(newest, column, kind, seed)``: a copy of a batch per synthetic issue
  (``corruptions.py``; pandas, no Spark), what ``learn`` trains its recall on.
* ``kind_of(frame, column)``: numeric or categorical from the frame's column type.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from streamdq.autovalidate.avh.profile import (
    CATEGORICAL,
    NUMERIC,
    ColumnProfile,
    column_analyzers,
    profile_from_states,
)
from streamdq.monitors import SegmentedAnalysis

SEGMENT = "_streamdq_avh_segment"


def kind_of(frame: Any, column: str) -> str:
    """``numeric`` or ``categorical`` from a pandas or Spark frame's column type."""
    if hasattr(frame, "sparkSession"):
        from streamdq.analyzers.base import is_numeric

        field = frame.schema[column]
        return NUMERIC if is_numeric(field.dataType) else CATEGORICAL
    from streamdq.autovalidate.avh.corruptions import column_kind

    return column_kind(frame[column])


def profile_frames(
    frames: Sequence[Any],
    column: str,
    kind: str,
    *,
    analysis: SegmentedAnalysis,
    spark: Any = None,
    max_groups: int = 100_000,
) -> list[ColumnProfile]:
    """The profile of ``column`` in each frame (pandas or Spark), in one run of ``analysis``
    over their union (``profile_segments``); pandas frames go to Spark on ``spark`` (or the
    session of a Spark frame among them, or ``streamdq.spark.get_spark()``). No frame: ``[]``."""
    from pyspark.sql import functions as F

    if not frames:
        return []
    df = _union(frames, column, kind, spark)
    return profile_segments(
        df, F.col(SEGMENT), range(len(frames)), column, kind, analysis=analysis, max_groups=max_groups
    )


def profile_segments(
    df: Any,
    segment: Any,
    keys: Sequence[Any],
    column: str,
    kind: str,
    *,
    analysis: SegmentedAnalysis,
    max_groups: int = 100_000,
) -> list[ColumnProfile]:
    """The profile of ``column`` in each segment ``keys[i]`` of one Spark frame, in that order:
    ONE call of ``analysis`` (the engine's: a scan-shareable pass grouped by ``segment``, plus one
    grouped pass for a categorical column). A key without rows gets the empty profile."""
    states, failures = analysis(column_analyzers(column, kind), df, segment, max_groups=max_groups)
    by_key = {key: profile_from_states(column, kind, st, failures) for key, st in states.items()}
    empty = profile_from_states(column, kind, {})
    return [by_key.get(k, empty) for k in keys]


def corrupted_frames(newest: Any, column: str, kind: str, seed: int | None) -> dict[str, Any]:
    """name -> a copy of the batch ``newest`` (pandas or Spark) with one synthetic issue injected
    (every applicable corruption of ``corruptions.py``, drawn from one generator seeded ``seed``)."""
    from streamdq.autovalidate.avh import corruptions as cx

    if hasattr(newest, "sparkSession"):
        newest = newest.toPandas()
    rng = np.random.default_rng(seed)
    out = {}
    for c in cx.corruptions_for(kind):
        try:
            out[c.name] = cx.apply(newest, column, c, rng)
        except ValueError:  # not applicable to this column as it is
            continue
    return out


@dataclass(frozen=True)
class StepProfiles:
    """The profiles one learning step needs beyond its history's: ``corrupted`` (name -> the
    profile of that synthetic issue in a copy of the step's newest batch, exactly what ``learn``
    trains on at the same seed) and ``judged`` (the profiles of the step's batches to judge, in
    the order given)."""

    corrupted: dict[str, ColumnProfile]
    judged: tuple[ColumnProfile, ...]


def _union(frames: Sequence[Any], column: str, kind: str, spark: Any) -> Any:
    import pandas as pd
    from pyspark.sql import functions as F

    from streamdq.analyzers.base import col

    spark_type = "double" if kind == NUMERIC else "string"
    parts: list[Any] = []
    pandas_parts = []
    for i, frame in enumerate(frames):
        if hasattr(frame, "sparkSession"):
            parts.append(frame.select(col(column).cast(spark_type).alias(column), F.lit(i).alias(SEGMENT)))
            spark = spark or frame.sparkSession
            continue
        series = frame[column] if column in frame.columns else pd.Series([], dtype=object)
        if kind == NUMERIC:
            values = pd.to_numeric(series, errors="coerce").astype("float64")
            values = values.astype(object).where(values.notna(), None)
        else:
            values = series.astype(object).where(series.notna(), None)
            values = values.map(lambda v: v if v is None else str(v))
        pandas_parts.append(pd.DataFrame({column: values.to_numpy(dtype=object), SEGMENT: i}))
    if pandas_parts:
        if spark is None:
            from streamdq.spark import get_spark

            spark = get_spark()
        data = pd.concat(pandas_parts, ignore_index=True)
        schema = f"`{column.replace('`', '``')}` {spark_type}, {SEGMENT} int"
        parts.append(spark.createDataFrame(data, schema))
    df = parts[0]
    for p in parts[1:]:
        df = df.unionByName(p)
    return df
