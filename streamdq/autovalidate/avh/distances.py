"""Two-distribution metrics between consecutive batches (AVH, Sec. 3.1, categorical).

Driver-side, over value -> count mappings (e.g. the ``values`` of a Histogram metric or
a pattern profile). Both inputs are normalised to probabilities over the union of keys.
KL uses additive smoothing ``eps`` so unseen keys stay finite; JS is the base-2
Jensen-Shannon divergence (in [0, 1]). An empty side raises ``ValueError``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any


def _probs(
    p: Mapping[Any, float], q: Mapping[Any, float], eps: float = 0.0
) -> tuple[list[float], list[float]]:
    keys = sorted(set(p) | set(q), key=repr)
    a = [float(p.get(k, 0.0)) + eps for k in keys]
    b = [float(q.get(k, 0.0)) + eps for k in keys]
    sa, sb = sum(a), sum(b)
    if sa <= 0 or sb <= 0:
        raise ValueError("both distributions need a positive total count")
    return [x / sa for x in a], [x / sb for x in b]


def l1(p: Mapping[Any, float], q: Mapping[Any, float]) -> float:
    a, b = _probs(p, q)
    return sum(abs(x - y) for x, y in zip(a, b, strict=True))


def linf(p: Mapping[Any, float], q: Mapping[Any, float]) -> float:
    a, b = _probs(p, q)
    return max(abs(x - y) for x, y in zip(a, b, strict=True))


def cosine(p: Mapping[Any, float], q: Mapping[Any, float]) -> float:
    """Cosine distance 1 - cos(p, q)."""
    a, b = _probs(p, q)
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return 1.0 - dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


def chi_squared(p: Mapping[Any, float], q: Mapping[Any, float]) -> float:
    """Symmetric chi-squared distance sum (p - q)^2 / (p + q) over non-empty cells."""
    a, b = _probs(p, q)
    return sum((x - y) ** 2 / (x + y) for x, y in zip(a, b, strict=True) if x + y > 0)


def kl(p: Mapping[Any, float], q: Mapping[Any, float], eps: float = 1e-6) -> float:
    a, b = _probs(p, q, eps)
    return sum(x * math.log(x / y) for x, y in zip(a, b, strict=True) if x > 0)


def js(p: Mapping[Any, float], q: Mapping[Any, float]) -> float:
    a, b = _probs(p, q)
    m = [(x + y) / 2 for x, y in zip(a, b, strict=True)]

    def _kl2(u: list[float]) -> float:
        return sum(x * math.log2(x / z) for x, z in zip(u, m, strict=True) if x > 0)

    return 0.5 * _kl2(a) + 0.5 * _kl2(b)
