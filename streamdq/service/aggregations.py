"""CDAP's field aggregations over the window scope: which exist, merging them over a range, series.

A *field* is a metric instance (a column, ``a,b`` for a column set, ``*`` for the dataset).
An *aggregation* of a field is one analyzer computed on it at window scope, named by the
analyzer (``ApproxCountDistinct``, ``ApproxQuantile``, ``Histogram``, ``Mean``...) or, for a
metric without an analyzer (``QualityScore``, a measure), by the metric. It is *combinable*
when its window states are stored (and its analyzer is: a user aggregation may declare
``combinable = False``, and is then served as a time series only): then ``merge`` folds the latest committed state of every
window inside ``[start, end)`` (``window_start >= start`` and ``window_end <= end``) and
computes the analyzer's metric of the result, reading no data. A non-combinable aggregation is
only served as a time series (one value per window).

Several analyzers of one name on a field (another ``where`` filter, parameters) are told apart
by ``key`` (the analyzer key the catalog lists). For ``ApproxQuantile`` any ``quantile`` can be
asked for: every quantile of a column is answered by the column's stored KLL sketch.

``fold_stored`` merges many stored states at once: HLL and KLL sketches in one datasketches union instead
of pairwise re-serialization (10,000 windows in well under a second, bench/service).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import reduce
from typing import Any

import datasketches as ds
import pyarrow.compute as pc
import pyarrow.dataset as pads

from streamdq.analyzers.approx_quantile import ApproxQuantile
from streamdq.analyzers.base import Analyzer
from streamdq.analyzers.register import analyzer_from_spec, state_from_bytes
from streamdq.analyzers.sketch_states import HllState, KllState
from streamdq.analyzers.state import State, StateFormatError
from streamdq.analyzers.user_aggregation import combinable, metric_name
from streamdq.service.errors import BadRequest, NotFound
from streamdq.service.reader import StateReader, plain
from streamdq.service.times import TimeRange
from streamdq.state import schemas as S
from streamdq.state.queries import latest_per, range_filter
from streamdq.state.stored_analyzers import answering_key, stored_window_analyzers


@dataclass(frozen=True)
class Aggregation:
    """One aggregation of a field: its name, whether it merges over ranges, and its analyzer."""

    name: str
    combinable: bool
    key: str
    parameters: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    analyzer: Analyzer | None = field(default=None, compare=False, hash=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "combinable": self.combinable,
            "key": self.key,
            "parameters": plain(self.parameters),
        }


def _analyzer(key: str | None) -> Analyzer | None:
    if not key:
        return None
    try:
        return analyzer_from_spec(json.loads(key))
    except (ValueError, KeyError, TypeError):
        return None


def stored_keys(reader: StateReader, dataset: str) -> dict[str, str]:
    """``{state_key: analyzer spec}`` of the dataset's stored window states (remembered per
    version of the ``states`` table: the console asks for it on every refresh)."""
    dt = reader.store.table(S.STATES)
    if dt is None:
        return {}
    memo_key = ("stored_keys", dataset, reader.store.root, dt.version())
    cached = reader.memo.get(memo_key)
    if cached is not None:
        return dict(cached)
    rows = reader.rows(
        S.STATES,
        dataset,
        prune=("scope = 'window'",),
        where=pads.field("scope") == "window",
        columns=["state_key", "analyzer", "scope"],
        committed=False,
    )
    found = stored_window_analyzers(rows.group_by(["state_key", "analyzer", "scope"]).aggregate([]))
    reader.memo.clear()  # one table version at a time
    reader.memo[memo_key] = found
    return dict(found)


def fields(reader: StateReader, dataset: str, rng: TimeRange) -> list[dict[str, Any]]:
    """The fields with window-scope metrics in ``rng``, each with its entity and aggregation names."""
    reader.require(dataset)
    rows = reader.window_metric_rows(dataset, rng, columns=["entity", "instance", "name"])
    groups = rows.group_by(["instance", "entity"]).aggregate([("name", "distinct")])
    out = [
        {"field": r["instance"], "entity": r["entity"], "aggregations": sorted(set(r["name_distinct"]))}
        for r in groups.to_pylist()
        if r["instance"] is not None
    ]
    return sorted(out, key=lambda f: f["field"])


def catalog(reader: StateReader, dataset: str, field_name: str, rng: TimeRange) -> list[Aggregation]:
    """The aggregations of ``field_name`` in ``rng``; ``NotFound`` for an unknown field."""
    reader.require(dataset)
    rows = reader.window_metric_rows(
        dataset, rng, pads.field("instance") == field_name, columns=["name", "analyzer_key"]
    )
    if rows.num_rows == 0:
        known = [f["field"] for f in fields(reader, dataset, rng)]
        raise NotFound(
            f"dataset {dataset!r} has no window metrics of field {field_name!r} in the range; "
            f"fields: {', '.join(known) if known else 'none'}"
        )
    stored = stored_keys(reader, dataset)
    out = []
    for r in rows.group_by(["name", "analyzer_key"]).aggregate([]).to_pylist():
        key = r["analyzer_key"] or ""
        analyzer = _analyzer(key)
        mergeable = (
            analyzer is not None
            and combinable(analyzer)
            and (analyzer.state_key() in stored or answering_key(analyzer, stored) is not None)
        )
        params: dict[str, Any] = {}
        if analyzer is not None:
            params = {
                k: v for k, v in analyzer.to_spec().items() if k not in ("analyzer", "column", "columns")
            }
        out.append(Aggregation(r["name"], mergeable, key, params, analyzer))
    return sorted(out, key=lambda a: (a.name, a.key))


def pick(aggs: Sequence[Aggregation], name: str, key: str | None = None) -> Aggregation:
    """The aggregation ``name`` (of ``key`` when given; else the one without a ``where`` filter
    and with the fewest parameters); ``NotFound`` naming what exists."""
    named = [a for a in aggs if a.name == name and (key is None or a.key == key)]
    if not named:
        listed = ", ".join(sorted({a.name for a in aggs}))
        what = f"aggregation {name!r}" + (f" with key {key}" if key is not None else "")
        raise NotFound(f"unknown {what} for this field; aggregations: {listed}")
    return min(named, key=lambda a: (a.parameters.get("where") is not None, len(a.key), a.key))


def _payloads(blobs: Sequence[bytes], cls: type[State]) -> list[bytes] | None:
    """The sketch payloads of stored states of ``cls`` (current format), or None if any is not."""
    header = cls.empty().to_bytes()  # a sketch state's empty payload is b"": this is its header
    if any(not b.startswith(header) for b in blobs):
        return None
    n = len(header)
    return [b[n:] for b in blobs if len(b) > n]


def fold_stored(blobs: Sequence[bytes], empty: State, where: str) -> State:
    """Merge stored state bytes (``State.to_bytes``) into one state of ``empty``'s type.

    HLL and KLL sketches are deserialized once each and merged in one union (no re-serialization
    per window); other states are decoded and folded pairwise. ``where`` names the source in a
    decoding error."""
    if isinstance(empty, HllState | KllState):
        payloads = _payloads(blobs, type(empty))
        if payloads is not None:
            if not payloads:
                return empty
            if isinstance(empty, HllState):
                sketches = [ds.hll_sketch.deserialize(p) for p in payloads]
                union = ds.hll_union(max(sk.lg_config_k for sk in sketches))
                for sk in sketches:
                    union.update(sk)
                return HllState.of_sketch(union.get_result(sketches[0].tgt_type))
            merged = ds.kll_doubles_sketch.deserialize(payloads[0])
            for p in payloads[1:]:
                merged.merge(ds.kll_doubles_sketch.deserialize(p))
            return KllState.of_sketch(merged)
    states = []
    for blob in blobs:
        try:
            states.append(state_from_bytes(blob))
        except StateFormatError as exc:
            raise StateFormatError(f"{where}: {exc}") from exc
    return reduce(lambda a, b: a.merge(b), states, empty)


def stored_aggregations(reader: StateReader, dataset: str, field_name: str) -> list[Aggregation]:
    """The combinable aggregations of ``field_name`` known from the stored window states alone
    (cheaper than ``catalog``: no metrics are read)."""
    out = []
    for spec in set(stored_keys(reader, dataset).values()):
        analyzer = _analyzer(spec)
        if analyzer is None or analyzer.instance != field_name:
            continue
        params = {k: v for k, v in analyzer.to_spec().items() if k not in ("analyzer", "column", "columns")}
        out.append(Aggregation(metric_name(analyzer), combinable(analyzer), analyzer.key(), params, analyzer))
    return sorted(out, key=lambda a: (a.name, a.key))


def find(
    reader: StateReader, dataset: str, field_name: str, name: str, key: str | None, rng: TimeRange
) -> Aggregation:
    """The aggregation ``name`` of a field: from the stored states when it is there, else from the
    metrics catalog (non-combinable ones, and the 404 naming what exists)."""
    reader.require(dataset)
    stored = [
        a
        for a in stored_aggregations(reader, dataset, field_name)
        if a.name == name and (key is None or a.key == key)
    ]
    if stored:
        return pick(stored, name, key)
    return pick(catalog(reader, dataset, field_name, rng), name, key)


@dataclass(frozen=True)
class Merged:
    """The metric of an aggregation merged over a range of windows."""

    data: Any
    windows: int
    approximate: bool
    error_bound: float | None
    failure: str | None


def merge(reader: StateReader, dataset: str, analyzer: Analyzer, rng: TimeRange) -> Merged:
    """Fold the latest committed window states of ``analyzer`` with windows inside ``rng``."""
    store = reader.store
    state_key = analyzer.state_key()
    if isinstance(analyzer, ApproxQuantile):
        state_key = answering_key(analyzer, stored_keys(reader, dataset)) or state_key
    prune, expr = range_filter(dataset, state_key, rng.start, rng.end)
    dt = store.table(S.STATES)
    if dt is None:
        rows = S.SCHEMAS[S.STATES].empty_table()
    else:
        rows = dt.to_pyarrow_dataset(file_pruning_predicate=prune).to_table(
            columns=["window_start", "state", "committed_at", "batch_id", "query_id"], filter=expr
        )
        rows = store.committed_filter(rows)
    if pc.count_distinct(rows.column("window_start")).as_py() != rows.num_rows:
        rows = latest_per(rows, ["window_start"], ["committed_at", "batch_id"])  # a window written twice
    where = f"{store.path(S.STATES)}: state {state_key!r}"
    metric = analyzer.metric(fold_stored(rows.column("state").to_pylist(), analyzer.empty_state(), where))
    return Merged(
        data=present(metric.value) if metric.ok else None,
        windows=rows.num_rows,
        approximate=bool(metric.approximate),
        error_bound=metric.error_bound,
        failure=metric.failure,
    )


def present(value: Any) -> Any:
    """An aggregation's value as CDAP shows it: a histogram as ``{key: count}``, else the value."""
    if isinstance(value, dict) and isinstance(value.get("values"), dict):
        return {str(k): (v.get("absolute") if isinstance(v, dict) else v) for k, v in value["values"].items()}
    return plain(value)


