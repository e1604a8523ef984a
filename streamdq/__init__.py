"""streamdq: always-on data-quality validation for streaming data on Apache Spark."""

from streamdq.checks import Check, Level, VerificationResult, load_checks, verify
from streamdq.engine.analysis import AnalyzerContext, analyze
from streamdq.engine.streaming import stream

__version__ = "0.1.0"

__all__ = [
    "AnalyzerContext",
    "Check",
    "Level",
    "VerificationResult",
    "analyze",
    "load_checks",
    "verify",
    "stream",
    "__version__",
]
