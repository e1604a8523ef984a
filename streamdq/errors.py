"""Errors raised by streamdq at start-up.

``ConfigError`` is raised when a run config, a source spec, a sink spec or a checks file is
wrong. Its message names where the mistake is (optional file, then the dotted key path), what
is wrong, and how to fix it, e.g.
``orders.yaml: source.format: unknown value 'xml' (fix: use one of json, csv, clf, raw)``.
Configuration mistakes fail fast; bad *records* never raise (they become data-quality facts).

Two call forms are accepted (both are used across the code base):

* ``ConfigError(key, problem, fix=None, file=None)`` — structured;
* ``ConfigError(message, file=..., path=...)`` — a free-form message with an optional key path.

Mistakes are reported all at once: ``ErrorCollector`` gathers the ``ConfigError`` raised by
independent validation steps (``collector.get(fn, *args, default=...)`` or ``with
collector.catch(): ...``) and ``collector.raise_if_any()`` raises one ``ConfigErrors`` holding
them all (a single error is raised as itself). ``ConfigErrors`` is itself a ``ConfigError`` (its
key, problem and fix are the first error's), so every ``except ConfigError`` keeps working;
``str()`` is each error's message, one per line.
``ConfigError.line()`` is the one-line report form ``file: key: problem; fix: ...``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

T = TypeVar("T")


class ConfigError(ValueError):
    """A configuration mistake, found before the stream starts.

    ``key`` (alias ``path``) is the dotted path of the offending key (``source.schema``),
    ``problem`` says what is wrong, ``fix`` says what to do, ``file`` names the config file.
    """

    def __init__(
        self,
        *args: Any,
        file: str | None = None,
        path: str | None = None,
        fix: str | None = None,
        key: str | None = None,
        problem: str | None = None,
    ) -> None:
        if len(args) >= 2:
            key = str(args[0])
            problem = str(args[1])
            if len(args) > 2 and args[2] is not None:
                fix = str(args[2])
            if len(args) > 3 and args[3] is not None:
                file = str(args[3])
        elif len(args) == 1:
            problem = str(args[0])
            key = key or path
        self.key = key or path or ""
        self.path = self.key
        self.problem = problem or ""
        self.detail = self.problem
        self.fix = fix
        self.file = file
        super().__init__(self._render())

    def _render(self) -> str:
        prefix = f"{self.file}: " if self.file else ""
        if self.key and not self.problem.startswith(self.key):
            prefix += f"{self.key}: "
        suffix = f" (fix: {self.fix})" if self.fix else ""
        return f"{prefix}{self.problem}{suffix}"

    def with_file(self, file: str) -> ConfigError:
        """The same error, naming the config file it came from (kept if already named)."""
        if self.file:
            return self
        return (
            ConfigError(self.key, self.problem, self.fix, file)
            if self.key
            else ConfigError(self.problem, file=file, fix=self.fix)
        )

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
