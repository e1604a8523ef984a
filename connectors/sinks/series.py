"""Series identity of a metric: which analyzer parameters and ``where`` filter it was computed with.

Two metrics with the same name and instance (``Mean(dep_delay)`` with and without a ``where``
filter, ``ApproxQuantile(x)`` at 0.5 and at 0.9) are different series. ``series_identity``
derives, from a ``ScopedMetric.analyzer_key`` (the canonical JSON of the analyzer's spec), the
parts that tell them apart, as bounded, stable strings fit for Prometheus labels and console
text:

* ``params``: the analyzer's parameters other than its input columns, its instance name and
  ``where``, as ``key=value`` pairs sorted by key and joined with ``,`` (e.g.
  ``k=200,quantile=0.5``); ``""`` when there are none.
* ``where``: the filter predicate as written; ``""`` without a filter.
* ``where_id``: the first 8 hex digits of the SHA-256 of the predicate (``""`` without one),
  stable across runs and processes, so a long predicate cut short in ``where`` still names
  one series.

Each text is at most ``MAX_LABEL`` characters: a longer one keeps its head and ends with
``~`` and 8 hex digits of its SHA-256, so two different texts never share a label value. The
label values come from the configuration (analyzer specs), never from data, so their
cardinality is that of the configured analyzers. A metric without an analyzer key (counters,
monitor metrics) has all three empty.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

MAX_LABEL = 64
# spec fields that name the metric's instance or input columns (already in its ``column`` label)
_INSTANCE_FIELDS = frozenset(
    {"analyzer", "column", "columns", "first_column", "second_column", "numerator", "denominator", "name"}
)


def short_hash(text: str) -> str:
    """8 hex digits of the SHA-256 of ``text`` (stable across processes, unlike ``hash``)."""
    return hashlib.sha256(text.encode()).hexdigest()[:8]


def bounded(text: str, limit: int = MAX_LABEL) -> str:
    """``text`` if it fits in ``limit`` characters, else its head, ``~`` and its short hash."""
    if len(text) <= limit:
        return text
    return f"{text[: limit - 9]}~{short_hash(text)}"


def _value(v: Any) -> str:
    if isinstance(v, str):
        return v
    return json.dumps(v, sort_keys=True, separators=(",", ":"))


@dataclass(frozen=True)
class SeriesIdentity:
    """The parts of a metric's identity beyond (name, instance); see the module docstring."""

    params: str = ""
    where: str = ""
    where_id: str = ""

    def suffix(self) -> str:
        """Human text for the console: ``", quantile=0.5 where x > 0"`` style, ``""`` if plain."""
        out = f", {self.params}" if self.params else ""
        if self.where:
            out += f" where {self.where}"
        return out


_PLAIN = SeriesIdentity()
_CACHE: dict[str, SeriesIdentity] = {}


def series_identity(analyzer_key: str) -> SeriesIdentity:
    """The series identity of a metric computed by the analyzer with key ``analyzer_key``.

    An empty or non-JSON key (counter metrics, monitors) gives the plain identity.
    """
    if not analyzer_key:
        return _PLAIN
    cached = _CACHE.get(analyzer_key)
    if cached is not None:
        return cached
    try:
        spec = json.loads(analyzer_key)
    except ValueError:
        spec = None
    if not isinstance(spec, dict):
        return _PLAIN
    where = spec.get("where")
    where = where if isinstance(where, str) and where.strip() else ""
    params = ",".join(
        f"{k}={_value(v)}" for k, v in sorted(spec.items()) if k not in _INSTANCE_FIELDS and k != "where"
    )
    identity = SeriesIdentity(
        params=bounded(params), where=bounded(where), where_id=short_hash(where) if where else ""
    )
    if len(_CACHE) < 10_000:  # keys come from the configuration; the bound is a safety net
        _CACHE[analyzer_key] = identity
    return identity
