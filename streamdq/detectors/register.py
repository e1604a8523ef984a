"""Register the built-in detectors, by explicit call (pandera's ``register.py``).

Importing a detector module registers nothing. ``register_builtins()`` adds every built-in
detector class (``BUILTIN_DETECTORS``, by ``TYPE``) to the registry of
``streamdq.detectors.base``, once per process (idempotent and thread-safe). The look-ups here call
it first, so callers never need to: ``detector_from_spec(spec)`` (a detector from its YAML/JSON
spec), ``detector_types()`` and ``registered_detectors()``. User code registers its own class with
``register_detector(cls)`` (a plain call; a type a built-in holds is refused once the built-ins
are in).

The module sits above every built-in detector module (it imports them), so no detector module
imports it.

>>> from streamdq.detectors.base import detector_classes
>>> register_builtins()
>>> "online_normal" in detector_classes()
True
>>> detector_from_spec({"type": "absolute_change", "max_rate_increase": 5.0}).to_spec()["type"]
'absolute_change'
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from streamdq.detectors.absolute_change import AbsoluteChange
from streamdq.detectors.base import (
    DETECTOR_CLASSES,
    Detector,
    DetectorTypeTaken,
    build_detector,
    detector_classes,
)
from streamdq.detectors.batch_normal import BatchNormal
from streamdq.detectors.holt_winters import HoltWinters
from streamdq.detectors.online_normal import OnlineNormal
from streamdq.detectors.relative_rate_of_change import RelativeRateOfChange
from streamdq.detectors.river_adwin import Adwin
from streamdq.detectors.river_page_hinkley import PageHinkley
from streamdq.detectors.river_predictive import RiverPredictive
from streamdq.detectors.seasonal_buckets import SeasonalBuckets
from streamdq.detectors.simple_threshold import SimpleThreshold

BUILTIN_DETECTORS: tuple[type[Detector], ...] = (
    AbsoluteChange,
    Adwin,
    BatchNormal,
    HoltWinters,
    OnlineNormal,
    PageHinkley,
    RelativeRateOfChange,
    RiverPredictive,
    SeasonalBuckets,
    SimpleThreshold,
)

_LOCK = threading.Lock()
_DONE = False


def register_builtins() -> None:
    """Add every built-in detector class to the registry (once; thread-safe)."""
    global _DONE
    if _DONE:  # the common path: no lock once done
        return
    with _LOCK:
        if _DONE:
            return
        taken = DETECTOR_CLASSES.register_all(BUILTIN_DETECTORS)
        _DONE = True  # the look-ups work from now on, whatever was taken
    if taken:
        raise DetectorTypeTaken(
            f"built-ins shadowed by classes registered before them through detectors.base ({'; '.join(taken)}): "
            "register with streamdq.detectors.register_detector, which refuses a built-in's type"
        )


def register_detector(cls: type[Detector]) -> type[Detector]:
    """Register a user's detector class by its ``TYPE`` (returns ``cls``), the built-ins first, so
    a type a built-in holds is refused (``DetectorTypeTaken``) whenever it is called.
    Idempotent and thread-safe; ``unregister_detector`` undoes it."""
    register_builtins()
    return DETECTOR_CLASSES.register(cls)


def registered_detectors() -> dict[str, type[Detector]]:
    """Every registered detector class by type, the built-ins included (for suites that must
    cover them all)."""
    register_builtins()
    return detector_classes()


def detector_types() -> list[str]:
    """The registered detector type names, the built-ins included."""
    return sorted(registered_detectors())


def detector_from_spec(spec: Mapping[str, Any]) -> Detector:
    """Build a detector from its ``to_spec()`` dict; a ``ConfigError`` names the bad key.

    >>> detector_from_spec({"type": "no_such"})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    streamdq.errors.ConfigError: type: unknown detector type 'no_such' (fix: use one of absolute_change, adwin, ...)
    """
    return build_detector(spec, registered_detectors())


__all__ = [
    "BUILTIN_DETECTORS",
    "detector_from_spec",
    "detector_types",
    "register_builtins",
    "register_detector",
    "registered_detectors",
]
