"""The errors streamdq raises on purpose, and the one form of a configuration error.

Contract:

* ``StreamdqError`` is the base of every error the package raises on purpose (a configuration
  mistake, a bad expression or measure query, unreadable state bytes, a service error, ...).
  ``except StreamdqError`` catches them all and nothing else: any other exception is a bug or
  a failure of something underneath (Spark, the network, the disk).
* ``ConfigError(key, problem, fix=None, file=None)`` is a configuration mistake, found before
  the stream starts (a run config, a source or sink spec, a checks file, a CLI flag). ``key`` is
  the dotted path of the offending key (``source.schema``, ``checks[2].constraints[0]``, or a
  flag such as ``--state``; ``""`` for the file as a whole, e.g. when it is not valid YAML),
  ``problem`` says what is wrong, ``fix`` what to do, ``file`` which file. This is the only form:
  the key is never baked into the problem text, so ``exc.key`` always says where. It is also a
  ``ValueError``, so older ``except ValueError`` code keeps working.
* A public function or constructor handed a value it does not take (an empty history, a rate
  outside (0, 1), an unknown mode) raises ``InvalidArgument`` (also a ``ValueError``), or
  ``InvalidType`` (also a ``TypeError``) for a value of the wrong type; a look-up by a name that is
  not registered (an analyzer, a constraint kind) raises ``UnknownName`` (also a ``KeyError``),
  which names what was asked and what there is. The builtin second base keeps older ``except
  ValueError`` / ``except KeyError`` code working; ``str()`` of ``UnknownName`` is its message
  (not quoted as a plain ``KeyError``'s is).
* ``str(exc)`` is ``file: key: problem (fix: fix)`` (file, key and fix only where known);
  ``exc.line()`` is the report form ``file: key: problem; fix: fix``.
* Mistakes are reported all at once: ``ErrorCollector`` gathers the ``ConfigError`` raised by
  independent validation steps (``collector.get(fn, *args, default=...)`` or ``with
  collector.catch(): ...``) and ``collector.raise_if_any()`` raises one ``ConfigErrors`` holding
  them all (a single error is raised as itself). ``ConfigErrors`` is itself a ``ConfigError`` (its
  key, problem, fix and file are the first error's), so every ``except ConfigError`` keeps
  working; ``str()`` is each error's message, one per line.

Bad *records* never raise: they are data-quality facts (counted, quarantined).

>>> err = ConfigError("source.format", "unknown value 'xml'", "use one of json, csv, clf, raw")
>>> str(err.with_file("orders.yaml"))
"orders.yaml: source.format: unknown value 'xml' (fix: use one of json, csv, clf, raw)"
>>> err.key, isinstance(err, StreamdqError), isinstance(err, ValueError)
('source.format', True, True)
>>> err = UnknownName("analyzer", "Meen", ["Mean", "Maximum", "Size"])
>>> str(err), err.name, isinstance(err, KeyError)
("unknown analyzer 'Meen'; did you mean 'Mean'? (known: Maximum, Mean, Size)", 'Meen', True)
>>> errs = ErrorCollector("orders.yaml")
>>> with errs.catch():
...     raise ConfigError("window", "expected a positive duration, got -1", "write window: 1 minute")
>>> errs.add(ConfigError("dataset", "missing required key"))
>>> try:
...     errs.raise_if_any()
... except ConfigError as exc:
...     print([e.key for e in exc.errors_list()])
...     print(exc.lines()[0])
['window', 'dataset']
orders.yaml: window: expected a positive duration, got -1; fix: write window: 1 minute
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

T = TypeVar("T")


class StreamdqError(Exception):
    """Base of every error streamdq raises on purpose (see the module docstring)."""


class InvalidArgument(StreamdqError, ValueError):
    """A public function or constructor was handed a value it does not take (an empty history, a
    rate outside (0, 1), an unknown mode name). Also a ``ValueError``, for older callers."""


class InvalidType(StreamdqError, TypeError):
    """A public function was handed a value of a type it does not take (say, a frame that is
    neither pandas nor Spark). Also a ``TypeError``, for older callers."""


class UnknownName(StreamdqError, KeyError):
    """A look-up by a name that is not registered: ``what`` (``analyzer``, ``constraint``...),
    the ``name`` asked for and the ``known`` names (sorted). ``str()`` is the message
    ``unknown <what> '<name>'; did you mean '<close>'? (known: a, b, c)`` (the did-you-mean only
    when a known name is close), also ``args[0]``; ``problem`` is the same without the list of
    known names (for a report line). Also a ``KeyError``, for older callers."""

    def __init__(self, what: str, name: object, known: Iterable[str] = ()) -> None:
        self.what = str(what)
        self.name = name
        self.known: tuple[str, ...] = tuple(sorted(known))
        close = difflib.get_close_matches(str(name), self.known, n=1, cutoff=0.5)
        self.problem = f"unknown {self.what} {name!r}"
        if close:
            self.problem += f"; did you mean {close[0]!r}?"
        known_list = f" (known: {', '.join(self.known)})" if self.known else ""
        super().__init__(self.problem + known_list)

    def __str__(self) -> str:
        return str(self.args[0])

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.what, self.name, self.known))


class ConfigError(StreamdqError, ValueError):
    """A configuration mistake, found before the stream starts.

    ``ConfigError(key, problem, fix=None, file=None)``: ``key`` is the dotted path of the
    offending key (``source.schema``; ``""`` for the whole file), ``problem`` says what is wrong
    (without the key), ``fix`` says what to do, ``file`` names the config file. A lone message
    (``ConfigError("oops")``) is a ``TypeError``: an error always says where.
    """

    def __init__(self, key: str, problem: str, fix: str | None = None, file: str | None = None) -> None:
        self.key = str(key)
        self.problem = str(problem)
        self.fix = None if fix is None else str(fix)
        self.file = None if file is None else str(file)
        super().__init__(self._render())

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.key, self.problem, self.fix, self.file))

    def _render(self) -> str:
        prefix = f"{self.file}: " if self.file else ""
        if self.key and not self.problem.startswith(f"{self.key}: "):
            prefix += f"{self.key}: "
        suffix = f" (fix: {self.fix})" if self.fix else ""
        return f"{prefix}{self.problem}{suffix}"

    def with_file(self, file: str) -> ConfigError:
        """The same error, naming the config file it came from (kept if already named)."""
        if self.file:
            return self
        return ConfigError(self.key, self.problem, self.fix, file)

    in_file = with_file

    def line(self) -> str:
        """The report line ``file: key: problem; fix: <fix>`` (file, key and fix only where known)."""
        parts = [p for p in (self.file, self.key) if p]
        problem = self.problem
        if self.key and problem.startswith(f"{self.key}: "):
            problem = problem[len(self.key) + 2 :]
        text = ": ".join([*parts, problem])
        return f"{text}; fix: {self.fix}" if self.fix else text

    def errors_list(self) -> tuple[ConfigError, ...]:
        """The individual errors: this one alone (``ConfigErrors`` overrides it)."""
        return (self,)


class ConfigErrors(ConfigError):
    """Several configuration mistakes found in one run (at least one).

    ``errors`` holds them in the order found; ``key``/``problem``/``fix``/``file`` are the
    first one's; ``str()`` is each error's own message, one per line; ``lines()`` gives the
    report form ``file: key: problem; fix: ...`` of each.
    """

    def __init__(self, errors: Iterable[ConfigError]) -> None:
        flat: list[ConfigError] = []
        for error in errors:
            flat.extend(error.errors_list())
        if not flat:
            raise ValueError("ConfigErrors needs at least one error")
        self.errors: tuple[ConfigError, ...] = tuple(flat)
        first = flat[0]
        super().__init__(first.key, first.problem or "invalid", first.fix, first.file)
        self.args = (str(self),)

    def __str__(self) -> str:
        return "\n".join(str(e) for e in self.errors)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.errors,))

    def lines(self) -> list[str]:
        return [e.line() for e in self.errors]

    def errors_list(self) -> tuple[ConfigError, ...]:
        return self.errors

    def with_file(self, file: str) -> ConfigErrors:
        return ConfigErrors(e.with_file(file) for e in self.errors)

    in_file = with_file


class ErrorCollector:
    """Gathers ConfigErrors from independent validation steps, to report them all at once."""

    def __init__(self, file: str | None = None) -> None:
        self.file = file
        self.errors: list[ConfigError] = []

    def add(self, error: ConfigError) -> None:
        """Record ``error`` (a ``ConfigErrors`` adds each of its errors), naming ``file``."""
        for one in error.errors_list():
            self.errors.append(one.with_file(self.file) if self.file else one)

    def extend(self, errors: Iterable[ConfigError]) -> None:
        for error in errors:
            self.add(error)

    @contextmanager
    def catch(self) -> Iterator[None]:
        """``with collector.catch(): step()`` records the step's ConfigError and goes on."""
        try:
            yield
        except ConfigError as exc:
            self.add(exc)

    def get(self, fn: Callable[..., T], *args: Any, default: T, **kwargs: Any) -> T:
        """``fn(*args, **kwargs)``, or ``default`` after recording its ConfigError."""
        try:
            return fn(*args, **kwargs)
        except ConfigError as exc:
            self.add(exc)
            return default

    def __bool__(self) -> bool:
        return bool(self.errors)

    def __len__(self) -> int:
        return len(self.errors)

    def raise_if_any(self) -> None:
        """Raise what was recorded: one error as itself, several as one ``ConfigErrors``."""
        if len(self.errors) == 1:
            raise self.errors[0]
        if self.errors:
            raise ConfigErrors(self.errors)
