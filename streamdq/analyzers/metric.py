"""``Metric`` and its helpers, re-exported from :mod:`streamdq.metric` (where they live, at the
bottom of the import layers, so that ``streamdq.report`` can carry metrics without importing
the analyzers)."""

from streamdq.metric import COLUMN, DATASET, MULTICOLUMN, Metric, failure, success

__all__ = ["COLUMN", "DATASET", "MULTICOLUMN", "Metric", "failure", "success"]
