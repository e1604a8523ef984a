"""History for expression checks: the stored values ``previous_values``/``previous`` read.

Runs on the driver, before each judgement (never inside an expression: evaluation does no
I/O). ``ExpressionHistory(store, dataset, checks, measure_names)`` knows, per scope, which
``HistoryRef`` the expressions judged at that scope name (their arguments are literals,
checked at load time); ``prefetch(scope)`` reads each one once from the state store:

* a measure (a name declared in ``measures:``; for another dataset, any stored measure of
  that name): ``streamdq.state.measure_history`` at the same scope;
* otherwise a metric by its expression key (``expression_kind.metric_key``: ``Size``,
  ``Completeness(email)``): the metrics table's series of that metric name, kept where the
  row's key matches, at the same scope; window scope keeps closed windows only.

Values are oldest first, the last ``n`` successful points (failed points have no value and
are skipped). This dataset's series are read from the store once (the largest ``n`` asked for
it), then kept in memory: ``record`` appends each judgement's own values after it is judged,
so the per-batch cost does not grow with the stored history. Another dataset's series are
read again at every judgement (its job writes them). A store that cannot be read gives the error in place of the values; the
expression naming it then fails with that reason, the stream goes on. Without a store every
history is empty (``previous(...)`` is ``null``). Values of the batch being judged are not
history: the store is read before the batch commits.

Example::

    >>> from streamdq.state.memory_store import InMemoryStateStore
    >>> from streamdq.checks.check import Check, Level
    >>> c = Check(Level.ERROR, "c").expression("stable", 'previous("Size") == null')
    >>> ExpressionHistory(InMemoryStateStore(), "orders", [c], []).prefetch("batch")
    {HistoryRef(dataset=None, name='Size', n=1): []}
"""

from __future__ import annotations

import json
import logging
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from streamdq.analyzers.base import Analyzer
from streamdq.analyzers.metric import Metric
from streamdq.analyzers.register import analyzer_from_spec
from streamdq.checks.expression import HistoryRef
from streamdq.checks.expression_kind import expression_history_refs, metric_key
from streamdq.report import SCOPES

log = logging.getLogger(__name__)

MEASURE_ENTITY = "Measure"  # the metrics table's entity of SQL measures (state/records.py)


def row_metric_key(name: str, instance: str, analyzer_key: str) -> str:
    """The expression key of a stored metric row (counters without an analyzer: ``Name``)."""
    if analyzer_key and analyzer_key.startswith("{"):
        try:
            return metric_key(analyzer_from_spec(json.loads(analyzer_key)))
        except Exception:  # an analyzer this process does not know: fall back to the row's names
            pass
    return name if instance in ("*", "") else f"{name}({instance})"


class ExpressionHistory:
    """Prefetches, per scope, the history the expressions of ``checks`` read (module docstring)."""

    def __init__(self, store: Any, dataset: str, checks: Sequence[Any], measure_names: Iterable[str]) -> None:
        self.store = store
        self.dataset = dataset
        self.measure_names = set(measure_names)
        self.refs = {scope: expression_history_refs(checks, scope) for scope in SCOPES}
        self.all_refs = expression_history_refs(checks)
        # this dataset's series (scope, name) -> the last values, kept by ``record`` after the
        # first read, so a long-running job reads the store once per series, not every batch
        self.keep: dict[tuple[str, str], int] = {}
        for scope, refs in self.refs.items():
            for ref in refs:
                if ref.dataset is None:
                    key = (scope, ref.name)
                    self.keep[key] = max(self.keep.get(key, 0), ref.n)
        self._cache: dict[tuple[str, str], deque[Any]] = {}
        self._keys: dict[Analyzer, str] = {}

    def __bool__(self) -> bool:
        return any(self.refs.values())

    def prefetch(self, scope: str, *, every_expression: bool = False) -> dict[HistoryRef, Any]:
        """``HistoryRef`` -> values (oldest first) or the read error, for ``scope``'s expressions
        (``every_expression``: for all expressions, read at ``scope``: ``verify``'s one table)."""
        out: dict[HistoryRef, Any] = {}
        refs = self.refs.get(scope, ()) if not every_expression else self.all_refs
        for ref in refs:
            key = (scope, ref.name)
            if ref.dataset is None and key in self._cache and not every_expression:
                out[ref] = list(self._cache[key])[-ref.n :]
                continue
            try:
                if ref.dataset is None and key in self.keep and not every_expression:
                    wanted = HistoryRef(None, ref.name, self.keep[key])
                    self._cache[key] = deque(self.read(wanted, scope), maxlen=self.keep[key])
                    out[ref] = list(self._cache[key])[-ref.n :]
                    continue
                out[ref] = self.read(ref, scope)
            except Exception as exc:  # never stops the stream: the expression fails with the reason
                log.warning(
                    "history of %s (%s) could not be read: %s", ref.name, ref.dataset or self.dataset, exc
                )
                out[ref] = RuntimeError(f"history of {ref.name!r} could not be read: {exc}")
        return out

    def record(self, scope: str, measures: Iterable[Any], metrics: Mapping[Analyzer, Metric]) -> None:
        """After a judgement at ``scope``: its successful values join the cached series (the
        next judgement's history), as the store will hold them once the batch commits."""
        values: dict[str, Any] = {m.name: m.value for m in measures if getattr(m, "failure", None) is None}
        for analyzer, metric in metrics.items():
            if metric.ok:
                key = self._keys.get(analyzer)
                if key is None:
                    key = self._keys[analyzer] = metric_key(analyzer)
                values.setdefault(key, metric.value)
        for (cached_scope, name), series in self._cache.items():
            if cached_scope == scope and name in values and values[name] is not None:
                value = values[name]
                series.append(list(value) if isinstance(value, tuple) else value)

    def read(self, ref: HistoryRef, scope: str) -> list[Any]:
        if self.store is None:
            return []
        dataset = ref.dataset or self.dataset
        if ref.dataset is None and ref.name in self.measure_names:
            return self._measure(dataset, ref, scope)
        if ref.dataset is not None:
            found = self._measure(dataset, ref, scope)
            if found:
                return found
        return self._metric(dataset, ref, scope)

    def _measure(self, dataset: str, ref: HistoryRef, scope: str) -> list[Any]:
        from streamdq.state.measure_history import measure_history

        return list(measure_history(self.store, dataset, ref.name, ref.n, scope=scope))

    def _metric(self, dataset: str, ref: HistoryRef, scope: str) -> list[Any]:
        name = ref.name.split("(", 1)[0].strip()
        rows = self.store.history(dataset, name, scope=scope)
        values: list[Any] = []
        for r in rows.to_pylist():
            if r.get("entity") == MEASURE_ENTITY or r.get("failure") is not None:
                continue
            if scope == "window" and r.get("open"):
                continue
            if row_metric_key(r["name"], r.get("instance") or "", r.get("analyzer_key") or "") != ref.name:
                continue
            value = r.get("value")
            if value is None and r.get("value_json"):
                value = json.loads(r["value_json"])
            if value is not None:
                values.append(value)
        return values[-ref.n :]
