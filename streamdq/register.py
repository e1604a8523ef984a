"""Fill the process-wide registries with streamdq's built-ins, by explicit call.

pandera's ``register.py`` is the model: importing a module registers nothing; the engine calls
``register_builtins()`` (idempotent, thread-safe) before it reads a registry, and user code may
call it too before registering its own. It sits between the engine and the packages whose
built-ins it names (the engine never names autovalidate): engine -> register -> autovalidate.

The factories import their package on first use, so registering costs no import of scipy or
Spark.

>>> from streamdq.monitors import MonitorRegistry
>>> reg = MonitorRegistry()
>>> register_monitors(reg)
>>> reg.keys()
('auto_validate', 'quality_score')
"""

from __future__ import annotations

import threading
from typing import Any

from streamdq.monitors import MONITORS, MonitorRegistry, WindowMonitor

_LOCK = threading.Lock()
_DONE = False


def _auto_validate_settings(section: Any) -> Any:
    from streamdq.autovalidate.avh.monitor import auto_validate_settings

    return auto_validate_settings(section)


def _auto_validate(settings: Any, dataset: str) -> WindowMonitor | None:
    from streamdq.autovalidate.avh.monitor import auto_validate_monitor

    return auto_validate_monitor(settings, dataset)


def _quality_settings(section: Any) -> Any:
    from streamdq.autovalidate.quality.monitor import quality_settings

    return quality_settings(section)


def _quality_score(settings: Any, dataset: str) -> WindowMonitor | None:
    from streamdq.autovalidate.quality.monitor import quality_monitor

    return quality_monitor(settings, dataset)


def register_monitors(registry: MonitorRegistry) -> None:
    """The built-in window monitors, by run-config key: ``auto_validate`` (programs learned
    from history, docs/autovalidate.md) and ``quality_score`` (docs/quality_score.md); a
    section with a parser (``parse=``) is parsed once into settings, from which its monitor is
    built."""
    registry.register("auto_validate", _auto_validate, parse=_auto_validate_settings)
    registry.register("quality_score", _quality_score, parse=_quality_settings)


def register_builtins() -> None:
    """Register every built-in into the process-wide registries, once."""
    global _DONE
    with _LOCK:
        if _DONE:
            return
        register_monitors(MONITORS)
        _DONE = True


def monitor_registry() -> MonitorRegistry:
    """The process-wide monitor registry (``streamdq.monitors.MONITORS``), built-ins registered."""
    register_builtins()
    return MONITORS


__all__ = ["monitor_registry", "register_builtins", "register_monitors"]
