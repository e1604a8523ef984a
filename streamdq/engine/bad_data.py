"""The bad-data summary of one microbatch (``report.BadDataSummary``): which reasons, where,
and which new or missing fields.

* Reasons and the sample location come from the batch's quarantine rows, already on the
  driver as an Arrow table (no Spark job): each row's reason (``"; "``-joined reasons count
  once each) with its offending value cut off (``... got 'abc'``), counted; the first row's
  ``file:line`` / ``file`` / ``topic[partition]@offset``.
* Field names come from the decoders' drift arrays (``_streamdq_unknown_fields``,
  ``_streamdq_missing_fields``): the compute stage's one pass gathers the first
  ``NAMES_CAP`` distinct names per segment (row aggregate ``distinct_strings``), so they cost
  no Spark job of their own. (A job of their own, run on every batch with drift, doubled the
  handler's time on a JSON feed whose producer leaves out NULL fields: every batch "drifts".)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

import pyarrow.compute as pc

from streamdq import metadata_columns
from streamdq.display import reason_kind
from streamdq.report import BadDataSummary

TOP_REASONS = 3
MAX_FIELDS = 5
# the decoders' drift columns whose names the summary shows -> the summary's field
DRIFT_NAME_COLUMNS = {
    metadata_columns.UNKNOWN_FIELDS: "unknown_fields",
    metadata_columns.MISSING_FIELDS: "missing_fields",
}
# names kept per segment by the compute stage: one more than shown, so "..." is known
NAMES_CAP = MAX_FIELDS + 1
__all__ = ["DRIFT_NAME_COLUMNS", "NAMES_CAP", "capped_names", "reason_kind", "summarize"]


def capped_names(found: Mapping[str, Iterable[str]]) -> dict[str, tuple[str, ...]]:
    """``{"unknown_fields": names, "missing_fields": names}`` from the names the compute stage
    found per drift column (each segment's first ``NAMES_CAP``, sorted): the first
    ``MAX_FIELDS`` sorted, and ``"..."`` when there were more. A column without names is left
    out. The first ``NAMES_CAP`` of the union are the union's first ``NAMES_CAP``, so capping
    per segment loses nothing that is shown.

    >>> capped_names({"_streamdq_unknown_fields": {"b", "a"}, "_streamdq_missing_fields": set()})
    {'unknown_fields': ('a', 'b')}
    >>> capped_names({"_streamdq_missing_fields": [f"f{i}" for i in range(7)]})["missing_fields"]
    ('f0', 'f1', 'f2', 'f3', 'f4', '...')
    """
    out = {}
    for column, names in found.items():
        fields = sorted(set(names))
        if fields:
            more = ("...",) if len(fields) > MAX_FIELDS else ()
            out[DRIFT_NAME_COLUMNS[column]] = tuple(fields[:MAX_FIELDS]) + more
    return out


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
        # each distinct text once, weighted by its rows (a batch's late rows share one reason);
        # value_counts keeps first-appearance order, so ties rank as a row-by-row count would
        counted = pc.value_counts(quarantine.column("reason"))
        texts, counts = counted.field("values").to_pylist(), counted.field("counts").to_pylist()
        for text, n in zip(texts, counts, strict=True):
            for part in dict.fromkeys((text or "unknown").split("; ")):
                reasons[reason_kind(part)] += n
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
