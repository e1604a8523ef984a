"""``Metric``, its typed distribution values and helpers, re-exported from :mod:`streamdq.metric`
(where they live, at the bottom of the import layers, so that ``streamdq.report`` can carry
metrics without importing the analyzers)."""

from streamdq.metric import (
    COLUMN,
    DATASET,
    MULTICOLUMN,
    Bin,
    Distribution,
    Metric,
    Quantiles,
    failure,
    success,
)

__all__ = [
    "COLUMN",
    "DATASET",
    "MULTICOLUMN",
    "Bin",
    "Distribution",
    "Metric",
    "Quantiles",
    "failure",
    "success",
]
