"""The engine's side of window monitors: build the ones a run config asks for.

The contract (``WindowMonitor``, ``MonitorOutput``, ``MONITOR_KEY_PREFIX``) and the registry
live in the neutral module :mod:`streamdq.monitors`; they are re-exported here for the imports
that name ``streamdq.engine.monitor``. The engine finds monitors by run-config key through the
registry, as it finds sinks by ``type``, so it never names the packages that implement them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from streamdq.monitors import MONITOR_KEY_PREFIX, MonitorOutput, MonitorRegistry, WindowMonitor
from streamdq.register import monitor_registry

if TYPE_CHECKING:
    from streamdq.engine.config import RunConfig


def build_monitors(
    config: RunConfig, checks: Sequence[Any] = (), registry: MonitorRegistry | None = None
) -> list[WindowMonitor]:
    """The monitors a run config asks for (``auto_validate:``, ``quality_score:``, any key
    registered in ``registry``), validated, in registration order.

    Configuration mistakes raise ``ConfigError`` naming the key; nothing is started.
    """
    reg = monitor_registry() if registry is None else registry
    return reg.build_all(config.monitors, config.dataset)


__all__ = [
    "MONITOR_KEY_PREFIX",
    "MonitorOutput",
    "MonitorRegistry",
    "WindowMonitor",
    "build_monitors",
    "monitor_registry",
]
