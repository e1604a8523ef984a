"""Errors raised by streamdq at start-up.

``ConfigError`` is raised when a run config, a source spec, a sink spec or a checks file is
wrong. Its message names where the mistake is (optional file, then the dotted key path), what
is wrong, and how to fix it, e.g.
``orders.yaml: source.format: unknown value 'xml' (fix: use one of json, csv, clf, raw)``.
Configuration mistakes fail fast; bad *records* never raise (they become data-quality facts).

Two call forms are accepted (both are used across the code base):

* ``ConfigError(key, problem, fix=None, file=None)`` — structured;
* ``ConfigError(message, file=..., path=...)`` — a free-form message with an optional key path.
"""

from __future__ import annotations

from typing import Any


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
