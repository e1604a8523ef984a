"""streamdq: always-on data-quality validation for streaming data on Apache Spark."""

from streamdq.engine.analysis import AnalyzerContext, analyze
from streamdq.engine.streaming import stream

__version__ = "0.1.0"

__all__ = ["AnalyzerContext", "analyze", "stream", "__version__"]
