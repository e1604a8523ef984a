"""Shared pieces of the contract kit: violations, the report, and comparing states and values.

Two states are *the same* when they are equal or their ``to_bytes()`` are (a NaN inside a
state makes ``==`` false although the state is the same). Two metric values are *close* when
they are equal up to floating-point rounding (relative 1e-9), recursively through lists and
mappings, NaN equal to NaN.

>>> close({"a": [1.0, float("nan")]}, {"a": [1.0 + 1e-12, float("nan")]})
True
>>> close([1.0], [1.1])
False
"""

from __future__ import annotations

import importlib
import inspect
import math
import pkgutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from streamdq.analyzers.state import State
from streamdq.errors import StreamdqError


class ContractViolation(StreamdqError, AssertionError):
    """A class breaks the State / Aggregation contract; the message names the class, the params and the law."""


@dataclass
class ContractReport:
    """What the kit checked: the class, the params it ran with and how many law checks passed."""

    name: str
    params: list[Any] = field(default_factory=list)
    laws: int = 0


def same(x: State, y: State) -> bool:
    """True when ``x`` and ``y`` are the same state (equal, or equal bytes)."""
    if type(x) is not type(y):
        return False
    try:
        if x == y:
            return True
    except Exception:  # a state whose == raises (an array field) is compared by bytes
        pass
    return x.to_bytes() == y.to_bytes()


def close(a: Any, b: Any, rel: float = 1e-9) -> bool:
    """True when metric values ``a`` and ``b`` are equal up to floating-point rounding."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        fa, fb = float(a), float(b)
        if math.isnan(fa) or math.isnan(fb):
            return math.isnan(fa) and math.isnan(fb)
        return math.isclose(fa, fb, rel_tol=rel, abs_tol=1e-12)
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(close(a[k], b[k], rel) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(close(x, y, rel) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def classes_in(package: ModuleType, implements: Callable[[type], bool]) -> dict[str, type]:
    """Every class defined in a module of ``package`` (walked, so a new module is found) for which
    ``implements(cls)`` holds, by qualified name (``module.Class``)."""
    found: dict[str, type] = {}
    for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
        module = importlib.import_module(info.name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == module.__name__ and implements(cls):
                found[f"{cls.__module__}.{cls.__qualname__}"] = cls
    return found


def unit_test_params(cls: type, *args: Any, gives: str) -> list[dict[str, Any]]:
    """The parameter sets ``cls._unit_test_params(*args)`` yields; a ``ContractViolation`` when the
    class does not define it itself (an inherited one does not count: every class states its own)
    or yields nothing. ``gives`` says what the method must yield, for the message."""
    if "_unit_test_params" not in cls.__dict__:
        raise ContractViolation(
            f"{cls.__name__} defines no _unit_test_params: give a classmethod yielding {gives}"
        )
    params = [dict(p) for p in cls._unit_test_params(*args)]  # type: ignore[attr-defined]
    if not params:
        raise ContractViolation(f"{cls.__name__}._unit_test_params() yields no params")
    return params


__all__ = ["ContractReport", "ContractViolation", "classes_in", "close", "same", "unit_test_params"]
