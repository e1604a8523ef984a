"""A process-wide registry of classes by a key each class names: one mechanism for analyzers (by
``NAME``), state types (by ``TYPE_TAG``) and detectors (by ``TYPE``).

Where it runs: the driver and any Python process that builds analyzers, decodes states or builds
detectors. Thread-safe. Registering the same class again does nothing; another class under a key
already held raises the registry's ``taken`` error (a ``StreamdqError``) and changes nothing;
``unregister`` is the undo for a class registered for a while (a test fixture). An empty registry
answers ``get`` with None and ``snapshot`` with ``{}``. It knows no built-ins: the ``register``
modules above the built-ins fill it (``register_all``) by explicit calls.

>>> from streamdq.errors import StreamdqError
>>> class Taken(StreamdqError, ValueError): ...
>>> class Plugin:
...     KIND = "p"
>>> class Other:
...     KIND = "p"
>>> reg = ClassRegistry("plugin kind", lambda c: c.KIND, Taken)
>>> reg.register(Plugin) is Plugin, reg.register(Plugin) is Plugin
(True, True)
>>> reg.register_all([Other])
["plugin kind 'p' registered twice (Plugin, Other)"]
>>> reg.unregister(Other), reg.unregister(Plugin), reg.snapshot()
(False, True, {})
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Generic, TypeVar

from streamdq.errors import StreamdqError

T = TypeVar("T")


class ClassRegistry(Generic[T]):
    """Classes by ``key(cls)``; ``what`` names the key in messages (e.g. ``"analyzer name"``),
    ``taken`` is the error a second class under a held key raises."""

    def __init__(self, what: str, key: Callable[[type[T]], str], taken: type[StreamdqError]) -> None:
        self.what = what
        self._key = key
        self._taken = taken
        self._classes: dict[str, type[T]] = {}
        self._lock = threading.Lock()

    def register(self, cls: type[T]) -> type[T]:
        """Hold ``cls`` under its key (returns ``cls``); ``taken`` when another class holds it."""
        key = self._key(cls)
        with self._lock:
            owner = self._classes.get(key)
            if owner is not None and owner is not cls:
                raise self._taken(
                    f"{self.what} {key!r} registered twice ({owner.__qualname__}, {cls.__qualname__})"
                )
            self._classes[key] = cls
        return cls

    def register_all(self, classes: Iterable[type[T]]) -> list[str]:
        """Register each of ``classes``; the messages of those refused (their key was held by
        another class), the others registered all the same."""
        refused: list[str] = []
        for cls in classes:
            try:
                self.register(cls)
            except self._taken as exc:
                refused.append(str(exc))
        return refused

    def unregister(self, cls: type[T]) -> bool:
        """Forget ``cls``: True when it held its key, else False and nothing changes."""
        key = self._key(cls)
        with self._lock:
            if self._classes.get(key) is not cls:
                return False
            del self._classes[key]
        return True

    def get(self, key: str) -> type[T] | None:
        """The class held under ``key``, or None."""
        return self._classes.get(key)

    def snapshot(self) -> dict[str, type[T]]:
        """Every class registered so far, by key, sorted by key."""
        with self._lock:
            return dict(sorted(self._classes.items()))


__all__ = ["ClassRegistry"]
