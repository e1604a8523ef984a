"""Metric estimates from the counts a frequency state holds: all groups, or a theta sample.

Every function takes the per-group row counts the state holds and ``theta``, the
inclusion probability of a distinct key (1.0 when the state is exact: the estimates are
then the exact values with a bound of 0). In the sample form the held keys are a uniform
sample of the distinct keys and their counts are exact, so (all bounds are absolute, at
about ``SIGMAS`` = 3 standard deviations):

* a count of keys (CountDistinct, Histogram's number of bins) is ``r / theta`` with
  binomial 3-sigma bounds (``count_groups``);
* a sum over groups of a function of the count is Horvitz-Thompson (``sum_over_groups``);
* a per-row mean of a function of the row's key count (Uniqueness, Distinctness, Entropy,
  DuplicateRowCount / n) is a ratio estimator over the sampled keys (``row_share``: theta
  cancels, so an all-unique sample gives exactly 1.0 Uniqueness).

>>> import numpy as np
>>> count_groups(np.array([1, 2, 1, 3]), 1.0, lambda c: c == 1)
(2.0, 0.0)
>>> row_share(np.array([1, 1, 2]), 1.0, 4, lambda c: c == 1, exact=True)
(0.5, 0.0)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

SIGMAS = 3
_TAIL = 0.0013498980316301  # one-sided tail of 3 sigma


class _Approximate(Protocol):
    @property
    def approximate(self) -> bool: ...


def count_matching(counts: np.ndarray, predicate: Callable[[int], bool]) -> int:
    """How many of ``counts`` satisfy ``predicate``.

    A comparison predicate (``lambda c: c == 1``) is applied to the whole array at once: the
    total scope's exact table holds up to ~100,000 groups, and a Python call per group cost
    ~90 ms per metric on every microbatch. A predicate that does not broadcast over an array
    (it returns a scalar, or raises) is called once per count.

    >>> import numpy as np
    >>> count_matching(np.array([1, 2, 1, 3]), lambda c: c == 1)
    2
    >>> count_matching(np.array([1, 2, 1, 3]), lambda c: bool(c > 1))
    2
    """
    try:
        mask = np.asarray(predicate(counts))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        mask = None
    if mask is not None and mask.dtype == np.bool_ and mask.shape == counts.shape:
        return int(np.count_nonzero(mask))
    return sum(1 for v in counts.tolist() if predicate(v))


def theta_estimate(r: int, theta: float) -> tuple[float, float]:
    """(r / theta, absolute ~3-sigma bound) for r keys seen in a theta sample of N keys.

    r ~ Binomial(N, theta): the bounds are the N at which seeing r (or fewer / more)
    keys has a tail probability of 3 sigma (0.135%), found by bisection; never below r.
    """
    est = r / theta
    if theta >= 1.0:
        return est, 0.0
    # imported here, on the first sampled estimate: scipy.stats costs ~2 s to import, and
    # most runs (exact states) never need it
    from scipy.stats import binom

    def first(pred: Callable[[int], bool], lo: int) -> int:
        """Smallest N >= lo with pred(N) (pred monotone false -> true)."""
        hi = max(lo, 1)
        while not pred(hi):
            hi *= 2
        while lo < hi:
            mid = (lo + hi) // 2
            if pred(mid):
                hi = mid
            else:
                lo = mid + 1
        return lo

    upper = first(lambda n: float(binom.cdf(r, n, theta)) < _TAIL, r) - 1
    lower = r if r == 0 else first(lambda n: float(binom.sf(r - 1, n, theta)) >= _TAIL, r)
    return est, max(float(upper) - est, est - float(lower), 0.0)


def count_groups(
    counts: np.ndarray, theta: float, predicate: Callable[[int], bool] | None = None
) -> tuple[float, float]:
    """(estimate, absolute bound) of the number of groups whose count satisfies ``predicate``."""
    r = len(counts) if predicate is None else count_matching(counts, predicate)
    return theta_estimate(r, theta)


def sum_over_groups(
    counts: np.ndarray, theta: float, f: Callable[[np.ndarray], np.ndarray]
) -> tuple[float, float]:
    """(estimate, absolute bound) of sum over groups of ``f(c_k)`` (Horvitz-Thompson when sampled)."""
    values = np.asarray(f(counts.astype(np.float64)), dtype=np.float64)
    est = float(values.sum()) / theta
    if theta >= 1.0:
        return est, 0.0
    var = (1.0 - theta) / theta**2 * float((values**2).sum())
    return est, SIGMAS * math.sqrt(var)


def row_share(
    counts: np.ndarray, theta: float, n: int, f: Callable[[np.ndarray], np.ndarray], *, exact: bool
) -> tuple[float, float]:
    """(estimate, absolute bound) of (1/n) * sum over groups of ``c_k * f(c_k)``.

    That is the mean of ``f(count of the row's key)`` over the n rows (Uniqueness:
    f = [c == 1]; Distinctness: f = 1/c; Entropy: f = -ln(c/n)). Exact: computed over
    all groups. Sampled: the ratio estimator ``sum_s c f(c) / sum_s c`` over the sampled
    keys, with the delta-method variance ``(1 - theta) / (theta n)**2 * sum_s (c f(c) - R c)**2``,
    floored at ``3 / m`` of the value range for a sample of m keys (the rule of three:
    what the sample has not seen may still exist).
    """
    c = counts.astype(np.float64)
    y = c * np.asarray(f(c), dtype=np.float64)
    if exact:
        return (float(y.sum()) / n if n else 0.0), 0.0
    total = float(c.sum())
    if total == 0.0:
        return 0.0, 1.0
    ratio = float(y.sum()) / total
    residual = float(((y - ratio * c) ** 2).sum())
    var = (1.0 - theta) / (theta * max(n, 1)) ** 2 * residual
    floor = (1.0 - theta) * 3.0 / len(c)
    return ratio, max(SIGMAS * math.sqrt(var), floor)


def estimate_kwargs(state: _Approximate, bound: float) -> dict[str, Any]:
    """Metric keyword arguments flagging a value computed from the sample form."""
    if not state.approximate:
        return {}
    return {"approximate": True, "error_bound": float(bound)}
