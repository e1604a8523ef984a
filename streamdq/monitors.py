"""Window monitors: judges that learn from the series of closed windows (DESIGN.md §1, [6]).

A ``WindowMonitor`` watches every closed event-time window of one dataset, as the
handler closes it, with ALL of that window's metrics and states: the table-level quality
score and the programs learned by auto-validation are monitors. The handler (on the
driver, inside ``foreachBatch``):

* adds ``analyzers()`` to its plan, so what a monitor needs is computed in the same fused
  pass as the checks' analyzers;
* calls ``observe(window, seq, metrics, states)`` once per closed window, in window
  order; ``seq`` (window start // window length) strictly increases, and a monitor must
  ignore a ``seq`` it has already seen (replay safety);
* publishes the returned metrics at window scope and puts the returned check results and
  anomalies into the ``BatchReport``, so they flow through the alert policy and every sink
  like those of hand-written checks;
* persists ``dump_state()`` with every batch commit (detectors table, key
  ``monitor:<key>``) and hands it to ``load_state`` after a restart.

A monitor never stops the stream: an exception in ``observe`` is logged and the window
is reported without that monitor's output.

Monitors are found by the run config's top-level key, as sinks are by ``type``: a
``MonitorRegistry`` maps the key (``auto_validate``, ``quality_score``) to a factory
``(section, dataset) -> WindowMonitor | None`` that validates the section (raising
``ConfigError`` naming ``<key>.<field>``) and builds the monitor. Nothing is registered by
importing a module: ``streamdq.register.register_builtins()`` adds the built-ins to
``MONITORS`` (the engine calls it), and ``MONITORS.register`` adds one in code. This module is
neutral ground: the engine and the monitors' packages both import it, it imports neither.

A monitor that must compute states of frames of its own (auto-validation profiles corrupted
samples when it learns) says so with ``use_analysis(analysis)`` (``UsesAnalysis``): the engine
hands it a ``SegmentedAnalysis``, its plan's segmented run, when it builds the monitors
(``build_all(..., analysis=...)``), so the monitor reaches the engine only through that function.

>>> reg = MonitorRegistry()
>>> reg.register("never", lambda section, dataset: None)
>>> reg.keys()
('never',)
>>> reg.build_all({"never": {}}, "orders")
[]
>>> reg.build_all({"other": {}}, "orders")
[]
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from streamdq.analyzers.base import Analyzer
from streamdq.analyzers.metric import Metric
from streamdq.analyzers.state import State
from streamdq.report import Anomaly, CheckResult, Window

MONITOR_KEY_PREFIX = "monitor:"


@dataclass(frozen=True)
class MonitorOutput:
    """What a monitor says about one closed window."""

    metrics: tuple[Metric, ...] = ()
    check_results: tuple[CheckResult, ...] = ()
    anomalies: tuple[Anomaly, ...] = ()


class WindowMonitor(Protocol):
    """A judge of closed windows with explicit, persisted state."""

    key: str

    def analyzers(self) -> Sequence[Analyzer]: ...

    def observe(
        self, window: Window, seq: int, metrics: Mapping[Analyzer, Metric], states: Mapping[str, State]
    ) -> MonitorOutput: ...

    def dump_state(self) -> bytes: ...

    def load_state(self, blob: bytes) -> None: ...


class SegmentedAnalysis(Protocol):
    """The engine's analysis of one frame grouped by a segment column, handed to the monitors
    that need it (``UsesAnalysis``): ``analysis(analyzers, df, segment, max_groups=...)`` runs
    ``analyzers`` over the Spark frame ``df`` once, grouped by the Spark column ``segment``, and
    returns ``(states, failures)``: ``states[value]`` holds each analyzer's state on the rows whose
    segment is ``value`` (a value without rows has no entry), ``failures`` the analyzers that
    could not be computed, with the reason. ``streamdq.engine.monitor.analyze_segments`` is the
    engine's."""

    def __call__(
        self, analyzers: Sequence[Analyzer], df: Any, segment: Any, *, max_groups: int = ...
    ) -> tuple[dict[Any, dict[Analyzer, State]], dict[Analyzer, str]]: ...


@runtime_checkable
class UsesAnalysis(Protocol):
    """A monitor that computes states of frames of its own takes the engine's analysis here
    (``MonitorRegistry.build_all(..., analysis=)`` calls it once, after the factory)."""

    def use_analysis(self, analysis: SegmentedAnalysis) -> None: ...


MonitorFactory = Callable[[Any, str], WindowMonitor | None]
"""``(raw config section, dataset) -> monitor``; None when the section asks for none; raises
``ConfigError`` naming ``<key>.<field>`` on a mistake."""


class MonitorRegistry:
    """Run-config key -> monitor factory, in registration order (the order monitors run in)."""

    def __init__(self) -> None:
        self._factories: dict[str, MonitorFactory] = {}
        self._lock = threading.Lock()

    def register(self, key: str, factory: MonitorFactory) -> None:
        """Add (or replace) the factory of the config key ``key``."""
        with self._lock:
            self._factories[key] = factory

    def unregister(self, key: str) -> None:
        """Forget ``key`` (no error when it is not registered)."""
        with self._lock:
            self._factories.pop(key, None)

    def keys(self) -> tuple[str, ...]:
        """The registered config keys, in registration order."""
        with self._lock:
            return tuple(self._factories)

    def build_all(
        self, sections: Mapping[str, Any], dataset: str, *, analysis: SegmentedAnalysis | None = None
    ) -> list[WindowMonitor]:
        """The monitors for the registered keys present in ``sections`` (a key absent or None
        builds nothing; keys not registered are not this registry's business). With
        ``analysis``, each monitor that ``UsesAnalysis`` is handed it."""
        with self._lock:
            factories = list(self._factories.items())
        monitors: list[WindowMonitor] = []
        for key, factory in factories:
            section = sections.get(key)
            if section is None:
                continue
            monitor = factory(section, dataset)
            if monitor is None:
                continue
            if analysis is not None and isinstance(monitor, UsesAnalysis):
                monitor.use_analysis(analysis)
            monitors.append(monitor)
        return monitors


MONITORS = MonitorRegistry()
"""The process-wide registry the engine reads; empty until ``register_builtins()``."""