def analyzer_for(agg: Aggregation, quantile: float | None) -> Analyzer:
    """The analyzer to merge for ``agg`` (another ``quantile`` of an ``ApproxQuantile``)."""
    analyzer = agg.analyzer
    if analyzer is None or not agg.combinable:
        raise BadRequest(
            f"aggregation {agg.name!r} is not combinable (no window states are stored for it); "
            "ask for its timeseries instead"
        )
    if quantile is not None:
        if not isinstance(analyzer, ApproxQuantile):
            raise BadRequest(f"quantile= applies to ApproxQuantile only, not {agg.name}")
        if not 0.0 <= quantile <= 1.0:
            raise BadRequest(f"quantile={quantile} is outside [0, 1]")
        analyzer = ApproxQuantile(analyzer.column, quantile, analyzer.k, analyzer.where)
    return analyzer


def series_data(points: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """History points as CDAP's ``timeValues`` (``{"timestamp", "data"}``, plus window and state)."""
    out = []
    for p in points:
        value = p["value"]
        out.append(
            {
                "timestamp": p["timestamp"],
                "data": present(value) if p["failure"] is None else None,
                "windowEnd": p["windowEnd"],
                "open": p["open"],
                "failure": p["failure"],
            }
        )
    return out


__all__ = [
    "Aggregation",
    "Merged",
    "analyzer_for",
    "catalog",
    "fields",
    "find",
    "fold_stored",
    "merge",
    "pick",
    "series_data",
]
