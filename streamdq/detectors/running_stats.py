"""Welford running mean and variance, the core math shared by the online and batch forms.

``welford_add`` follows breeze's ``meanAndVariance`` update (``mu += d/n``; ``m2 += (n-1)*d/n*d``)
so BatchNormal's batch form reproduces Deequ's numbers; ``sample_stddev`` is breeze's sample
standard deviation (0.0 for fewer than two points, as breeze returns). The running triple is
``[n, mean, m2]`` (a list, so it is JSON state as is). Cost: O(1) per point.

>>> stats = welford_of([1.0, 2.0, 3.0])
>>> stats, sample_stddev(stats), round(population_stddev(stats), 4)
([3.0, 2.0, 2.0], 1.0, 0.8165)
>>> sample_stddev(welford_of([5.0]))  # breeze: 0.0 below two points
0.0
"""

from __future__ import annotations

import math
from collections.abc import Iterable


def welford_empty() -> list[float]:
    return [0.0, 0.0, 0.0]


def welford_add(stats: list[float], value: float) -> list[float]:
    """The running ``[n, mean, m2]`` after adding ``value`` (returns a new list)."""
    n, mean, m2 = stats
    n += 1
    delta = value - mean
    mean = mean + delta / n
    m2 = m2 + (n - 1) * delta / n * delta
    return [n, mean, m2]


def welford_of(values: Iterable[float]) -> list[float]:
    stats = welford_empty()
    for value in values:
        stats = welford_add(stats, value)
    return stats


def sample_stddev(stats: list[float]) -> float:
    """Sample standard deviation (n - 1 in the denominator); 0.0 below two points (breeze)."""
    n, _, m2 = stats
    return math.sqrt(m2 / (n - 1)) if n > 1 else 0.0


def population_stddev(stats: list[float]) -> float:
    n, _, m2 = stats
    return math.sqrt(m2 / n) if n > 0 else 0.0
