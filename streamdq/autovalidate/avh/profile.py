"""ColumnProfile: what auto-validation keeps of one batch (or window) of one column.

Built on the driver from engine states only, never from raw rows: the same profile comes
out of ``learn()`` on plain frames and out of the streaming job's closed windows.

* numeric columns: row count, completeness, mean, min, max, sum, standard deviation,
  zero count, HLL distinct estimate (scan-shareable, one fused pass) and the KLL sketch
  of the values (median and the two-distribution metrics come from it);
* categorical columns: row count and the frequency table of the values (one grouped
  pass, exact up to the plan's ``max_groups``, then its bounded form). Completeness,
  distinct count, lengths, character classes and the pattern profile are derived from
  that table; the profile keeps the ``MAX_KEYS`` heaviest values and patterns (the
  distances between consecutive batches use them).

A profile serializes to JSON (sketch bytes in base64) and is bounded in size. An empty
batch gives a profile with ``rows == 0`` and no values.
"""

from __future__ import annotations

import base64
import math
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from streamdq.analyzers.base import Analyzer
from streamdq.analyzers.state import State
from streamdq.checks.kinds import make
from streamdq.errors import InvalidArgument

NUMERIC = "numeric"
CATEGORICAL = "categorical"
KINDS = (NUMERIC, CATEGORICAL)
NULL_KEY = "NullValue"
MAX_KEYS = 1000
KLL_K = 200


def column_analyzers(column: str, kind: str) -> list[Analyzer]:
    """The engine analyzers a profile of ``column`` needs (all of one fused pass + one grouping)."""
    if kind == NUMERIC:
        return [
            make("Size"),
            make("Completeness", column=column),
            make("ApproxCountDistinct", column=column),
            make("Mean", column=column),
            make("Minimum", column=column),
            make("Maximum", column=column),
            make("Sum", column=column),
            make("StandardDeviation", column=column),
            make("ZerosCount", column=column),
            make("ApproxQuantile", column=column, quantile=0.5, k=KLL_K),
        ]
    if kind == CATEGORICAL:
        return [make("Size"), make("Histogram", column=column, max_detail_bins=MAX_KEYS)]
    raise InvalidArgument(f"unknown column kind {kind!r}; expected one of {', '.join(KINDS)}")


def pattern_of(value: str) -> str:
    """AVH's pattern string (App. C): runs of digits -> ``\\d``, of letters -> ``\\l``,
    of punctuation -> ``-``; whitespace and other characters are kept."""
    out: list[str] = []
    last = ""
    for ch in value:
        if ch.isdigit():
            sym = "\\d"
        elif ch.isalpha():
            sym = "\\l"
        elif not ch.isspace() and not ch.isalnum() and ch.isprintable():
            sym = "-"
        else:
            sym = ch
        if sym != last or sym == ch:
            out.append(sym)
        last = sym
    return "".join(out)


@dataclass(frozen=True)
class ColumnProfile:
    """Statistics of one column in one batch; see the module docstring."""

    column: str
    kind: str
    rows: float
    scalars: dict[str, float] = field(default_factory=dict)
    values: dict[str, float] = field(default_factory=dict)
    patterns: dict[str, float] = field(default_factory=dict)
    kll: bytes | None = None
    approximate: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "column": self.column,
            "kind": self.kind,
            "rows": self.rows,
            "scalars": {k: _json_float(v) for k, v in self.scalars.items()},
            "values": self.values,
            "patterns": self.patterns,
            "kll": base64.b64encode(self.kll).decode() if self.kll else None,
            "approximate": self.approximate,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ColumnProfile:
        return cls(
            column=data["column"],
            kind=data["kind"],
            rows=float(data["rows"]),
            scalars={k: float(v) for k, v in data.get("scalars", {}).items()},
            values={str(k): float(v) for k, v in data.get("values", {}).items()},
            patterns={str(k): float(v) for k, v in data.get("patterns", {}).items()},
            kll=base64.b64decode(data["kll"]) if data.get("kll") else None,
            approximate=bool(data.get("approximate", False)),
        )

    def kll_sketch(self) -> Any:
        """The KLL sketch of the values (numeric profiles), or None when there were none."""
        if not self.kll:
            return None
        import datasketches as ds

        return ds.kll_doubles_sketch.deserialize(self.kll)


def _json_float(v: float) -> float | str:
    return v if math.isfinite(v) else repr(v)


