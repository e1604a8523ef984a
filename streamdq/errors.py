"""Errors raised at start-up for configuration mistakes (fail fast, name the file, key and fix)."""

from __future__ import annotations


class ConfigError(ValueError):
    """A configuration mistake. The message names the file (when known), the key path and the fix.

    ``ConfigError("sinks[2].port: expected an integer 1-65535, got 'abc'", file="run.yaml")``
    renders as ``run.yaml: sinks[2].port: expected an integer 1-65535, got 'abc'``.
    """

    def __init__(self, message: str, *, file: str | None = None, path: str | None = None) -> None:
        self.file = file
        self.path = path
        self.detail = message
        prefix = ""
        if file:
            prefix += f"{file}: "
        if path and not message.startswith(path):
            prefix += f"{path}: "
        super().__init__(prefix + message)

    def in_file(self, file: str) -> ConfigError:
        """The same error attributed to ``file`` (when it was not known where it was raised)."""
        if self.file:
            return self
        return ConfigError(self.detail, file=file, path=self.path)
