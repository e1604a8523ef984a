"""The table-level quality score (Uber's Data Quality Monitor; docs/quality_score.md).

* ``model``: the math (standardize, PCA, Holt-Winters per component, bands 0..4).
* ``score``: ``QualityScorer``, the online scorer with its versioned state.
* ``monitor``: ``QualityScoreMonitor``, the streaming monitor of the run config's ``quality_score:``.
* ``backtest``: the score replayed over stored windows (``streamdq backtest --quality-score``).
"""

from __future__ import annotations

from streamdq.autovalidate.quality.score import QualityScoreConfig, QualityScorer, ScoreResult

__all__ = ["QualityScoreConfig", "QualityScorer", "ScoreResult"]
