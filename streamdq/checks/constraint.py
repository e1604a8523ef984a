"""Constraints as data, and the registry of constraint kinds.

A ``Constraint`` is ``kind`` (a registered ``ConstraintKind`` name such as
``has_completeness``) + ``params`` (validated, canonical) + ``assertion`` + optional
``where`` (Spark SQL, passed to the analyzer), ``hint`` and ``scope`` (``batch``, ``window``
or ``total``: which merged state the streaming runner judges it on). It is frozen and
hashable and round-trips through YAML/JSON (``to_spec``/``from_spec`` in ``spec.py``).

A ``ConstraintKind`` says which parameters a kind takes, which analyzer computes its metric
(``analyzer(params, where)``), which number of the metric the assertion judges
(``value(params, metric)``, may raise: a missing histogram key) and its default assertion
(None = the assertion is required). Other modules add kinds with
``register_constraint_kind`` (e.g. the detectors add the evaluator of ``has_no_anomalies``);
a kind with a custom ``evaluate`` receives the ``context`` mapping given to
``Check.evaluate`` (metric history, detector states...).

Evaluation (SEMANTICS.md, constraints) runs on the driver in pure Python:
metric missing or failed -> Failure, except a failure from an *empty state* when the
constraint has a ``where`` filter -> Success; a value that cannot be extracted or an
assertion that raises -> Failure; otherwise Success iff the assertion holds.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from streamdq.analyzers.base import Analyzer
from streamdq.analyzers.metric import Metric
from streamdq.checks.assertion import IS_ONE, Assertion, parse_assertion
from streamdq.errors import ConfigError
from streamdq.report import FAILURE, SCOPES, SUCCESS, ConstraintResult, Window

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
        raise ValueError(f"metric {metric.name} is not a number: {v!r}")
    return float(v)


Evaluator = Callable[["Constraint", "Metric | None", Mapping[str, Any]], tuple[str, str | None]]


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

    def param(self, name: str) -> Param | None:
        for p in self.params:
            if p.name == name:
                return p
        return None


_KINDS: dict[str, ConstraintKind] = {}

COMMON_KEYS = ("assertion", "where", "hint", "scope")


def register_constraint_kind(kind: ConstraintKind, *, replace: bool = False) -> ConstraintKind:
    """Add a constraint kind to the vocabulary (``replace=True`` to override an existing one)."""
    if kind.name in _KINDS and not replace:
        raise ValueError(f"constraint kind {kind.name!r} is already registered")
    clash = {p.name for p in kind.params} & set(COMMON_KEYS)
    if clash:
        raise ValueError(f"constraint kind {kind.name!r}: parameter names {sorted(clash)} are reserved")
    _KINDS[kind.name] = kind
    return kind


def constraint_kind(name: str) -> ConstraintKind:
    _ensure_vocabulary()
    try:
        return _KINDS[name]
    except KeyError:
        raise KeyError(f"unknown constraint {name!r}{did_you_mean(name)}") from None


def constraint_kinds() -> dict[str, ConstraintKind]:
    _ensure_vocabulary()
    return dict(_KINDS)


def did_you_mean(name: str, options: Sequence[str] | None = None) -> str:
    opts = list(options) if options is not None else list(_KINDS)
    close = difflib.get_close_matches(name, opts, n=1, cutoff=0.5)
    return f"; did you mean {close[0]!r}?" if close else ""


def _ensure_vocabulary() -> None:
    import streamdq.checks.kinds  # noqa: F401  (registers the built-in vocabulary)


# -- constraint -------------------------------------------------------------------------


@dataclass(frozen=True)
class Constraint:
    """A constraint as data. Build it with ``Constraint.create`` (validates everything)."""

    kind: str
    params: Params
    assertion: Assertion | None = None
    where: str | None = None
    hint: str | None = None
    scope: str = "batch"
    _analyzer: Analyzer | None = field(default=None, compare=False, hash=False, repr=False)

    @classmethod
    def create(
        cls,
        kind: str,
        params: Mapping[str, Any] | None = None,
        *,
        assertion: Any = None,
        where: str | None = None,
        hint: str | None = None,
        scope: str = "batch",
        path: str = "",
        file: str | None = None,
    ) -> Constraint:
        """Validate and build; a ``ConfigError`` names ``file``, ``path.<key>`` and the expectation."""
        prefix = f"{path}." if path else ""
        try:
            k = constraint_kind(kind)
        except KeyError as exc:
            raise ConfigError(str(exc.args[0]), file=file, path=path or None) from None
        given = dict(params or {})
        out: dict[str, Any] = {}
        names = [p.name for p in k.params]
        for key in given:
            if key not in names:
                raise ConfigError(
                    f"unknown key {key!r} for {kind}{did_you_mean(key, names + list(COMMON_KEYS))} "
                    f"(keys: {', '.join(names + [c for c in COMMON_KEYS if c != 'assertion' or k.takes_assertion])})",
                    file=file,
                    path=f"{prefix}{key}",
                )
        for p in k.params:
            if p.name not in given or given[p.name] is None:
                if p.required:
                    raise ConfigError(
                        f"missing required key {p.name!r}: expected {p.expectation()}",
                        file=file,
                        path=path or kind,
                    )
                if p.default is not None:
                    out[p.name] = p.default
                continue
            try:
                out[p.name] = _convert(p, given[p.name])
            except ValueError:
                raise ConfigError(
                    f"got {given[p.name]!r}; expected {p.expectation()}", file=file, path=f"{prefix}{p.name}"
                ) from None
        if k.validate is not None:
            problem = k.validate(out)
            if problem is not None:
                raise ConfigError(problem[1], file=file, path=f"{prefix}{problem[0]}")
        parsed: Assertion | None
        if assertion is None:
            if k.takes_assertion and k.default_assertion is None:
                raise ConfigError(
                    "missing required key 'assertion': expected a comparison such as \">= 0.95\" "
                    "or {between: [lower, upper]}",
                    file=file,
                    path=path or kind,
                )
            parsed = k.default_assertion if k.takes_assertion else None
        else:
            if not k.takes_assertion:
                raise ConfigError(f"{kind} takes no assertion", file=file, path=f"{prefix}assertion")
            parsed = parse_assertion(assertion, path=f"{prefix}assertion", file=file)
        if parsed is not None and k.validate_assertion is not None:
            problem_text = k.validate_assertion(out, parsed)
            if problem_text is not None:
                raise ConfigError(problem_text, file=file, path=f"{prefix}assertion")
        if where is not None and (not isinstance(where, str) or not where.strip()):
            raise ConfigError(
                f"got {where!r}; expected a Spark SQL predicate string", file=file, path=f"{prefix}where"
            )
        if hint is not None and not isinstance(hint, str):
            raise ConfigError(f"got {hint!r}; expected a string", file=file, path=f"{prefix}hint")
        if scope not in SCOPES:
            raise ConfigError(
                f"got {scope!r}; expected one of {', '.join(SCOPES)}", file=file, path=f"{prefix}scope"
            )
        c = cls(kind, Params(out), parsed, where, hint, scope)
        try:
            object.__setattr__(c, "_analyzer", k.analyzer(c.params, where))
        except (TypeError, ValueError, KeyError) as exc:
            detail = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
            raise ConfigError(f"cannot build the analyzer: {detail}", file=file, path=path or kind) from None
        return c

    # -- data view ----------------------------------------------------------------------
    @property
    def definition(self) -> ConstraintKind:
        return constraint_kind(self.kind)

    @property
    def analyzer(self) -> Analyzer:
        """The analyzer whose metric this constraint judges."""
        if self._analyzer is None:
            object.__setattr__(self, "_analyzer", self.definition.analyzer(self.params, self.where))
        assert self._analyzer is not None
        return self._analyzer

    @property
    def serializable(self) -> bool:
        return self.assertion is None or self.assertion.serializable

    def describe(self) -> str:
        """Readable text, e.g. ``has_completeness(column='email') >= 0.95 where country = 'DE'``."""
        args = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        out = f"{self.kind}({args})"
        if self.assertion is not None and self.assertion != self.definition.default_assertion:
            out += f" {self.assertion.describe()}"
        if self.where:
            out += f" where {self.where}"
        if self.scope != "batch":
            out += f" [{self.scope}]"
        return out

    def constraint_id(self, check_description: str) -> str:
        """Stable short id: hash of the check description + canonical JSON of kind, params,
        where and scope (not the assertion: tuning a threshold keeps the id, so alert
        history stays attached)."""
        payload = json.dumps(
            {
                "check": check_description,
                "kind": self.kind,
                "params": self.params.to_dict(),
                "where": self.where,
                "scope": self.scope,
            },
            sort_keys=True,
            separators=(",", ":"),
        )
        return hashlib.sha256(payload.encode()).hexdigest()[:16]

    # -- evaluation ---------------------------------------------------------------------
    def judge(
        self, metric: Metric | None, context: Mapping[str, Any] | None = None
    ) -> tuple[str, str | None]:
        """Status (``Success``/``Failure``) and message for ``metric`` (pure Python)."""
        k = self.definition
        if k.evaluate is not None:
            try:
                return k.evaluate(self, metric, context or {})
            except Exception as exc:
                return FAILURE, f"Can't evaluate {self.kind}: {type(exc).__name__}: {exc}"
        if metric is None:
            return FAILURE, f"No metric computed for {self.analyzer.NAME}({self.analyzer.instance})"
        if not metric.ok:
            if metric.empty and self.where is not None:
                return SUCCESS, None
            return FAILURE, str(metric.failure)
        try:
            value = k.value(self.params, metric)
        except Exception as exc:
            return FAILURE, f"Can't retrieve the value to assert on: {_reason(exc)}"
        assertion = self.assertion or IS_ONE
        try:
            ok = assertion.test(value)
        except Exception as exc:
            return FAILURE, f"Can't execute the assertion: {_reason(exc)}"
        if ok:
            return SUCCESS, None
        msg = f"Value: {_show(value)} does not meet the constraint requirement! (expected {assertion.describe()})"
        if self.hint:
            msg += f" {self.hint}"
        return FAILURE, msg

    def evaluate(
        self,
        metrics: Mapping[Analyzer, Metric],
        *,
        check: str,
        level: str,
        scope: str | None = None,
        window: Window | None = None,
        context: Mapping[str, Any] | None = None,
    ) -> ConstraintResult:
        """A ``ConstraintResult`` for this constraint given the metrics of its analyzers."""
        metric = metrics.get(self.analyzer) if self.definition.needs_metric else None
        status, message = self.judge(metric, context)
        return ConstraintResult(
            check=check,
            level=level,
            constraint=self.describe(),
            constraint_id=self.constraint_id(check),
            status=status,
            message=message,
            metric=metric,
            scope=scope or self.scope,
            window=window,
            bound=self.assertion.describe() if self.assertion is not None else None,
        )


def _reason(exc: Exception) -> str:
    if isinstance(exc, KeyError):
        return f"key {exc.args[0]!r} not found"
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def _show(value: Any) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return repr(value)
    return repr(value) if not isinstance(value, str) else value
