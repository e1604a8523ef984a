"""The one table-driven validator of the run config: every section's keys described as data.

A section (the run config itself, ``state:``, ``supervision:``, one sink type, ...) is a
``Table`` of ``Key`` rows: the key's name, the ``check`` that turns its raw YAML value into a
typed one, its ``default``, a ``fix`` (what to write instead) and a line of ``doc``. The checks
are small values built by the factories below (``integer(low=1)``, ``one_of("a", "b")``,
``duration()``, ``table(sub)``, ...); a check is called as ``check(key_path, value)`` and raises
``ConfigError(key_path, problem, fix)``, so every mistake names its full dotted key
(``sinks[2].port``, ``state.retention_hours``). ``Table.parse(raw, where)`` runs every row:

* a key not in the table is ``unknown key`` (fix: the known keys);
* a required key that is missing is ``required`` (fix: the key's fix);
* a key present is checked; a key absent takes its default;
* every mistake of the section is reported at once (one ``ConfigErrors``).

``Table.parse(raw, where, errs)`` records the mistakes in an ``ErrorCollector`` instead and lets
each bad key's ``fallback`` (by default its default) stand in, so the caller can go on and report
the mistakes of the other sections too. ``Table.rows()`` describes the table for the docs. The
module sits in the bottom layer (it imports only ``streamdq.errors``), so the connectors' own
tables (sinks) use it as the engine's do.

>>> window = Key("window", duration(), default=60.0, doc="length of an event-time window")
>>> retries = Key("retries", integer(low=0), default=3, example=5)
>>> mode = Key("mode", one_of("fast", "safe"), default="safe")
>>> section = Table("demo", (window, retries, mode))
>>> section.parse({"window": "2 minutes", "mode": "fast"}, "demo")
{'window': 120.0, 'retries': 3, 'mode': 'fast'}
>>> try:
...     section.parse({"retries": -1, "mood": 1}, "demo")
... except ConfigError as exc:
...     print("\\n".join(exc.lines()))
demo.mood: unknown key; fix: known keys: mode, retries, window
demo.retries: expected an integer >= 0, got -1; fix: write e.g. retries: 5
>>> [row[:3] for row in section.rows()]
[('window', 'duration', '60'), ('retries', 'integer >= 0', '3'), ('mode', 'fast | safe', 'safe')]
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from streamdq.errors import ConfigError, ConfigErrors, ErrorCollector, InvalidArgument, UnknownName


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()
"""The ``default`` of a key that must be given."""


@dataclass(frozen=True)
class Check:
    """``check(key_path, value) -> typed value``; raises ConfigError naming ``key_path``.

    ``kind`` describes the accepted values for the docs (``integer >= 1``, ``json | csv``);
    ``nested`` (a sub-section's check, ``section()``) parses into the caller's collector, so a
    bad key of the sub-section is stood in for alone, not the whole sub-section."""

    fn: Callable[[str, Any], Any]
    kind: str
    nested: Callable[[str, Any, ErrorCollector], Any] | None = None

    def __call__(self, path: str, value: Any) -> Any:
        return self.fn(path, value)


@dataclass(frozen=True)
class Key:
    """One row of a table: ``name``, its ``check``, ``default`` (``REQUIRED``: must be given),
    ``fix`` (what to write; it replaces the check's own fix), ``example`` (a value for
    a ``write e.g. name: example`` fix), ``fallback`` (what stands in after a mistake when parsing
    with a collector; the default when not given), ``doc``, and ``shown``: the default as the docs
    write it in YAML (``1 minute``), when it is not a plain value."""

    name: str
    check: Check
    default: Any = None
    fix: str | None = None
    example: Any = None
    doc: str = ""
    fallback: Any = REQUIRED
    shown: str | None = None

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    def stand_in(self) -> Any:
        """The value a bad or missing key takes when the parse goes on past it."""
        if self.fallback is not REQUIRED:
            return self.fallback
        return None if self.required else self.default

    def fix_text(self) -> str:
        """What to write: ``fix``, else ``write e.g. name: example``, else what the key takes."""
        if self.fix is not None:
            return self.fix
        if self.example is not None:
            return f"write e.g. {self.name}: {self.example}"
        return f"give {self.name} a value of the form: {self.check.kind}"

    def parse(self, value: Any, path: str) -> Any:
        """``value`` checked; the error names ``path`` and always carries a fix (the check's
        own, else ``fix_text()``)."""
        try:
            return self.check(path, value)
        except ConfigError as exc:
            raise _with_fix(exc, self.fix_text(), replace=self.fix is not None) from None


def _with_fix(exc: ConfigError, fix: str, *, replace: bool = False) -> ConfigError:
    """``exc`` whose errors without a fix (every error, with ``replace``) carry ``fix``."""
    errors = [
        e if e.fix and not replace else ConfigError(e.key, e.problem, fix, e.file) for e in exc.errors_list()
    ]
    return errors[0] if len(errors) == 1 else ConfigErrors(errors)


@dataclass(frozen=True)
class Table:
    """A section of the run config as rows of ``Key``.

    ``what`` names the section in messages (``unknown key for a kafka sink``; None: plain
    ``unknown key``); ``known_label`` starts the fix of an unknown key; ``extra`` are keys the
    caller reads itself (``type`` of a sink), allowed but not parsed here; ``rules`` are the
    checks across keys (``rule(values, where)`` raising ConfigError), run on the parsed values
    when every key of the section is valid."""

    name: str
    keys: tuple[Key, ...]
    what: str | None = None
    known_label: str = "known keys"
    extra: tuple[str, ...] = ()
    rules: tuple[Callable[[dict[str, Any], str], None], ...] = ()

    def __post_init__(self) -> None:
        names = [k.name for k in self.keys]
        if len(set(names)) != len(names):
            raise InvalidArgument(f"table {self.name}: a key is listed twice")

    def names(self) -> tuple[str, ...]:
        return tuple(k.name for k in self.keys)

    def key(self, name: str) -> Key:
        for k in self.keys:
            if k.name == name:
                return k
        raise UnknownName(f"key of {self.name}", name, self.names())

    def defaults(self) -> dict[str, Any]:
        """Every optional key's default."""
        return {k.name: k.default for k in self.keys if not k.required}

    def parse(self, raw: Any, where: str, errs: ErrorCollector | None = None) -> dict[str, Any]:
        """Every key of the table, checked, defaults filled in (see the module docstring).

        Without ``errs`` every mistake is raised at once; with it they are recorded there and
        each bad key's stand-in is returned in its place."""
        own = errs is None
        collector = ErrorCollector() if errs is None else errs
        if not isinstance(raw, Mapping):
            collector.add(ConfigError(where, f"expected a mapping, got {raw!r}", self._example()))
            if own:
                collector.raise_if_any()
            return {k.name: k.stand_in() for k in self.keys}
        known = self.names()
        for name in sorted(raw, key=str):
            if name not in known and name not in self.extra:
                problem = "unknown key" + (f" for {self.what}" if self.what else "")
                listed = ", ".join([*self.extra, *known] if self.what else sorted(map(str, known)))
                collector.add(ConfigError(_join(where, str(name)), problem, f"{self.known_label}: {listed}"))
        before = len(collector)
        out: dict[str, Any] = {}
        for k in self.keys:
            path = _join(where, k.name)
            if k.name in raw and k.check.nested is not None and not own:
                nested = k.check.nested
                out[k.name] = collector.get(nested, path, raw[k.name], collector, default=k.stand_in())
            elif k.name in raw:
                out[k.name] = collector.get(k.parse, raw[k.name], path, default=k.stand_in())
            elif k.required:
                fix = (
                    k.fix
                    if k.fix is not None
                    else (k.fix_text() if k.example is not None else f"add {k.name}: <{k.check.kind}>")
                )
                problem = f"required for {self.what}" if self.what else "missing required key"
                collector.add(ConfigError(path, problem, fix))
                out[k.name] = k.stand_in()
            else:
                out[k.name] = k.default
        if len(collector) == before:
            for rule in self.rules:
                with collector.catch():
                    rule(out, where)
        if own:
            collector.raise_if_any()
        return out

    def _example(self) -> str:
        shown = [k for k in self.keys if k.example is not None][:2]
        if not shown:
            return f"write {self.name}: {{...}} with keys {', '.join(self.names())}"
        inner = ", ".join(f"{k.name}: {k.example}" for k in shown)
        return f"write e.g. {self.name}: {{{inner}}}"

    def rows(self) -> list[tuple[str, str, str, str]]:
        """``(key, accepted values, default, doc)`` per key, for the reference docs."""
        return [(k.name, k.check.kind, _shown(k), k.doc) for k in self.keys]

    def markdown(self) -> str:
        """The table as a Markdown table (docs/configuration.md is written from it)."""
        lines = ["| key | accepts | default | meaning |", "|---|---|---|---|"]
        for name, kind, default, doc in self.rows():
            cells = [f"`{name}`", kind, default, doc]
            lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
        return "\n".join(lines)


def _shown(key: Key) -> str:
    """A key's default as YAML would write it (``required``, ``none``, ``true``, ``60``)."""
    if key.shown is not None:
        return key.shown
    if key.required:
        return "required"
    value = key.default
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _join(where: str, name: str) -> str:
    return f"{where}.{name}" if where else name


# -- checks ---------------------------------------------------------------------------------


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def text(*, strip: bool = True) -> Check:
    """A non-empty string (``strip``: not only blanks)."""

    def check(path: str, value: Any) -> str:
        if not isinstance(value, str) or not (value.strip() if strip else value):
            raise ConfigError(path, f"expected a non-empty string, got {value!r}")
        return value

    return Check(check, "string")


def boolean() -> Check:
    """``true`` or ``false`` (YAML booleans only)."""

    def check(path: str, value: Any) -> bool:
        if not isinstance(value, bool):
            raise ConfigError(path, f"expected true or false, got {value!r}", "write true or false")
        return value

    return Check(check, "true | false")


def integer(low: int | None = None, high: int | None = None, *, meaning: str = "") -> Check:
    """An integer in ``[low, high]`` (either bound optional); ``meaning`` is said in the problem."""
    if low is not None and high is not None:
        kind = f"integer {low}-{high}"
    elif low is not None:
        kind = f"integer >= {low}"
    elif high is not None:
        kind = f"integer <= {high}"
    else:
        kind = "integer"

    def check(path: str, value: Any) -> int:
        if (
            isinstance(value, bool)
            or not isinstance(value, int)
            or (low is not None and value < low)
            or (high is not None and value > high)
        ):
            what = f"an {kind}" + (f" ({meaning})" if meaning else "")
            raise ConfigError(path, f"expected {what}, got {value!r}")
        return value

    return Check(check, kind)


def number(low: float | None = None, *, above: bool = False, unit: str = "", whole: bool = False) -> Check:
    """A finite number ``>= low`` (``above``: ``> low``) as a float; ``unit`` names it
    (``hours``) in the problem. NaN and infinities are refused. ``whole``: an integer, also when
    written as ``100.0``, returned as an int."""
    sign = ">" if above else ">="
    bound = "" if low is None else f" {sign} {low:g}"
    noun = f"a number of {unit}" if unit else "a finite number"
    if whole:
        return _whole(low, bound)

    def check(path: str, value: Any) -> float:
        ok = _is_number(value) and math.isfinite(value)
        if ok and low is not None:
            ok = value > low if above else value >= low
        if not ok:
            raise ConfigError(path, f"expected {noun}{bound}, got {value!r}")
        return float(value)

    return Check(check, f"number{bound}")


def _whole(low: float | None, bound: str) -> Check:
    def check(path: str, value: Any) -> int:
        ok = _is_number(value) and math.isfinite(value) and (low is None or value >= low)
        if not ok:
            raise ConfigError(path, f"expected a number{bound}, got {value!r}")
        if value != int(value):
            raise ConfigError(path, f"expected an integer{bound}, got {value!r}")
        return int(value)

    return Check(check, f"integer{bound}")


def one_of(*choices: Any, fix: str | None = None) -> Check:
    """One of ``choices`` (compared with ``==``)."""
    listed = ", ".join(map(str, choices))

    def check(path: str, value: Any) -> Any:
        if isinstance(value, bool) or value not in choices:
            raise ConfigError(path, f"expected one of {listed}, got {value!r}", fix or f"use one of {listed}")
        return value

    return Check(check, " | ".join(map(str, choices)))


_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]+)\s*$")
UNITS = {
    "ms": 0.001,
    "millisecond": 0.001,
    "milliseconds": 0.001,
    "s": 1,
    "sec": 1,
    "second": 1,
    "seconds": 1,
    "m": 60,
    "min": 60,
    "minute": 60,
    "minutes": 60,
    "h": 3600,
    "hour": 3600,
    "hours": 3600,
    "d": 86400,
    "day": 86400,
    "days": 86400,
}


