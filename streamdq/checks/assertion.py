"""Assertions as data: a comparison or bounds applied to a metric value.

An assertion is a frozen, hashable object with ``test(value) -> bool``, a readable
``describe()`` and a YAML/JSON form (``to_spec()``) that ``parse_assertion`` reads back:

* ``Comparison(op, value)``: ``"== 1"``, ``">= 0.95"``, ``"< 10"``, ``"!= 0"`` (ops ``==
  != < <= > >=``); a bare number means ``==`` that number.
* ``Between(lower, upper)``: ``{between: [0, 10]}`` (both ends inclusive).
* ``PyAssertion(fn)``: any Python callable, allowed in code only; ``serializable`` is
  False and ``to_spec()`` raises a ``ConfigError`` saying so.

``test`` runs on the driver in pure Python; it may raise (e.g. a callable that fails),
which a constraint turns into a Failure. Equality is exact (``== 1.0`` is Deequ's
default assertion).
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from streamdq.errors import ConfigError
from streamdq.report import Bounds

OPS: dict[str, Callable[[Any, Any], bool]] = {
    "==": operator.eq,
    "!=": operator.ne,
    "<=": operator.le,
    ">=": operator.ge,
    "<": operator.lt,
    ">": operator.gt,
}

EXPECTED = (
    'a comparison such as "== 1", ">= 0.95", "< 10", a number (meaning == that number), '
    "or {between: [lower, upper]}"
)

_SHORTHAND = re.compile(r"^\s*(==|!=|<=|>=|<|>|=)\s*(\S+)\s*$")


def _number(text: Any) -> float | None:
    """``text`` as a float (ints, floats, numeric strings, inf/nan), None if not a number."""
    if isinstance(text, bool):
        return None
    if isinstance(text, int | float):
        return float(text)
    if isinstance(text, str):
        try:
            return float(text)
        except ValueError:
            return None
    return None


def _fmt(x: float) -> str:
    return repr(float(x))


class Assertion:
    """Base of assertions: ``test(value)`` says whether the metric value passes."""

    serializable: ClassVar[bool] = True

    def test(self, value: Any) -> bool:
        raise NotImplementedError

    def describe(self) -> str:
        raise NotImplementedError

    def bounds(self) -> Bounds:
        """The interval of passing values (``ConstraintResult.lower``/``upper``); ``Bounds()``
        (nothing known) unless the assertion is one."""
        return Bounds()

    def to_spec(self) -> Any:
        raise NotImplementedError


@dataclass(frozen=True)
class Comparison(Assertion):
    """``value <op> expected``; NaN never passes except for ``!=``."""

    op: str
    value: float

    def __post_init__(self) -> None:
        if self.op not in OPS:
            raise ConfigError(
                "assertion", f"unknown comparison {self.op!r}; expected one of {', '.join(OPS)}"
            )
        object.__setattr__(self, "value", float(self.value))

    def test(self, value: Any) -> bool:
        return bool(OPS[self.op](float(value), self.value))

    def describe(self) -> str:
        return f"{self.op} {_fmt(self.value)}"

    def bounds(self) -> Bounds:
        """``>= 5`` is ``[5, open)``, ``< 5`` is ``(open, 5)`` not inclusive, ``== 5`` is ``[5, 5]``,
        ``!= 5`` no interval; an infinite value leaves its side open.

        >>> Comparison(">", 5).bounds()
        Bounds(lower=5.0, upper=None, lower_inclusive=False, upper_inclusive=True)
        """
        v = self.value if math.isfinite(self.value) else None
        if self.op in (">=", ">"):
            return Bounds(lower=v, lower_inclusive=self.op == ">=")
        if self.op in ("<=", "<"):
            return Bounds(upper=v, upper_inclusive=self.op == "<=")
        return Bounds(v, v) if self.op == "==" else Bounds()

    def to_spec(self) -> str:
        return self.describe()


@dataclass(frozen=True)
class Between(Assertion):
    """``lower <= value <= upper`` (inclusive at both ends)."""

    lower: float
    upper: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "lower", float(self.lower))
        object.__setattr__(self, "upper", float(self.upper))
        if self.lower > self.upper:
            raise ConfigError(
                "assertion.between", f"lower bound {self.lower} is above upper bound {self.upper}"
            )

    def test(self, value: Any) -> bool:
        return self.lower <= float(value) <= self.upper

    def describe(self) -> str:
        return f"between {_fmt(self.lower)} and {_fmt(self.upper)}"

    def bounds(self) -> Bounds:
        finite = [b if math.isfinite(b) else None for b in (self.lower, self.upper)]
        return Bounds(finite[0], finite[1])

    def to_spec(self) -> dict[str, list[float]]:
        return {"between": [self.lower, self.upper]}


@dataclass(frozen=True)
class PyAssertion(Assertion):
    """A Python callable ``fn(value) -> bool``: code only, never written to YAML/JSON."""

    serializable: ClassVar[bool] = False

    fn: Callable[[Any], Any] = field(compare=True)
    description: str = ""

    def test(self, value: Any) -> bool:
        return bool(self.fn(value))

    def describe(self) -> str:
        return self.description or f"custom assertion {getattr(self.fn, '__name__', 'callable')}"

    def to_spec(self) -> Any:
        raise ConfigError(
            "assertion",
            f"{self.describe()} is a Python callable and cannot be written to YAML/JSON",
            'use a comparison such as ">= 0.95" or {between: [lo, hi]} instead',
        )


IS_ONE = Comparison("==", 1.0)


def parse_assertion(spec: Any, *, path: str = "assertion", file: str | None = None) -> Assertion:
    """An ``Assertion`` from its YAML/JSON (or Python) form; a ``ConfigError`` names ``path``.

    Accepts an ``Assertion``, a callable (code only), a number, a shorthand string
    (``">= 0.95"``; ``"= 1"`` is read as ``==``) or ``{between: [lower, upper]}``.
    """
    if isinstance(spec, Assertion):
        return spec
    if callable(spec):
        return PyAssertion(spec)
    num = _number(spec) if not isinstance(spec, str) else None
    if num is not None:
        return Comparison("==", num)
    if isinstance(spec, str) and _number(spec) is not None and not math.isnan(float(spec)):
        return Comparison("==", float(spec))  # YAML 1.1 reads 1e-3 (no dot) as a string
    if isinstance(spec, str):
        m = _SHORTHAND.match(spec)
        value = _number(m.group(2)) if m else None
        if m is None or value is None or math.isnan(value):
            raise ConfigError(path, f"got {spec!r}; expected {EXPECTED}", file=file)
        op = "==" if m.group(1) == "=" else m.group(1)
        return Comparison(op, value)
    if isinstance(spec, dict):
        if set(spec) != {"between"}:
            raise ConfigError(
                path, f"got a mapping with keys {sorted(map(str, spec))}; expected {EXPECTED}", file=file
            )
        bounds = spec["between"]
        sub = f"{path}.between"
        if not isinstance(bounds, list | tuple) or len(bounds) != 2:
            raise ConfigError(
                sub, f"got {bounds!r}; expected a list [lower, upper] of two numbers", file=file
            )
        lo, hi = _number(bounds[0]), _number(bounds[1])
        if lo is None or hi is None or math.isnan(lo) or math.isnan(hi):
            raise ConfigError(
                sub, f"got {bounds!r}; expected a list [lower, upper] of two numbers", file=file
            )
        if lo > hi:
            raise ConfigError(
                sub, f"lower bound {lo} is above upper bound {hi}; expected lower <= upper", file=file
            )
        return Between(lo, hi)
    raise ConfigError(path, f"got {spec!r}; expected {EXPECTED}", file=file)
