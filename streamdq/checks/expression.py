"""Check expressions (DolphinScheduler's "Check" step) in CEL, sandboxed and bounded.

An ``expression`` constraint judges a boolean CEL expression (cel-python, interpreted, never
transpiled to Python) over three inputs, all plain data:

* ``measures``: measure name -> value (``single_value``: a scalar, ``list``: a list,
  ``map``: a string-keyed map), e.g. ``measures["multiple values"]["c"] > 50``;
* ``metrics``: metric key -> value for every metric of the plan at the check's scope. The key
  is the console's metric label (``metric_key``): ``Name(instance, params where filter)``,
  the bare name for a dataset metric without parameters: ``metrics["Size"]``,
  ``metrics["Completeness(email)"]``, ``metrics["Mean(amount where country = 'DE')"]``,
  ``metrics["ApproxQuantile(amount, quantile=0.5)"]``;
* history, read from the state store BEFORE evaluation (``history_refs``) and handed in as a
  mapping: ``previous_values("Null Count", 30)`` (the last 30 stored values of this dataset's
  measure or metric, oldest first), ``previous_values("other_dataset", "row_count", 20)``
  (another dataset's), ``previous("Null Count")`` (the last one, ``null`` when none).

The sandbox (what makes CEL safe where JEXL/MVEL are not, docs/measure-check-pass.md):
CEL has no statements, no assignment, no loops other than the bounded comprehension macros,
no constructors of host objects and no reflection: ``new java.io.File('f').delete()`` has no
CEL counterpart. On top of that, ``compile_expression`` rejects at load time, naming the
mistake: any identifier other than ``measures``, ``metrics``, macro variables and CEL type
names (``os``, ``env``, ``__import__``...); any function or method outside ``ALLOWED_FUNCTIONS``
(``open(...)``, ``system(...)``); any field starting with ``_`` (``measures.__class__``);
history calls whose arguments are not literals (they are prefetched, so evaluation does no
I/O); texts longer than ``MAX_LENGTH``, nesting deeper than ``MAX_DEPTH`` and a comprehension
inside a comprehension (quadratic time). History lists hold at most ``MAX_HISTORY`` values.
Field selection in cel-python reads map keys only (never ``getattr``), and the activation
holds CEL values converted from JSON data, never Python objects.

Evaluation (``evaluate_expression``) never raises: a missing key, a type error, a failed
measure or metric the expression reads, or a non-boolean result is ``(False, reason)``.
Numbers compare across int and double (``metrics["Size"] == 100``), as in current CEL.

Example::

    >>> e = compile_expression('measures["counts"]["c"] == measures["counts"]["cd"]')
    >>> evaluate_expression(e, measures={"counts": {"c": 100, "cd": 10}})
    (False, None)
    >>> evaluate_expression(e, measures={})[1]
    "no such key 'counts'"
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from streamdq.errors import StreamdqError

MAX_LENGTH = 2000
"""Longest expression text (characters)."""
MAX_DEPTH = 24
"""Deepest nesting of sub-expressions (parentheses, calls, indexing)."""
MAX_HISTORY = 200
"""Most values one history call returns (n above this is a load-time error)."""

VARIABLES = ("measures", "metrics")
HISTORY_FUNCTIONS = ("previous_values", "previous")
MACROS = ("all", "exists", "exists_one", "map", "filter")
TYPE_NAMES = ("int", "uint", "double", "bool", "string", "bytes", "list", "map", "null_type", "type")
ALLOWED_FUNCTIONS = frozenset(
    {
        *HISTORY_FUNCTIONS,
        *MACROS,
        "has",
        "size",
        "int",
        "uint",
        "double",
        "string",
        "bool",
        "type",
        "dyn",
        "contains",
        "startsWith",
        "endsWith",
        "matches",
    }
)


class ExpressionError(StreamdqError, ValueError):
    """A load-time mistake in an expression (syntax, sandbox, limits, history arguments)."""


@dataclass(frozen=True)
class HistoryRef:
    """One history call of an expression: (dataset or None for this one, name, n values)."""

    dataset: str | None
    name: str
    n: int


@dataclass(frozen=True)
class CompiledExpression:
    """A checked expression: its text, the measure/metric keys it names as literals, and the
    history it reads (prefetched by the caller)."""

    text: str
    measure_refs: tuple[str, ...] = ()
    metric_refs: tuple[str, ...] = ()
    history_refs: tuple[HistoryRef, ...] = ()
    _program: Any = field(default=None, compare=False, hash=False, repr=False)
    """(cel environment, parse tree): the runner is built per evaluation with its history."""


# -- compile ------------------------------------------------------------------------------


@lru_cache(maxsize=1024)
def compile_expression(text: str) -> CompiledExpression:
    """Parse and sandbox-check ``text``; ``ExpressionError`` says what is wrong and where."""
    import celpy

    if not isinstance(text, str) or not text.strip():
        raise ExpressionError(f"got {text!r}; expected a CEL expression (a non-empty string)")
    if len(text) > MAX_LENGTH:
        raise ExpressionError(f"is {len(text)} characters long; at most {MAX_LENGTH} are allowed")
    env = celpy.Environment(runner_class=celpy.InterpretedRunner)
    try:
        tree = env.compile(text)
    except celpy.CELParseError as exc:
        raise ExpressionError(f"syntax error: {_first_lines(str(exc))}") from None
    except RecursionError:
        raise ExpressionError(f"nests deeper than {MAX_DEPTH} levels") from None
    walker = _Walker()
    walker.walk(tree, depth=0, in_macro=False, bound=frozenset())
    return CompiledExpression(
        text,
        tuple(dict.fromkeys(walker.measures)),
        tuple(dict.fromkeys(walker.metrics)),
        tuple(dict.fromkeys(walker.history)),
        (env, tree),
    )


def _first_lines(message: str) -> str:
    lines = [ln for ln in message.splitlines() if ln.strip()]
    return " | ".join(lines[:3])


class _Walker:
    """Walks the lark tree of an expression, enforcing the sandbox and collecting references."""

    def __init__(self) -> None:
        self.measures: list[str] = []
        self.metrics: list[str] = []
        self.history: list[HistoryRef] = []

    def walk(self, node: Any, *, depth: int, in_macro: bool, bound: frozenset[str]) -> None:
        import lark

        if not isinstance(node, lark.Tree):
            return
        rule = str(node.data)
        if rule == "expr":
            depth += 1
            if depth > MAX_DEPTH:
                raise ExpressionError(f"nests deeper than {MAX_DEPTH} levels")
        if rule in ("ident", "dot_ident"):
            name = str(node.children[0])
            if name not in VARIABLES and name not in bound and name not in TYPE_NAMES:
                raise ExpressionError(
                    f"unknown name {name!r}: an expression reads only measures, metrics and the "
                    f"functions {', '.join(sorted(ALLOWED_FUNCTIONS))} (no files, environment or host objects)"
                )
            return
        if rule in ("ident_arg", "dot_ident_arg"):
            name = str(node.children[0])
            self._function(name)
            args = _args(node.children[1] if len(node.children) > 1 else None)
            if name in HISTORY_FUNCTIONS:
                self.history.append(_history_ref(name, args))
            for a in args:
                self.walk(a, depth=depth, in_macro=in_macro, bound=bound)
            return
        if rule in ("member_dot", "member_dot_arg"):
            target, name_token = node.children[0], str(node.children[1])
            if name_token.startswith("_"):
                raise ExpressionError(
                    f"field {name_token!r}: names starting with '_' are not readable (no host attributes)"
                )
            if rule == "member_dot_arg":
                self._function(name_token)
                args = _args(node.children[2] if len(node.children) > 2 else None)
                if name_token in MACROS:
                    if in_macro:
                        raise ExpressionError(
                            f"{name_token}(): a comprehension inside a comprehension is not allowed "
                            "(its time grows with the product of the list sizes)"
                        )
                    variable = _macro_variable(name_token, args)
                    self.walk(target, depth=depth, in_macro=in_macro, bound=bound)
                    for a in args[1:]:
                        self.walk(a, depth=depth, in_macro=True, bound=bound | {variable})
                    return
                self.walk(target, depth=depth, in_macro=in_macro, bound=bound)
                for a in args:
                    self.walk(a, depth=depth, in_macro=in_macro, bound=bound)
                return
            self.walk(target, depth=depth, in_macro=in_macro, bound=bound)
            return
        if rule == "member_index":
            target, index = node.children
            root = _ident_of(target)
            key = _literal_string(index)
            if root == "measures" and key is not None:
                self.measures.append(key)
            elif root == "metrics" and key is not None:
                self.metrics.append(key)
        if rule == "member_object":
            raise ExpressionError("message construction (Type{field: ...}) is not allowed")
        for child in node.children:
            self.walk(child, depth=depth, in_macro=in_macro, bound=bound)

    @staticmethod
    def _function(name: str) -> None:
        if name not in ALLOWED_FUNCTIONS:
            raise ExpressionError(
                f"unknown function {name}(): allowed are {', '.join(sorted(ALLOWED_FUNCTIONS))} "
                "(no I/O, no host functions)"
            )


def _args(exprlist: Any) -> list[Any]:
    import lark

    if exprlist is None or not isinstance(exprlist, lark.Tree):
        return []
    return list(exprlist.children)


def _macro_variable(name: str, args: Sequence[Any]) -> str:
    variable = _ident_of(args[0]) if args else None
    if variable is None or len(args) != 2:
        raise ExpressionError(f"{name}(): expected {name}(variable, expression)")
    if variable in VARIABLES:
        raise ExpressionError(f"{name}(): the variable may not be called {variable!r}")
    return variable


def _chain(node: Any) -> Any:
    """The single-child chain below ``node`` down to the first node with a choice in it."""
    import lark

    while (
        isinstance(node, lark.Tree)
        and len(node.children) == 1
        and isinstance(node.children[0], lark.Tree)
        and str(node.data) not in ("primary", "literal")
    ):
        node = node.children[0]
    return node


def _ident_of(node: Any) -> str | None:
    """The identifier ``node`` is (``measures`` in ``measures["x"]``), else None."""
    import lark

    node = _chain(node)
    if isinstance(node, lark.Tree) and str(node.data) == "primary":
        inner = node.children[0]
        if isinstance(inner, lark.Tree) and str(inner.data) == "ident":
            return str(inner.children[0])
    return None


def _literal(node: Any) -> Any:
    """The Python value of a literal expression node (string, int), else a sentinel."""
    import lark

    node = _chain(node)
    if isinstance(node, lark.Tree) and str(node.data) == "primary":
        node = node.children[0]
    if isinstance(node, lark.Tree) and str(node.data) == "literal":
        token = node.children[0]
        kind = getattr(token, "type", "")
        text = str(token)
        if kind in ("STRING_LIT", "MLSTRING_LIT") or text[:1] in ("'", '"'):
            import celpy

            return str(celpy.Environment().program(celpy.Environment().compile(text)).evaluate({}))
        if kind == "INT_LIT":
            return int(text, 0)
    return _NOT_LITERAL


_NOT_LITERAL = object()


def _literal_string(node: Any) -> str | None:
    value = _literal(node)
    return value if isinstance(value, str) else None


def _history_ref(name: str, args: Sequence[Any]) -> HistoryRef:
    values = [_literal(a) for a in args]
    usage = (
        'previous_values("name", n) or previous_values("dataset", "name", n)'
        if name == "previous_values"
        else 'previous("name") or previous("dataset", "name")'
    )
    if any(v is _NOT_LITERAL for v in values):
        raise ExpressionError(
            f"{name}(): arguments must be literals ({usage}), so the history is read before evaluation"
        )
    if name == "previous_values":
        if len(values) not in (2, 3) or not all(isinstance(v, str) for v in values[:-1]):
            raise ExpressionError(f"{name}(): expected {usage}")
        n = values[-1]
        if not isinstance(n, int) or not 1 <= n <= MAX_HISTORY:
            raise ExpressionError(f"{name}(): n must be an integer from 1 to {MAX_HISTORY}, got {n!r}")
        names = values[:-1]
    else:
        if len(values) not in (1, 2) or not all(isinstance(v, str) for v in values):
            raise ExpressionError(f"{name}(): expected {usage}")
        n, names = 1, values
    dataset = names[0] if len(names) == 2 else None
    return HistoryRef(dataset, names[-1], n)


# -- functions ----------------------------------------------------------------------------


@lru_cache(maxsize=1)
def _functions() -> dict[str, Callable[..., Any]]:
    """Numeric comparisons across int and double, and ``x == null`` false for any non-null
    ``x`` (CEL's heterogeneous equality); the history functions are bound per evaluation."""
    from celpy import celtypes
    from celpy.evaluation import CELEvalError, base_functions

    numbers = (celtypes.IntType, celtypes.UintType, celtypes.DoubleType)

    def mixed(op: Callable[[Any, Any], bool], base: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
        def compare(a: Any, b: Any) -> Any:
            if (
                isinstance(a, numbers)
                and isinstance(b, numbers)
                and not isinstance(a, celtypes.BoolType)
                and not isinstance(b, celtypes.BoolType)
                and type(a) is not type(b)
            ):
                return celtypes.BoolType(op(float(a), float(b)))
            if op in (operator.eq, operator.ne) and (a is None) != (b is None):
                return celtypes.BoolType(op is operator.ne)  # null equals only null (CEL)
            return base(a, b)

        return compare

    ops = {
        "_==_": operator.eq,
        "_!=_": operator.ne,
        "_<_": operator.lt,
        "_<=_": operator.le,
        "_>_": operator.gt,
        "_>=_": operator.ge,
    }
    out = {name: mixed(op, base_functions[name]) for name, op in ops.items()}

    def first_error(base: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
        def logic(a: Any, b: Any) -> Any:  # report the operand's own error, not "no overload"
            try:
                return base(a, b)
            except TypeError:
                error = next((x for x in (a, b) if isinstance(x, CELEvalError)), None)
                if error is None:
                    raise
                return error

        return logic

    for name in ("_&&_", "_||_"):
        out[name] = first_error(base_functions[name])

    def propagate(base: Callable[..., Any]) -> Callable[..., Any]:
        def op(*args: Any) -> Any:  # an operand that is an error is the result (a missing key)
            error = next((x for x in args if isinstance(x, CELEvalError)), None)
            return error if error is not None else base(*args)

        return op

    for name in ("_[_]", "_+_", "_-_", "_*_", "_/_", "_%_", "-_", "!_", *ops):
        out[name] = propagate(out.get(name) or base_functions[name])
    return out


# -- evaluate -----------------------------------------------------------------------------


def evaluate_expression(
    compiled: CompiledExpression,
    *,
    measures: Mapping[str, Any] | None = None,
    metrics: Mapping[str, Any] | None = None,
    history: Mapping[HistoryRef, Sequence[Any] | BaseException] | None = None,
    failed: Mapping[str, str] | None = None,
) -> tuple[bool, str | None]:
    """``(passed, reason)``; never raises. ``history``: each ``HistoryRef`` of the expression
    -> its values (oldest first) or the error that kept them from being read. ``failed``:
    measure or metric key -> why it has no value (an expression naming one fails with that
    reason)."""
    import celpy
    from celpy import celtypes

    for key in (*compiled.measure_refs, *compiled.metric_refs):
        if failed and key in failed:
            return False, f"{key!r} has no value: {failed[key]}"
    stored = history or {}

    def lookup(args: tuple[Any, ...], n: int | None) -> list[Any]:
        names = [str(a) for a in args]
        ref = HistoryRef(names[0] if len(names) == 2 else None, names[-1], n if n is not None else 1)
        if ref not in stored:
            raise KeyError(f"history of {ref.name!r} was not prefetched")
        values = stored[ref]
        if isinstance(values, BaseException):  # the store could not be read: its reason
            raise KeyError(str(values))
        return list(values)[-ref.n :]

    def previous_values(*args: Any) -> Any:
        try:
            values = lookup(tuple(args[:-1]), int(args[-1]))
        except Exception as exc:
            return celpy.CELEvalError(str(exc.args[0] if exc.args else exc), KeyError, None)
        return celpy.json_to_cel(_json_safe(values))

    def previous(*args: Any) -> Any:
        try:
            values = lookup(tuple(args), None)
        except Exception as exc:
            return celpy.CELEvalError(str(exc.args[0] if exc.args else exc), KeyError, None)
        return celpy.json_to_cel(_json_safe(values[-1] if values else None))

    activation = {
        "measures": celpy.json_to_cel(_json_safe(dict(measures or {}))),
        "metrics": celpy.json_to_cel(_json_safe(dict(metrics or {}))),
    }
    parsed = compiled._program
    if parsed is None:  # an equal expression built by hand
        parsed = compile_expression(compiled.text)._program
    env, tree = parsed
    try:
        functions = {**_functions(), "previous_values": previous_values, "previous": previous}
        result = env.program(tree, functions=functions).evaluate(activation)
    except celpy.CELEvalError as exc:
        return False, _reason(exc)
    except RecursionError:
        return False, f"nests deeper than {MAX_DEPTH} levels"
    except Exception as exc:  # never crash the job on an expression
        return False, f"{type(exc).__name__}: {exc}"
    if isinstance(result, celpy.CELEvalError):
        return False, _reason(result)
    if not isinstance(result, celtypes.BoolType):
        return False, f"the expression gave {_show(result)}, not a boolean"
    return bool(result), None


def _reason(exc: Any) -> str:
    args: tuple[Any, ...] = tuple(getattr(exc, "args", ()) or ())
    text = str(args[0]) if args else str(exc)
    text = text.split(" (in activation", 1)[0]
    if text == "no such key" and len(args) > 2 and args[2]:
        return f"no such key {str(args[2][0])!r}"
    if text == "invalid_argument" and len(args) > 2 and args[2]:
        return f"invalid argument: {args[2][0]}"
    if "no matching overload" in text or text.startswith("no such overload"):
        text = re.sub(r"<class 'celpy\.\w+\.(\w+?)(Type)?'>", lambda m: m.group(1).lower(), text)
        text = re.sub(r"Token\('RULE', '(\w+)'\)", lambda m: _OPERATORS.get(m.group(1), m.group(1)), text)
        return f"type error: {text}"
    return text


_OPERATORS = {
    "relation_eq": "==",
    "relation_ne": "!=",
    "relation_lt": "<",
    "relation_le": "<=",
    "relation_gt": ">",
    "relation_ge": ">=",
    "relation_in": "in",
    "addition_add": "+",
    "addition_sub": "-",
    "multiplication_mul": "*",
    "multiplication_div": "/",
    "multiplication_mod": "%",
}


def _show(value: Any) -> str:
    from celpy import celtypes

    kinds = {
        celtypes.IntType: "int",
        celtypes.UintType: "uint",
        celtypes.DoubleType: "double",
        celtypes.StringType: "string",
        celtypes.ListType: "list",
        celtypes.MapType: "map",
    }
    kind = next((k for t, k in kinds.items() if isinstance(value, t)), type(value).__name__)
    if value is None:
        return "null"
    text = repr(value)
    return f"{kind} {text[:60]}"


def _json_safe(value: Any) -> Any:
    """Plain JSON data for the CEL activation (no host objects; NaN/inf kept as doubles)."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value
    if isinstance(value, Mapping):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    try:
        import decimal

        if isinstance(value, decimal.Decimal):
            return int(value) if value == value.to_integral_value() else float(value)
    except Exception:
        pass
    item = getattr(value, "item", None)  # numpy scalars
    if callable(item):
        return _json_safe(item())
    if isinstance(value, float) and not math.isfinite(value):
        return value
    return str(value)