def seconds_of(value: Any, path: str) -> float:
    """Seconds in ``"30 seconds"``, ``"1 minute"``, ``"5s"``, ``"2h"`` or a plain positive number.

    >>> seconds_of("90 s", "window"), seconds_of("1.5 minutes", "window"), seconds_of(2, "w")
    (90.0, 90.0, 2.0)
    """
    if _is_number(value) and math.isfinite(value) and value > 0:
        return float(value)
    if isinstance(value, str):
        m = _DURATION.match(value)
        if m and m.group(2).lower() in UNITS:
            seconds = float(m.group(1)) * UNITS[m.group(2).lower()]
            if seconds > 0:
                return seconds
    raise ConfigError(
        path,
        f"expected a positive duration such as '30 seconds' or '1 minute', got {value!r}",
        f"write e.g. {path.rsplit('.', 1)[-1]}: 30 seconds",
    )


def duration() -> Check:
    """A positive duration (``30 seconds``, ``1 minute``, ``5s``, a number of seconds) as seconds."""
    return Check(lambda path, value: seconds_of(value, path), "duration")


def mapping() -> Check:
    """Any mapping (a copy)."""

    def check(path: str, value: Any) -> dict[str, Any]:
        if not isinstance(value, Mapping):
            raise ConfigError(path, f"expected a mapping, got {value!r}")
        return dict(value)

    return Check(check, "mapping")


