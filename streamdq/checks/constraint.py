"""Constraints as data; the kinds' look-ups with the built-in vocabulary registered first.

A ``Constraint`` is ``kind`` (a registered ``ConstraintKind`` name such as
``has_completeness``) + ``params`` (validated, canonical) + ``assertion`` + optional
``where`` (Spark SQL, passed to the analyzer), ``hint`` and ``scope`` (``batch``, ``window``
or ``total``: which merged state the streaming runner judges it on). It is frozen and
hashable and round-trips through YAML/JSON (``to_spec``/``from_spec`` in ``spec.py``).

A ``ConstraintKind`` says which parameters a kind takes, which analyzer computes its metric
(``analyzer(params, where)``), which number of the metric the assertion judges
(``value(params, metric)``, may raise: a missing histogram key) and its default assertion
(None = the assertion is required); both live in ``vocabulary.py`` and are re-exported here.
Importing registers nothing: the look-ups here call ``register.register_builtins()`` first.
Other modules add kinds with ``register_constraint_kind`` (e.g. the detectors add the evaluator of ``has_no_anomalies``);
a kind with a custom ``evaluate`` receives the ``context`` mapping given to
``Check.evaluate`` (metric history, detector states...).

Evaluation (SEMANTICS.md, constraints) runs on the driver in pure Python:
metric missing or failed -> Failure, except a failure from an *empty state* when the
constraint has a ``where`` filter -> Success; a value that cannot be extracted or an
assertion that raises -> Failure; otherwise Success iff the assertion holds.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from streamdq.analyzers.base import Analyzer
from streamdq.analyzers.metric import Metric
from streamdq.checks.assertion import IS_ONE, Assertion, parse_assertion
from streamdq.checks.register import register_builtins
from streamdq.checks.vocabulary import (
    COMMON_KEYS,
    PARAM_TYPES,
    ConstraintKind,
    Evaluator,
    Param,
    Params,
    _convert,
    did_you_mean,
    scalar_value,
)
from streamdq.checks.vocabulary import constraint_kind as _lookup
from streamdq.checks.vocabulary import constraint_kinds as _all_kinds
from streamdq.checks.vocabulary import register_constraint_kind as _add_kind
from streamdq.checks.vocabulary import unregister_constraint_kind as _remove_kind
from streamdq.errors import ConfigError, UnknownName
from streamdq.report import FAILURE, SCOPES, SUCCESS, Bounds, ConstraintResult, Window


def register_constraint_kind(kind: ConstraintKind, *, replace: bool = False) -> ConstraintKind:
    """Add a constraint kind to the vocabulary (``replace=True`` to override an existing one,
    a built-in included: the built-ins are registered first)."""
    register_builtins()
    return _add_kind(kind, replace=replace)


def unregister_constraint_kind(name: str) -> ConstraintKind | None:
    """Remove the kind ``name`` and return it (None when there is none): the undo of
    ``register_constraint_kind``, for a kind registered for a while (a test fixture).

    >>> kind = ConstraintKind("example_row_count", (), lambda p, w: None)
    >>> register_constraint_kind(kind) is kind
    True
    >>> unregister_constraint_kind("example_row_count") is kind
    True
    >>> "example_row_count" in constraint_kinds(), unregister_constraint_kind("example_row_count")
    (False, None)
    """
    register_builtins()
    return _remove_kind(name)


def constraint_kind(name: str) -> ConstraintKind:
    """The registered kind ``name`` (the built-ins registered first); ``UnknownName`` (also a
    ``KeyError``) with a did-you-mean and the known kinds when there is none."""
    register_builtins()
    return _lookup(name)


def constraint_kinds() -> dict[str, ConstraintKind]:
    """Every registered kind by name, the built-ins included."""
    register_builtins()
    return _all_kinds()


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
        """Validate and build; a ``ConfigError`` names ``file``, the key ``<path>.<key>`` (``path``
        defaults to the kind, e.g. ``has_mean.assertion``) and the expectation."""
        prefix = f"{path or kind}."  # a constraint built in code names its kind
        try:
            k = constraint_kind(kind)
        except UnknownName as exc:  # the did-you-mean, without the list of every kind
            raise ConfigError(path or kind, exc.problem, file=file) from None
        given = dict(params or {})
        out: dict[str, Any] = {}
        names = [p.name for p in k.params]
        for key in given:
            if key not in names:
                raise ConfigError(
                    f"{prefix}{key}",
                    f"unknown key {key!r} for {kind}{did_you_mean(key, names + list(COMMON_KEYS))} "
                    f"(keys: {', '.join(names + [c for c in COMMON_KEYS if c != 'assertion' or k.takes_assertion])})",
                    file=file,
                )
        for p in k.params:
            if p.name not in given or given[p.name] is None:
                if p.required:
                    raise ConfigError(
                        f"{prefix}{p.name}",
                        f"missing required key: expected {p.expectation()}",
                        file=file,
                    )
                if p.default is not None:
                    out[p.name] = p.default
                continue
            try:
                out[p.name] = _convert(p, given[p.name])
            except ValueError:
                raise ConfigError(
                    f"{prefix}{p.name}", f"got {given[p.name]!r}; expected {p.expectation()}", file=file
                ) from None
        if k.validate is not None:
            problem = k.validate(out)
            if problem is not None:
                raise ConfigError(f"{prefix}{problem[0]}", problem[1], file=file)
        parsed: Assertion | None
        if assertion is None:
            if k.takes_assertion and k.default_assertion is None:
                raise ConfigError(
                    f"{prefix}assertion",
                    'missing required key: expected a comparison such as ">= 0.95" '
                    "or {between: [lower, upper]}",
                    file=file,
                )
            parsed = k.default_assertion if k.takes_assertion else None
        else:
            if not k.takes_assertion:
                raise ConfigError(f"{prefix}assertion", f"{kind} takes no assertion", file=file)
            parsed = parse_assertion(assertion, path=f"{prefix}assertion", file=file)
        if parsed is not None and k.validate_assertion is not None:
            problem_text = k.validate_assertion(out, parsed)
            if problem_text is not None:
                raise ConfigError(f"{prefix}assertion", problem_text, file=file)
        if where is not None and (not isinstance(where, str) or not where.strip()):
            raise ConfigError(
                f"{prefix}where", f"got {where!r}; expected a Spark SQL predicate string", file=file
            )
        if hint is not None and not isinstance(hint, str):
            raise ConfigError(f"{prefix}hint", f"got {hint!r}; expected a string", file=file)
        if scope not in SCOPES:
            raise ConfigError(
                f"{prefix}scope", f"got {scope!r}; expected one of {', '.join(SCOPES)}", file=file
            )
        c = cls(kind, Params(out), parsed, where, hint, scope)
        try:
            object.__setattr__(c, "_analyzer", k.analyzer(c.params, where))
        except ConfigError as exc:
            raise ConfigError(
                f"{prefix}{exc.key}" if exc.key else path or kind, exc.problem, exc.fix, file
            ) from None
        except (TypeError, ValueError, KeyError) as exc:
            detail = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
            raise ConfigError(path or kind, f"cannot build the analyzer: {detail}", file=file) from None
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
        history stays attached). Kept per instance and check (the handler judges every
        constraint on every microbatch), outside the dataclass fields."""
        kept: dict[str, str] | None = self.__dict__.get("_ids")
        if kept is None:
            kept = {}
            object.__setattr__(self, "_ids", kept)
        found = kept.get(check_description)
        if found is not None:
            return found
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
        kept[check_description] = found = hashlib.sha256(payload.encode()).hexdigest()[:16]
        return found

    # -- evaluation ---------------------------------------------------------------------
    def judge(
        self, metric: Metric | None, context: Mapping[str, Any] | None = None
    ) -> tuple[str, str | None]:
        """Status (``Success``/``Failure``) and message for ``metric`` (pure Python)."""
        status, message, _ = self._judgement(metric, context)
        return status, message

    def _judgement(
        self, metric: Metric | None, context: Mapping[str, Any] | None
    ) -> tuple[str, str | None, Any]:
        """``judge`` plus the verdict a kind's own evaluator returned (None otherwise)."""
        k = self.definition
        if k.evaluate is not None:
            try:
                out = k.evaluate(self, metric, context or {})
            except Exception as exc:
                return FAILURE, f"Can't evaluate {self.kind}: {type(exc).__name__}: {exc}", None
            return (out[0], out[1], out[2]) if len(out) == 3 else (out[0], out[1], None)
        status, message = self._judge_metric(metric)
        return status, message, None

    def _judge_metric(self, metric: Metric | None) -> tuple[str, str | None]:
        k = self.definition
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
        status, message, verdict = self._judgement(metric, context)
        b = self.assertion.bounds() if self.assertion is not None else Bounds()
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
            lower=b.lower,
            upper=b.upper,
            lower_inclusive=b.lower_inclusive,
            upper_inclusive=b.upper_inclusive,
            verdict=verdict,
        )


def _reason(exc: Exception) -> str:
    if isinstance(exc, KeyError):
        return f"key {exc.args[0]!r} not found"
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def _show(value: Any) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return repr(value)
    return repr(value) if not isinstance(value, str) else value


__all__ = [
    "COMMON_KEYS",
    "PARAM_TYPES",
    "Constraint",
    "ConstraintKind",
    "Evaluator",
    "Param",
    "Params",
    "constraint_kind",
    "constraint_kinds",
    "did_you_mean",
    "register_constraint_kind",
    "scalar_value",
]
