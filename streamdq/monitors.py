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

A section is parsed once, at load, as the rest of the run config is: a monitor registered with
``parse=`` (the built-ins) has its section turned into a frozen settings value by
``parse(section)`` (``parse_all`` gives a ``MonitorSpec`` per key present) and the factory
builds the monitor from those settings, ``(settings, dataset) -> WindowMonitor | None``, without
validating again (``build``). A monitor registered without a parser is validated by building it
(its factory takes the raw section): ``parse_all`` builds it once to learn its mistakes, and the
engine builds it again.

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
>>> reg.register("twice", lambda settings, dataset: None, parse=lambda section: int(section["n"]))
>>> reg.parse_all({"twice": {"n": "2"}, "never": None})
(MonitorSpec(key='twice', settings=2, parsed=True),)
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from streamdq.analyzers.base import Analyzer
from streamdq.analyzers.metric import Metric
from streamdq.analyzers.state import State
from streamdq.errors import ErrorCollector
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
"""``(settings, dataset) -> monitor``: ``settings`` is what the key's parser made of the section,
or the raw section when the key has no parser (then the factory validates it, raising
``ConfigError`` naming ``<key>.<field>`` on a mistake); None when the section asks for none."""

MonitorParser = Callable[[Any], Any]
"""``(raw config section) -> settings`` (a frozen value); raises ``ConfigError`` naming
``<key>.<field>`` on a mistake. Starts nothing, builds no monitor."""


@dataclass(frozen=True)
class MonitorSpec:
    """One monitor section of a run config, parsed: its ``key`` and ``settings`` (the parser's
    value; the raw section when ``parsed`` is False, the key having no parser)."""

    key: str
    settings: Any
    parsed: bool = True


class MonitorRegistry:
    """Run-config key -> monitor factory (and parser), in registration order (the order
    monitors run in)."""

    def __init__(self) -> None:
        self._factories: dict[str, MonitorFactory] = {}
        self._parsers: dict[str, MonitorParser] = {}
        self._lock = threading.Lock()

    def register(self, key: str, factory: MonitorFactory, *, parse: MonitorParser | None = None) -> None:
        """Add (or replace) the factory of the config key ``key``; with ``parse``, the factory
        takes the parsed settings instead of the raw section."""
        with self._lock:
            self._factories[key] = factory
            if parse is None:
                self._parsers.pop(key, None)
            else:
                self._parsers[key] = parse

    def unregister(self, key: str) -> None:
        """Forget ``key`` (no error when it is not registered)."""
        with self._lock:
            self._factories.pop(key, None)
            self._parsers.pop(key, None)

    def keys(self) -> tuple[str, ...]:
        """The registered config keys, in registration order."""
        with self._lock:
            return tuple(self._factories)

    def parse_all(self, sections: Mapping[str, Any], dataset: str = "") -> tuple[MonitorSpec, ...]:
        """A ``MonitorSpec`` per registered key present in ``sections`` (absent or None: none),
        in registration order; the mistakes of every section are raised at once
        (``ConfigErrors``). A key without a parser is validated by building its monitor for
        ``dataset`` (then thrown away)."""
        with self._lock:
            entries = [(k, f, self._parsers.get(k)) for k, f in self._factories.items()]
        errs = ErrorCollector()
        specs: list[MonitorSpec] = []
        for key, factory, parse in entries:
            section = sections.get(key)
            if section is None:
                continue
            with errs.catch():
                if parse is not None:
                    specs.append(MonitorSpec(key, parse(section)))
                else:
                    factory(section, dataset)  # no parser: its factory is its validation
                    specs.append(MonitorSpec(key, section, parsed=False))
        errs.raise_if_any()
        return tuple(specs)

    def build(
        self, specs: Sequence[MonitorSpec], dataset: str, *, analysis: SegmentedAnalysis | None = None
    ) -> list[WindowMonitor]:
        """The monitors of parsed ``specs`` (in their order), each built once by its key's
        factory; a key no longer registered builds nothing. With ``analysis``, each monitor that
        ``UsesAnalysis`` is handed it."""
        with self._lock:
            factories = dict(self._factories)
        monitors: list[WindowMonitor] = []
        for spec in specs:
            factory = factories.get(spec.key)
            if factory is None:
                continue
            monitor = factory(spec.settings, dataset)
            if monitor is None:
                continue
            if analysis is not None and isinstance(monitor, UsesAnalysis):
                monitor.use_analysis(analysis)
            monitors.append(monitor)
        return monitors

    def build_all(
        self, sections: Mapping[str, Any], dataset: str, *, analysis: SegmentedAnalysis | None = None
    ) -> list[WindowMonitor]:
        """The monitors for the registered keys present in ``sections`` (a key absent or None
        builds nothing; keys not registered are not this registry's business): ``parse_all``
        then ``build``. With ``analysis``, each monitor that ``UsesAnalysis`` is handed it."""
        with self._lock:
            entries = [(k, f, self._parsers.get(k)) for k, f in self._factories.items()]
        specs = [
            MonitorSpec(k, parse(sections[k]) if parse is not None else sections[k], parse is not None)
            for k, _f, parse in entries
            if sections.get(k) is not None
        ]
        return self.build(specs, dataset, analysis=analysis)


MONITORS = MonitorRegistry()
"""The process-wide registry the engine reads; empty until ``register_builtins()``."""