def str_map(*, values: str = "strings") -> Check:
    """A mapping of string keys; ``values="strings"`` wants string values, ``"any"`` takes any
    value and renders it as a string."""

    def check(path: str, value: Any) -> dict[str, str]:
        ok = isinstance(value, Mapping) and all(isinstance(k, str) for k in value)
        if ok and values == "strings":
            ok = all(isinstance(v, str) for v in value.values())
        if not ok:
            what = "a mapping of strings" if values == "strings" else "a mapping of option names to values"
            raise ConfigError(path, f"expected {what}, got {value!r}")
        return {str(k): str(v) for k, v in value.items()}

    return Check(check, "mapping of strings")


def list_of(item: Check, *, nonempty: bool = True, kind: str | None = None) -> Check:
    """A list whose every element passes ``item`` (errors name ``path[i]``)."""

    def check(path: str, value: Any) -> list[Any]:
        if not isinstance(value, list) or (nonempty and not value):
            raise ConfigError(
                path, f"expected a {'non-empty ' if nonempty else ''}list of {item.kind}, got {value!r}"
            )
        errs = ErrorCollector()
        out = [errs.get(item, f"{path}[{i}]", v, default=None) for i, v in enumerate(value)]
        errs.raise_if_any()
        return out

    return Check(check, kind or f"list of {item.kind}")


