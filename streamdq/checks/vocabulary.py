"""The vocabulary of constraint kinds: what a kind is (``ConstraintKind``, ``Param``) and the
registry of kinds by name.

A ``ConstraintKind`` says which parameters a kind takes, which analyzer computes its metric
(``analyzer(params, where)``), which number of the metric the assertion judges
(``value(params, metric)``, may raise: a missing histogram key) and its default assertion
(None = the assertion is required). ``register_constraint_kind`` adds one.

Nothing is registered by importing a module: the built-in vocabulary is added by
``streamdq.checks.register.register_builtins()``, which ``Constraint.create`` and the spec
loader call before they look a kind up (explicit and idempotent). This module holds the registry
only, so the modules that define kinds import it and nothing above it.

>>> kind = ConstraintKind("row_count_example", (), lambda params, where: None)
>>> kind.name, kind.param("missing")
('row_count_example', None)
>>> did_you_mean("is_complet", ["is_complete", "is_unique"])
"; did you mean 'is_complete'?"
"""

from __future__ import annotations

import difflib
import json
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from streamdq.analyzers.base import Analyzer
from streamdq.analyzers.metric import Metric
from streamdq.checks.assertion import IS_ONE, Assertion
from streamdq.errors import InvalidArgument, StreamdqError, UnknownName

if TYPE_CHECKING:
    from streamdq.checks.constraint import Constraint

# -- parameters -------------------------------------------------------------------------

PARAM_TYPES = {
    "column": "a column name (non-empty string)",
    "columns": "a non-empty list of column names",
    "string": "a non-empty string",
    "number": "a number",
    "fraction": "a number between 0 and 1",
    "int": "an integer",
    "bool": "true or false",
    "values": "a list of allowed values (strings or numbers)",
    "mapping": "a mapping",
    "choice": "one of the listed choices",
}


@dataclass(frozen=True)
class Param:
    """One parameter of a constraint kind: name, type (a key of ``PARAM_TYPES``), default."""

    name: str
    type: str
    required: bool = True
    default: Any = None
    doc: str = ""
    choices: tuple[str, ...] = ()

    def expectation(self) -> str:
        if self.type == "choice":
            return "one of " + ", ".join(repr(c) for c in self.choices)
        what = PARAM_TYPES[self.type]
        return f"{what} ({self.doc})" if self.doc else what


def _convert(param: Param, value: Any) -> Any:
    """The canonical form of ``value`` for ``param``; raises ValueError when it does not fit."""
    t = param.type
    if t in ("column", "string"):
        if not isinstance(value, str) or not value:
            raise ValueError
        return value
    if t == "columns":
        if isinstance(value, str) and value:
            return [value]
        if not isinstance(value, list | tuple) or not value:
            raise ValueError
        if not all(isinstance(v, str) and v for v in value):
            raise ValueError
        return list(value)
    if t in ("number", "fraction"):
        if isinstance(value, str):  # YAML 1.1 reads 1e-3 (no dot) as a string
            value = float(value.strip())
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError
        x = float(value)
        if math.isnan(x) or (t == "fraction" and not 0.0 <= x <= 1.0):
            raise ValueError
        return x
    if t == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError
        return value
    if t == "bool":
        if not isinstance(value, bool):
            raise ValueError
        return value
    if t == "values":
        if not isinstance(value, list | tuple):
            raise ValueError
        if not all(isinstance(v, str | int | float) and not isinstance(v, bool) for v in value):
            raise ValueError
        return list(value)
    if t == "mapping":
        if not isinstance(value, Mapping):
            raise ValueError
        return json.loads(json.dumps(dict(value)))  # a deep, JSON-clean copy
    if t == "choice":
        if value not in param.choices:
            raise ValueError
        return value
    raise AssertionError(f"unknown parameter type {t!r}")


class Params(Mapping[str, Any]):
    """Immutable, hashable parameters of a constraint (canonical JSON decides equality)."""

    __slots__ = ("_data", "_key")

    def __init__(self, data: Mapping[str, Any]) -> None:
        self._data = json.loads(json.dumps(dict(data)))
        self._key = json.dumps(self._data, sort_keys=True, separators=(",", ":"))

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __hash__(self) -> int:
        return hash(self._key)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Params):
            return self._key == other._key
        if isinstance(other, Mapping):
            return self._data == dict(other)
        return NotImplemented

    def __repr__(self) -> str:
        return f"Params({self._data!r})"

    def canonical(self) -> str:
        return self._key

    def to_dict(self) -> dict[str, Any]:
        return json.loads(self._key)


# -- kinds ------------------------------------------------------------------------------


