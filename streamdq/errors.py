"""Errors shared by the whole project.

``ConfigError`` is raised at start-up for a configuration mistake; its message names the
key path (e.g. ``sinks[2].port``), what was expected and what was found, so the user can
fix the file without reading code.
"""

from __future__ import annotations


class ConfigError(ValueError):
    """A configuration mistake, detected before the stream starts."""