def optional(check: Check, *, off: Sequence[Any] = (None,)) -> Check:
    """``check``, or None for a value in ``off`` (by default only null)."""

    def inner(path: str, value: Any) -> Any:
        if any(value is o or (not isinstance(value, bool) and value == o) for o in off):
            return None
        return check(path, value)

    return Check(inner, f"{check.kind} | null")


def custom(fn: Callable[[str, Any], Any], kind: str) -> Check:
    """A check of a key whose rules are not one of the factories (a source spec, an instant)."""
    return Check(fn, kind)


def section(
    sub: Table,
    build: Callable[[dict[str, Any]], Any] = dict,
    *,
    shape: Callable[[str, Any], Any] | None = None,
) -> Check:
    """A nested section: ``shape(path, value)`` (optional) turns shorthand into a mapping
    (``state: ./dir`` is ``{path: ./dir}``), ``sub`` parses it (errors name ``path.key``) and
    ``build(values)`` makes the typed value (``StateConfig(**values)``). Parsed with a collector,
    a bad key of the section is recorded and stood in for alone."""

    def nested(path: str, value: Any, errs: ErrorCollector | None) -> Any:
        given = shape(path, value) if shape is not None else value
        return build(sub.parse(given, path, errs))

    return Check(lambda path, value: nested(path, value, None), f"mapping ({sub.name})", nested)


def table(sub: Table) -> Check:
    """A nested section parsed into a plain mapping (``section(sub)``)."""
    return section(sub)


__all__ = [
    "REQUIRED",
    "UNITS",
    "Check",
    "Key",
    "Table",
    "boolean",
    "custom",
    "duration",
    "integer",
    "list_of",
    "mapping",
    "number",
    "one_of",
    "optional",
    "seconds_of",
    "section",
    "str_map",
    "table",
    "text",
]
