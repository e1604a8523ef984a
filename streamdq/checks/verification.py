"""Compatibility alias: ``verify`` and ``VerificationResult`` live in :mod:`streamdq.verification`.

``verify`` runs the engine's analysis, so it sits above the checks (docs/architecture.md); this
module keeps ``from streamdq.checks.verification import verify`` working by resolving the names
on first access, so importing the checks never imports the engine. New code imports
``streamdq.verification`` (or ``streamdq.verify``).
"""

from __future__ import annotations

import importlib
from typing import Any

_MOVED = ("VerificationResult", "overall_status", "verify")


def __getattr__(name: str) -> Any:
    if name in _MOVED:
        return getattr(importlib.import_module("streamdq.verification"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = list(_MOVED)
