"""The bad-data summary of one microbatch (``report.BadDataSummary``): which reasons, where,
and which new or missing fields.

* Reasons and the sample location come from the batch's quarantine rows, already on the
  driver as an Arrow table (no Spark job): each row's reason (``"; "``-joined reasons count
  once each) with its offending value cut off (``... got 'abc'``), counted; the first row's
  ``file:line`` / ``file`` / ``topic[partition]@offset``.
* Field names come from the decoders' drift arrays (``_streamdq_unknown_fields``,
  ``_streamdq_missing_fields``), which the compute stage only counts. Their names cost one
  small Spark job (the distinct names, at most ``MAX_FIELDS + 1`` each), run only in a batch
  whose counters show drift, so a steady stream pays nothing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from streamdq.display import reason_kind
from streamdq.report import BadDataSummary

TOP_REASONS = 3
MAX_FIELDS = 5
# drift counter -> (decoder column, summary field)
DRIFT_NAMES = {
    "unknown_field_rows": ("_streamdq_unknown_fields", "unknown_fields"),
    "missing_field_rows": ("_streamdq_missing_fields", "missing_fields"),
}
__all__ = ["drift_field_names", "reason_kind", "summarize"]


def drift_field_names(df: DataFrame, counters: Mapping[str, int]) -> dict[str, tuple[str, ...]]:
    """``{"unknown_fields": names, "missing_fields": names}`` for the drift the counters show
    (sorted, at most ``MAX_FIELDS``; a ``MAX_FIELDS + 1``-th name shows as ``...``); one
    Spark job when there is any, none otherwise."""
    wanted = [
        (column, name)
        for counter, (column, name) in DRIFT_NAMES.items()
        if counters.get(counter) and column in df.columns
    ]
    if not wanted:
        return {}
    parts = [
        df.select(F.lit(name).alias("kind"), F.explode(F.col(column)).alias("field"))
        for column, name in wanted
    ]
    union = parts[0]
    for part in parts[1:]:
        union = union.unionByName(part)
    rows = union.distinct().limit((MAX_FIELDS + 1) * len(wanted) * 4).collect()
    out: dict[str, list[str]] = {}
    for row in rows:
        out.setdefault(row["kind"], []).append(str(row["field"]))
    names = {}
    for kind, fields in out.items():
        fields.sort()
        names[kind] = tuple(fields[:MAX_FIELDS]) + (("...",) if len(fields) > MAX_FIELDS else ())
    return names


def _where(row: Mapping[str, Any]) -> str | None:
    if row.get("file"):
        name = str(row["file"]).rsplit("/", 1)[-1]
        return f"{name}:{row['line']}" if row.get("line") is not None else name
    if row.get("offset") is not None:
        return f"{row.get('topic') or '?'}[{row.get('partition')}]@{row['offset']}"
    return None


def summarize(quarantine: Any, names: Mapping[str, tuple[str, ...]] | None = None) -> BadDataSummary:
    """The summary of a batch's quarantine rows (an Arrow table or None) and drift names."""
    names = names or {}
    reasons: Counter[str] = Counter()
    sample = sample_reason = None
    if quarantine is not None and quarantine.num_rows:
        for text in quarantine.column("reason").to_pylist():
            for part in dict.fromkeys((text or "unknown").split("; ")):
                reasons[reason_kind(part)] += 1
        wanted = [
            c
            for c in ("reason", "file", "line", "topic", "partition", "offset")
            if c in quarantine.column_names
        ]
        first = quarantine.slice(0, 1).select(wanted).to_pylist()[0]
        sample, sample_reason = _where(first), first.get("reason")
    top = tuple(reasons.most_common(TOP_REASONS))
    return BadDataSummary(
        reasons=top,
        other_rows=sum(reasons.values()) - sum(n for _, n in top),
        sample=sample,
        sample_reason=sample_reason,
        unknown_fields=tuple(names.get("unknown_fields", ())),
        missing_fields=tuple(names.get("missing_fields", ())),
    )