def profile_from_states(
    column: str, kind: str, states: Mapping[Analyzer, State], failures: Mapping[Analyzer, str] | None = None
) -> ColumnProfile:
    """The profile of ``column`` from the states of ``column_analyzers(column, kind)``.

    A missing state is taken as empty (no rows); a failed analyzer leaves its statistic out.
    """
    failures = failures or {}
    analyzers = column_analyzers(column, kind)
    metrics = {}
    for a in analyzers:
        if a in failures:
            continue
        state = states.get(a) or a.empty_state()
        metrics[a.NAME] = (a, state, a.metric(state))
    size = metrics.get("Size")
    rows = float(size[2].value) if size and size[2].scalar is not None else 0.0
    if kind == NUMERIC:
        return _numeric_profile(column, rows, metrics)
    return _categorical_profile(column, rows, metrics)


def _numeric_profile(column: str, rows: float, metrics: Mapping[str, Any]) -> ColumnProfile:
    scalars: dict[str, float] = {"row_count": rows}

    def value(name: str) -> float | None:
        entry = metrics.get(name)
        return entry[2].scalar if entry else None

    completeness = value("Completeness")
    if completeness is not None:
        scalars["completeness"] = completeness
    non_null = rows * (completeness or 0.0)
    for name, key in (
        ("Mean", "mean"),
        ("Minimum", "min"),
        ("Maximum", "max"),
        ("Sum", "sum"),
        ("StandardDeviation", "std"),
        ("ApproxQuantile", "median"),
    ):
        v = value(name)
        if v is not None and math.isfinite(v):
            scalars[key] = v
    if "min" in scalars and "max" in scalars:
        scalars["range"] = scalars["max"] - scalars["min"]
    distinct = value("ApproxCountDistinct")
    if distinct is not None:
        scalars["distinct_count"] = distinct
        if non_null > 0:
            scalars["unique_ratio"] = distinct / non_null
    zeros = value("ZerosCount")
    if zeros is not None and non_null > 0:
        scalars["zero_ratio"] = zeros / non_null
    kll = None
    entry = metrics.get("ApproxQuantile")
    if entry is not None and getattr(entry[1], "sketch", None):
        kll = bytes(entry[1].sketch)
    return ColumnProfile(column, NUMERIC, rows, scalars, kll=kll, approximate=True)


def _categorical_profile(column: str, rows: float, metrics: Mapping[str, Any]) -> ColumnProfile:
    scalars: dict[str, float] = {"row_count": rows}
    entry = metrics.get("Histogram")
    if entry is None:
        return ColumnProfile(column, CATEGORICAL, rows, scalars)
    state = entry[1]
    limit = state.max_groups or len(state.counts()) or 1
    items, _ = state.top_items(max(limit, 1))
    approximate = bool(state.approximate)
    scale = 1.0
    held = sum(c for _, c in items)
    if approximate and held > 0 and rows > 0:
        scale = rows / held  # the bounded form: statistics over the heaviest keys, scaled
    nulls = float(sum(c for k, c in items if k == NULL_KEY)) * scale
    non_null = max(rows - nulls, 0.0)
    if rows > 0:
        scalars["completeness"] = non_null / rows
    number_of_bins = entry[2].value.get("number_of_bins", len(items)) if entry[2].ok else len(items)
    scalars["distinct_count"] = float(number_of_bins)
    distinct_non_null = float(number_of_bins) - (1.0 if nulls > 0 else 0.0)
    if non_null > 0:
        scalars["unique_ratio"] = distinct_non_null / non_null
    totals: defaultdict[str, float] = defaultdict(float)
    patterns: defaultdict[str, float] = defaultdict(float)
    weight = 0.0
    for key, count in items:
        if key == NULL_KEY:
            continue
        w = float(count)
        weight += w
        totals["str_len"] += w * len(key)
        letters = sum(ch.isalpha() for ch in key)
        totals["char_len"] += w * letters
        totals["digit_len"] += w * sum(ch.isdigit() for ch in key)
        totals["punc_len"] += w * sum((not ch.isalnum()) and (not ch.isspace()) for ch in key)
        totals["upper_chars"] += w * sum(ch.isupper() for ch in key)
        totals["letters"] += w * letters
        totals["empty"] += w * (key == "")
        totals["padded"] += w * (key != key.strip())
        patterns[pattern_of(key)] += w
    if weight > 0:
        for name in ("str_len", "char_len", "digit_len", "punc_len"):
            scalars[name] = totals[name] / weight
        scalars["empty_ratio"] = totals["empty"] / weight
        scalars["padded_ratio"] = totals["padded"] / weight
        if totals["letters"] > 0:
            scalars["upper_ratio"] = totals["upper_chars"] / totals["letters"]
    values = {k: float(c) for k, c in items[:MAX_KEYS]}
    top_patterns = dict(sorted(patterns.items(), key=lambda kv: (-kv[1], kv[0]))[:MAX_KEYS])
    return ColumnProfile(column, CATEGORICAL, rows, scalars, values, top_patterns, approximate=approximate)
