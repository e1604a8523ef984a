"""Which aggregation a name in a config means: built-ins, entry points, ``module:Class``.

A check file names an aggregation in one of three ways (docs/aggregations.md):

* a registered name: the built-ins (``register_builtins``: ``discreteValuesHistogram``,
  ``uniqueValues``, ``numericHistogram``, ``average``, ``standardDeviation``, ``median``), names
  registered in code (``registry().register(MyAgg)``), and the entry points of the group
  ``streamdq.aggregations`` of installed distributions (``load_entry_points``; an entry point
  ``myAgg = mypkg.mod:MyAgg`` is found as ``myAgg`` and loaded when first resolved);
* ``module:Class`` (``mypkg.aggs:MyAgg``): the module is imported and the class checked
  against the contract when the config is loaded.

Nothing is registered by importing a module: ``registry()`` returns the process-wide registry
after calling ``register_builtins()`` and ``load_entry_points()`` on it once (explicit calls;
a fresh ``AggregationRegistry()`` is empty). Resolving (the engine, the config check, the query
service using the class) registers its state type (``register_state``), so stored bytes of it
load wherever the name resolves; registering a name only checks the class.

Every mistake raises ``AggregationLoadError`` (a ``ValueError``) naming the reference and what
is wrong: a missing module, a missing attribute, not a class, not an ``Aggregation``, no
``TYPE_TAG``, no way to build a state, a tag already used by another class.

>>> reg = AggregationRegistry()
>>> reg.register_builtins()
>>> reg.resolve("average").metric_name()
'average'
>>> reg.resolve("no.such.module:Agg")
Traceback (most recent call last):
...
streamdq.analyzers.aggregation_registry.AggregationLoadError: aggregation 'no.such.module:Agg': cannot import module 'no.such.module' (No module named 'no')
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.metadata
import inspect
import threading
from typing import Any

from streamdq.analyzers.aggregation import INPUT_TYPES, Aggregation
from streamdq.analyzers.state import JsonState, StateTagTaken, register_state, state_types
from streamdq.errors import StreamdqError

ENTRY_POINT_GROUP = "streamdq.aggregations"


class AggregationLoadError(StreamdqError, ValueError):
    """An aggregation reference that does not resolve to a class implementing the contract."""


def contract_problems(cls: Any) -> list[str]:
    """What keeps ``cls`` from being an aggregation (empty when it is one)."""
    if not inspect.isclass(cls):
        return [f"{cls!r} is a {type(cls).__name__}, not a class"]
    if not issubclass(cls, Aggregation):
        return [f"class {cls.__qualname__} does not subclass streamdq.aggregations.Aggregation"]
    problems = []
    tag = getattr(cls, "TYPE_TAG", None)
    if not isinstance(tag, str) or not tag:
        problems.append(f"{cls.__qualname__} has no TYPE_TAG (a unique string naming its bytes)")
    if inspect.isabstract(cls):
        missing = ", ".join(sorted(cls.__abstractmethods__))
        problems.append(f"{cls.__qualname__} does not implement {missing}")
    if not cls.has_arrow_form() and not cls.has_spark_form():
        problems.append(
            f"{cls.__qualname__} cannot be built from a batch: define from_arrow, or "
            "spark_aggregations and from_spark"
        )
    if not dataclasses.is_dataclass(cls) and (
        cls.payload is JsonState.payload or cls.from_payload.__func__ is JsonState.from_payload.__func__  # type: ignore[attr-defined]
    ):
        problems.append(
            f"{cls.__qualname__} is not a dataclass: define payload() and from_payload() (its bytes), "
            "or make it a frozen dataclass (canonical JSON of its fields)"
        )
    if cls.value is Aggregation.value:
        problems.append(f"{cls.__qualname__} defines no value() (the metric value of a state)")
    if not isinstance(cls.combinable, bool):
        problems.append(f"{cls.__qualname__}.combinable is {cls.combinable!r}, expected True or False")
    if cls.input_type not in INPUT_TYPES:
        problems.append(f"{cls.__qualname__}.input_type is {cls.input_type!r}, expected one of {INPUT_TYPES}")
    version = getattr(cls, "FORMAT_VERSION", None)
    if isinstance(version, bool) or not isinstance(version, int) or not 1 <= version <= 65535:
        problems.append(f"{cls.__qualname__}.FORMAT_VERSION is {version!r}, expected an integer 1..65535")
    return problems


class AggregationRegistry:
    """Aggregation classes by name, plus ``module:Class`` references (see the module doc)."""

    def __init__(self) -> None:
        self._classes: dict[str, type[Aggregation]] = {}
        self._entry_points: dict[str, importlib.metadata.EntryPoint] = {}
        self._lock = threading.Lock()

    def register(self, cls: type[Aggregation], name: str | None = None) -> type[Aggregation]:
        """Add ``cls`` under ``name`` (default its metric name); ``AggregationLoadError`` if it
        breaks the contract or the name is taken by another class."""
        checked = _checked(cls, f"{cls!r}")
        key = name or checked.metric_name()
        with self._lock:
            if self._classes.get(key, checked) is not checked:
                raise AggregationLoadError(f"aggregation name {key!r} is already registered")
            self._classes[key] = checked
        return checked

    def register_builtins(self) -> None:
        """Add the library of built-in aggregations (CDAP's: histograms, unique values, moments, median)."""
        # the library sits above the analyzers (it subclasses this package's Aggregation): imported
        # here, by the explicit call, so that importing the analyzers never imports it
        from streamdq.aggregations.builtins import BUILTINS

        for cls in BUILTINS:
            self.register(cls)

    def load_entry_points(self, group: str = ENTRY_POINT_GROUP) -> list[str]:
        """Find the entry points of ``group`` (loaded when first resolved); returns their names."""
        found = importlib.metadata.entry_points(group=group)
        with self._lock:
            for ep in found:
                self._entry_points.setdefault(ep.name, ep)
        return sorted(ep.name for ep in found)

    def names(self) -> list[str]:
        """Every registered name (entry points included, not yet loaded)."""
        return sorted(set(self._classes) | set(self._entry_points))

    def classes(self) -> dict[str, type[Aggregation]]:
        """Every registered name resolved to its class (for suites that must cover them all)."""
        return {name: self.resolve(name) for name in self.names()}

    def resolve(self, reference: str) -> type[Aggregation]:
        """The class a config reference names: a registered name or ``module:Class``."""
        if not isinstance(reference, str) or not reference.strip():
            raise AggregationLoadError(f"aggregation {reference!r}: expected a name or 'module:Class'")
        cls = self._classes.get(reference)
        if cls is not None:
            return _with_state_type(cls, reference)
        ep = self._entry_points.get(reference)
        if ep is not None:
            where = f"entry point {reference!r} ({ep.value}) of group {ep.group}"
            try:
                loaded = ep.load()
            except Exception as exc:
                raise AggregationLoadError(f"aggregation {where}: cannot load it ({exc})") from None
            cls = _checked(loaded, where)
            with self._lock:
                self._classes.setdefault(reference, cls)
            return _with_state_type(cls, where)
        if ":" not in reference:
            known = ", ".join(self.names()) or "none"
            raise AggregationLoadError(
                f"aggregation {reference!r} is not registered (registered: {known}); "
                "name a registered one, or a class as 'module:Class'"
            )
        return _with_state_type(_checked(load_class(reference), f"{reference!r}"), f"{reference!r}")


def load_class(reference: str) -> Any:
    """The object ``module:attr`` names (dotted attributes allowed after the colon)."""
    module_name, _, attr = reference.partition(":")
    where = f"aggregation {reference!r}"
    if not module_name or not attr:
        raise AggregationLoadError(f"{where}: expected 'module:Class', e.g. 'mypkg.aggs:MyAggregation'")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise AggregationLoadError(f"{where}: cannot import module {module_name!r} ({exc})") from None
    except Exception as exc:  # the module itself raised while importing
        raise AggregationLoadError(
            f"{where}: importing module {module_name!r} raised {type(exc).__name__}: {exc}"
        ) from None
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise AggregationLoadError(f"{where}: module {module_name!r} has no attribute {attr!r}")
        obj = getattr(obj, part)
    return obj


def _checked(obj: Any, where: str) -> type[Aggregation]:
    problems = contract_problems(obj)
    if problems:
        raise AggregationLoadError(f"aggregation {where}: " + "; ".join(problems))
    checked: type[Aggregation] = obj
    return checked


def _with_state_type(cls: type[Aggregation], where: str) -> type[Aggregation]:
    """``cls`` after registering its state type (so stored bytes of it load), unless its tag is another's."""
    try:
        register_state(cls)
    except StateTagTaken:
        owner = state_types()[cls.TYPE_TAG]
        raise AggregationLoadError(
            f"aggregation {where}: TYPE_TAG {cls.TYPE_TAG!r} is already the tag of "
            f"{owner.__module__}.{owner.__qualname__}; choose a unique tag"
        ) from None
    return cls


_DEFAULT: AggregationRegistry | None = None
_DEFAULT_LOCK = threading.Lock()


def registry() -> AggregationRegistry:
    """The process-wide registry, with the built-ins and the installed entry points."""
    global _DEFAULT
    with _DEFAULT_LOCK:
        if _DEFAULT is None:
            reg = AggregationRegistry()
            reg.register_builtins()
            reg.load_entry_points()
            _DEFAULT = reg
        return _DEFAULT


def resolve(reference: str) -> type[Aggregation]:
    """``registry().resolve(reference)``."""
    return registry().resolve(reference)


__all__ = [
    "ENTRY_POINT_GROUP",
    "AggregationLoadError",
    "AggregationRegistry",
    "contract_problems",
    "load_class",
    "registry",
    "resolve",
]
