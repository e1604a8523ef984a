"""streamdq: always-on data-quality validation for streaming data on Apache Spark."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from streamdq.checks import Check, Level, load_checks
    from streamdq.commands.profile import profile
    from streamdq.commands.suggest import suggest
    from streamdq.engine.analysis import AnalyzerContext, analyze
    from streamdq.engine.streaming import stream
    from streamdq.frames import to_spark
    from streamdq.verification import VerificationResult, verify

__version__ = "0.1.0"

# Lazy re-exports (PEP 562): importing a leaf module such as streamdq.connectors.sources.kafka_datasource
# in a Spark Python worker must not pull in checks/analyzers/engine (seconds per worker start).
_LAZY = {
    "Check": "streamdq.checks",
    "Level": "streamdq.checks",
    "VerificationResult": "streamdq.verification",
    "load_checks": "streamdq.checks",
    "verify": "streamdq.verification",
    "AnalyzerContext": "streamdq.engine.analysis",
    "analyze": "streamdq.engine.analysis",
    "stream": "streamdq.engine.streaming",
    "profile": "streamdq.commands.profile",
    "suggest": "streamdq.commands.suggest",
    "to_spark": "streamdq.frames",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'streamdq' has no attribute {name!r}")


__all__ = [
    "AnalyzerContext",
    "Check",
    "Level",
    "VerificationResult",
    "analyze",
    "load_checks",
    "verify",
    "profile",
    "suggest",
    "stream",
    "to_spark",
    "__version__",
]