def scalar_value(params: Mapping[str, Any], metric: Metric) -> Any:
    """The metric's float value (the default thing an assertion judges)."""
    v = metric.value
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise InvalidArgument(f"metric {metric.name} is not a number: {v!r}")
    return float(v)


Evaluator = Callable[
    ["Constraint", "Metric | None", Mapping[str, Any]], tuple[str, str | None] | tuple[str, str | None, Any]
]
"""``(constraint, metric, context) -> (status, message)`` or ``(status, message, verdict)``: the
verdict (e.g. a detector's) lands in ``ConstraintResult.verdict``, returned, not kept aside."""


@dataclass(frozen=True)
class ConstraintKind:
    """How to compute and judge one kind of constraint (see module docstring)."""

    name: str
    params: tuple[Param, ...]
    analyzer: Callable[[Mapping[str, Any], str | None], Analyzer]
    value: Callable[[Mapping[str, Any], Metric], Any] = scalar_value
    default_assertion: Assertion | None = IS_ONE
    doc: str = ""
    validate: Callable[[Mapping[str, Any]], tuple[str, str] | None] | None = None
    """Cross-parameter check: None when fine, else ``(key, expectation)``."""
    validate_assertion: Callable[[Mapping[str, Any], Assertion], str | None] | None = None
    """Checks the assertion against the parameters: None when fine, else the expectation."""
    evaluate: Evaluator | None = None
    """Replaces metric + assertion evaluation (returns status and message)."""
    takes_assertion: bool = True
    needs_metric: bool = True
    """False: the kind judges no metric of its own analyzer (``expression``: its evaluator reads
    the scope's metrics from ``context["metrics_by_analyzer"]``); its results carry no metric."""
    example: str = ""
    """A doctest-style snippet (``>>>`` lines and their output) showing the kind at work without
    Spark: the constraint built from its check-file form, the analyzer it asks for, and its
    judgement of a hand-made metric (``c.analyzer.ok(value)``). It runs with
    ``constraint_from_dict`` (``streamdq.checks.spec``), ``Distribution`` and ``Quantiles``
    (``streamdq.metric``) in scope; every built-in kind has one, and
    tests/unit/test_doctests_constraint_kinds.py runs them all."""

    def param(self, name: str) -> Param | None:
        for p in self.params:
            if p.name == name:
                return p
        return None


_KINDS: dict[str, ConstraintKind] = {}


class ConstraintKindTaken(StreamdqError, ValueError):
    """``register_constraint_kind`` of a kind under a name already registered (without ``replace``)."""


COMMON_KEYS = ("assertion", "where", "hint", "scope")


def register_constraint_kind(kind: ConstraintKind, *, replace: bool = False) -> ConstraintKind:
    """Add a constraint kind to the vocabulary (``replace=True`` to override an existing one)."""
    if kind.name in _KINDS and not replace:
        raise ConstraintKindTaken(f"constraint kind {kind.name!r} is already registered")
    clash = {p.name for p in kind.params} & set(COMMON_KEYS)
    if clash:
        raise InvalidArgument(f"constraint kind {kind.name!r}: parameter names {sorted(clash)} are reserved")
    _KINDS[kind.name] = kind
    return kind


def unregister_constraint_kind(name: str) -> ConstraintKind | None:
    """Remove the kind ``name`` from the vocabulary and return it (None, and nothing changes,
    when no kind has that name). Meant for code that registers a kind for a while, a test
    fixture say, and must leave the vocabulary as it found it: a built-in it replaced goes back
    with ``register_constraint_kind(old, replace=True)``. A built-in removed stays removed for
    the process (the built-ins are registered once)."""
    return _KINDS.pop(name, None)


def constraint_kind(name: str) -> ConstraintKind:
    """The kind registered as ``name``; else ``UnknownName`` (a ``StreamdqError`` and a
    ``KeyError``) with a did-you-mean and the known kinds. Registers nothing
    (``streamdq.checks.constraint.constraint_kind`` adds the built-ins first)."""
    kind = _KINDS.get(name) if isinstance(name, str) else None
    if kind is None:
        raise UnknownName("constraint", name, _KINDS)
    return kind


def constraint_kinds() -> dict[str, ConstraintKind]:
    """The kinds registered so far, by name (a copy)."""
    return dict(_KINDS)


def did_you_mean(name: str, options: Sequence[str] | None = None) -> str:
    opts = list(options) if options is not None else list(_KINDS)
    close = difflib.get_close_matches(name, opts, n=1, cutoff=0.5)
    return f"; did you mean {close[0]!r}?" if close else ""
