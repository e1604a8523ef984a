"""Register the built-in analyzers and state types, by explicit call (pandera's ``register.py``).

Importing an analyzer or state module registers nothing. ``register_builtins()`` adds every
built-in analyzer (``BUILTIN_ANALYZERS``, by ``NAME``) and state type (``BUILTIN_STATES``, by
``TYPE_TAG``) to the registries of ``streamdq.analyzers.base`` and ``streamdq.analyzers.state``,
once per process (idempotent and thread-safe). The look-ups here call it first, so callers never
need to:

* ``registered_analyzers()``, ``analyzer_class(name)`` and ``analyzer_from_spec(spec)`` (an
  analyzer from its ``to_spec()`` dict, e.g. the key of a stored state);
* ``registered_states()`` and ``state_from_bytes(data)`` (a stored state, by its tag).

User code registers its own with ``register_analyzer(cls)`` / ``register_state(cls)`` (plain
calls; a name or tag a built-in holds is refused once the built-ins are in). Aggregation
functions have their own registry (``streamdq.analyzers.aggregation_registry``), which registers
an aggregation's state type when its name is resolved.

The module sits above every built-in analyzer module (it imports them), so nothing in
``streamdq.analyzers`` but the package itself imports it.

>>> from streamdq.analyzers.base import analyzer_types
>>> register_builtins()
>>> analyzer_from_spec({"analyzer": "Mean", "column": "price"})
Mean(column='price', where=None)
>>> "Mean" in analyzer_types() and "Sum" in registered_states()
True
>>> state_from_bytes(registered_states()["Sum"](2.5).to_bytes())
SumState(total=2.5, n=0)
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Mapping
from typing import Any

from streamdq.analyzers.approx_count_distinct import ApproxCountDistinct
from streamdq.analyzers.approx_quantile import ApproxQuantile, ApproxQuantiles
from streamdq.analyzers.base import ANALYZER_CLASSES, Analyzer, AnalyzerNameTaken, analyzer_types
from streamdq.analyzers.basic_states import (
    CoMomentsState,
    MaxState,
    MinState,
    MomentsState,
    NumMatches,
    NumMatchesAndCount,
    SumState,
)
from streamdq.analyzers.column_count import ColumnCount, ColumnCountState
from streamdq.analyzers.completeness import Completeness
from streamdq.analyzers.compliance import Compliance
from streamdq.analyzers.correlation import Correlation
from streamdq.analyzers.count_distinct import CountDistinct
from streamdq.analyzers.data_type import DataType, DataTypeState
from streamdq.analyzers.distinctness import Distinctness
from streamdq.analyzers.duplicate_row_count import DuplicateRowCount
from streamdq.analyzers.entropy import Entropy
from streamdq.analyzers.exact_quantile import ExactQuantile, ExactQuantileState
from streamdq.analyzers.frequency import FrequencyState
from streamdq.analyzers.histogram import Histogram
from streamdq.analyzers.interquartile_range import InterquartileRange
from streamdq.analyzers.kurtosis import Kurtosis
from streamdq.analyzers.max_length import MaxLength
from streamdq.analyzers.maximum import Maximum
from streamdq.analyzers.mean import Mean
from streamdq.analyzers.min_length import MinLength
from streamdq.analyzers.minimum import Minimum
from streamdq.analyzers.mutual_information import MutualInformation
from streamdq.analyzers.non_finite import NonFinite
from streamdq.analyzers.pattern_match import PatternMatch
from streamdq.analyzers.range import Range, RangeState
from streamdq.analyzers.ratio_of_sums import RatioOfSums, RatioOfSumsState
from streamdq.analyzers.size import Size
from streamdq.analyzers.sketch_states import HllState, KllState
from streamdq.analyzers.skewness import Skewness
from streamdq.analyzers.standard_deviation import StandardDeviation
from streamdq.analyzers.state import STATE_CLASSES, State, decode_state, state_types
from streamdq.analyzers.sum import Sum
from streamdq.analyzers.unique_value_ratio import UniqueValueRatio
from streamdq.analyzers.uniqueness import Uniqueness
from streamdq.analyzers.user_aggregation import AggregationAnalyzer
from streamdq.analyzers.variance import Variance
from streamdq.analyzers.zeros_count import ZerosCount
from streamdq.errors import ConfigError, UnknownName

BUILTIN_ANALYZERS: tuple[type[Analyzer], ...] = (
    AggregationAnalyzer,
    ApproxCountDistinct,
    ApproxQuantile,
    ApproxQuantiles,
    ColumnCount,
    Completeness,
    Compliance,
    Correlation,
    CountDistinct,
    DataType,
    Distinctness,
    DuplicateRowCount,
    Entropy,
    ExactQuantile,
    Histogram,
    InterquartileRange,
    Kurtosis,
    MaxLength,
    Maximum,
    Mean,
    MinLength,
    Minimum,
    MutualInformation,
    NonFinite,
    PatternMatch,
    Range,
    RatioOfSums,
    Size,
    Skewness,
    StandardDeviation,
    Sum,
    UniqueValueRatio,
    Uniqueness,
    Variance,
    ZerosCount,
)

# FrequencyState is the one tag of two concrete forms (ExactFrequencies, SampledFrequencies): its
# from_payload picks the form, so the abstract base is what the tag loads.
BUILTIN_STATES: tuple[type[State], ...] = (
    CoMomentsState,
    ColumnCountState,
    DataTypeState,
    ExactQuantileState,
    FrequencyState,
    HllState,
    KllState,
    MaxState,
    MinState,
    MomentsState,
    NumMatches,
    NumMatchesAndCount,
    RangeState,
    RatioOfSumsState,
    SumState,
)

_LOCK = threading.Lock()
_DONE = False


def register_builtins() -> None:
    """Add every built-in analyzer and state type to the registries (once; thread-safe)."""
    global _DONE
    if _DONE:  # the common path: no lock once done
        return
    with _LOCK:
        if _DONE:
            return
        taken = [
            *ANALYZER_CLASSES.register_all(BUILTIN_ANALYZERS),
            *STATE_CLASSES.register_all(BUILTIN_STATES),
        ]
        _DONE = True  # the look-ups work from now on, whatever was taken
    if taken:
        raise AnalyzerNameTaken(
            "built-ins shadowed by classes registered before them through analyzers.base or "
            f"analyzers.state ({'; '.join(taken)}): register with "
            "streamdq.analyzers.register.register_analyzer / register_state, which refuse a built-in's name"
        )


def register_analyzer(cls: type[Analyzer]) -> type[Analyzer]:
    """Register a user's analyzer class by its ``NAME`` (returns ``cls``), the built-ins first,
    so a name a built-in holds is refused (``AnalyzerNameTaken``) whenever it is called.
    Idempotent and thread-safe; ``unregister_analyzer`` undoes it."""
    register_builtins()
    return ANALYZER_CLASSES.register(cls)


def register_state(cls: type[State]) -> type[State]:
    """Register a user's state type by its ``TYPE_TAG`` (returns ``cls``), the built-ins first,
    so a tag a built-in holds is refused (``StateTagTaken``) whenever it is called."""
    register_builtins()
    return STATE_CLASSES.register(cls)


def registered_analyzers() -> dict[str, type[Analyzer]]:
    """Every registered analyzer class by name, the built-ins included (for suites that must
    cover them all)."""
    register_builtins()
    return analyzer_types()


def analyzer_class(name: str) -> type[Analyzer]:
    """The analyzer class registered under ``name`` (the built-ins registered first).

    An unknown name raises ``UnknownName`` (a ``StreamdqError`` and a ``KeyError``) whose message
    names it, a close known name if any, and every known one; ``.name`` and ``.known`` carry them.

    >>> analyzer_class("Mean").__name__
    'Mean'
    >>> try:
    ...     analyzer_class("Meen")
    ... except UnknownName as exc:
    ...     print(str(exc)[:45], "|", exc.name, "|", "Size" in exc.known)
    unknown analyzer 'Meen'; did you mean 'Mean'? | Meen | True
    """
    known = registered_analyzers()
    cls = known.get(name) if isinstance(name, str) else None
    if cls is None:
        raise UnknownName("analyzer", name, known)
    return cls


def _spec_value(value: Any) -> Any:
    """A spec value as an analyzer field holds it (JSON/YAML lists become tuples)."""
    return tuple(value) if isinstance(value, list) else value


def analyzer_from_spec(spec: Mapping[str, Any]) -> Analyzer:
    """The analyzer a ``to_spec`` dict names (lists become tuples).

    A spec without ``analyzer``, with a parameter the analyzer does not have, or without
    one it needs raises ``ConfigError`` whose ``key`` is that parameter; an unknown
    analyzer name raises ``UnknownName`` (``analyzer_class``; also a ``KeyError``) naming the
    known ones.

    >>> analyzer_from_spec({"analyzer": "Compliance", "name": "ok", "predicate": "x > 0"}).to_spec()
    {'analyzer': 'Compliance', 'name': 'ok', 'predicate': 'x > 0', 'columns': []}
    >>> try:
    ...     analyzer_from_spec({"analyzer": "Mean", "colum": "price"})
    ... except ConfigError as exc:
    ...     print(exc.key, "|", exc.problem, "|", exc.fix)
    colum | analyzer Mean: unknown parameters ['colum'] | use the parameters of Mean: column, where
    """
    data = dict(spec)
    if "analyzer" not in data:
        raise ConfigError("analyzer", f"missing in {spec!r}", "name the analyzer, e.g. analyzer: Mean")
    cls = analyzer_class(data.pop("analyzer"))
    fields = dataclasses.fields(cls)
    known = f"use the parameters of {cls.NAME}: {', '.join(f.name for f in fields)}"
    if data.keys() - {f.name for f in fields}:
        unknown = sorted(data.keys() - {f.name for f in fields})
        raise ConfigError(unknown[0], f"analyzer {cls.NAME}: unknown parameters {unknown}", known)
    kwargs = {f.name: _spec_value(data[f.name]) for f in fields if f.name in data}
    for f in fields:
        required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        if required and f.name not in kwargs:
            raise ConfigError(f.name, f"analyzer {cls.NAME}: missing parameter {f.name!r}", known)
    return cls(**kwargs)


def registered_states() -> dict[str, type[State]]:
    """Every registered state class by type tag, the built-ins included (and any aggregation
    resolved so far)."""
    register_builtins()
    return state_types()


def state_from_bytes(data: bytes) -> State:
    """Load any registered state (built-in, user or resolved aggregation) from ``to_bytes`` output;
    ``StateFormatError`` for bytes that are not a state, an unknown tag or a newer version."""
    register_builtins()
    return decode_state(data)


__all__ = [
    "BUILTIN_ANALYZERS",
    "BUILTIN_STATES",
    "analyzer_class",
    "analyzer_from_spec",
    "register_analyzer",
    "register_builtins",
    "register_state",
    "registered_analyzers",
    "registered_states",
    "state_from_bytes",
]
