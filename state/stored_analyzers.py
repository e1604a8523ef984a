"""Which analyzers a dataset has window states for, and which stored state answers an analyzer
that was not stored itself.

``merge_range`` folds the stored window states of one state key. Two cases need more than
that key:

* The analyzer was never stored (a typo, a column the checks do not cover): the caller must
  say so, naming what *is* stored, instead of answering with the analyzer's empty state.
  ``stored_window_analyzers`` lists the stored keys with their analyzer specs.
* The analyzer's state is stored under another key: every ``ApproxQuantile`` /
  ``ApproxQuantiles`` of one column (and ``where`` filter) keeps the same KLL sketch, so any
  quantile can be computed from the sketch stored for another quantile of that column.
  ``answering_key`` picks that key (one with the same ``k`` first).

Both work on plain Arrow rows (the ``states`` table's ``state_key`` and ``analyzer``
columns), so the Delta and the in-memory store share them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pyarrow as pa
import pyarrow.dataset as pads
from streamdq.state import schemas as S
from streamdq.state.sql import lit

from streamdq.analyzers.approx_quantile import ApproxQuantile, ApproxQuantiles
from streamdq.analyzers.base import Analyzer
from streamdq.analyzers.register import analyzer_from_spec

_KLL_ANALYZERS = (ApproxQuantile, ApproxQuantiles)


def stored_window_analyzers(rows: pa.Table) -> dict[str, str]:
    """``{state_key: analyzer spec JSON}`` of window-scope state rows (columns ``state_key``,
    ``analyzer``; other scopes are skipped when a ``scope`` column is present)."""
    if rows.num_rows == 0:
        return {}
    names = rows.column_names
    keys = rows.column("state_key").to_pylist()
    specs = rows.column("analyzer").to_pylist()
    scopes = rows.column("scope").to_pylist() if "scope" in names else ["window"] * len(keys)
    return {k: s for k, s, scope in zip(keys, specs, scopes, strict=True) if scope == "window" and k}


def stored_in_delta(store: Any, dataset: str) -> dict[str, str]:
    """``stored_window_analyzers`` of a ``DeltaStateStore``'s ``states`` table for ``dataset``
    (only three columns of the dataset's partitions are read)."""
    dt = store.table(S.STATES)
    if dt is None:
        return {}
    rows = dt.to_pyarrow_dataset(file_pruning_predicate=f"dataset = {lit(dataset)}").to_table(
        columns=["state_key", "analyzer", "scope"], filter=pads.field("dataset") == dataset
    )
    return stored_window_analyzers(rows)


def _analyzer(spec: str | None) -> Analyzer | None:
    if not spec:
        return None
    try:
        return analyzer_from_spec(json.loads(spec))
    except (ValueError, KeyError, TypeError):  # a spec of an analyzer this version does not know
        return None


def _sketch_of(analyzer: Any) -> tuple[str, str | None] | None:
    """(column, where) of an analyzer kept as a KLL sketch of that column, else None."""
    if isinstance(analyzer, _KLL_ANALYZERS):
        return analyzer.column, analyzer.where
    return None


def answering_key(analyzer: Analyzer, stored: Mapping[str, str]) -> str | None:
    """The stored state key whose state answers ``analyzer`` although it was stored for
    another analyzer (a quantile from the KLL sketch of the same column and filter);
    None when ``analyzer``'s own key is stored or nothing can answer it."""
    if analyzer.state_key() in stored:
        return None
    wanted = _sketch_of(analyzer)
    if wanted is None:
        return None
    candidates = []
    for key, spec in sorted(stored.items()):
        other = _analyzer(spec)
        if other is not None and _sketch_of(other) == wanted:
            same_k = getattr(other, "k", None) == getattr(analyzer, "k", None)
            candidates.append((not same_k, key))
    return min(candidates)[1] if candidates else None


def describe(stored: Mapping[str, str], limit: int = 12) -> str:
    """The stored analyzers for an error message: their specs, as ``--analyzer`` takes them."""
    shown = sorted(spec or key for key, spec in stored.items())
    more = f" and {len(shown) - limit} more" if len(shown) > limit else ""
    return ", ".join(shown[:limit]) + more if shown else "none"
