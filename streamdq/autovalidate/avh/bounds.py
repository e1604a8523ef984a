"""False-positive-rate bounds for a metric series (Auto-Validate-by-History, Sec. 3).

Runs on the driver over a short history of per-batch metric values (plain floats).
Each bound maps a deviation of ``k`` standard deviations to an upper bound on the
probability that a value from the same distribution lies that far out (the FPR of a
constraint ``|x - mean| <= k * std``), and inverts it: ``k_for(fpr)``.

* Chebyshev (two-sided, any distribution): P(|X - mu| >= k sigma) <= 1 / k^2.
* Cantelli (one-sided, any distribution): P(X - mu >= k sigma) <= 1 / (1 + k^2).
* Normal tail (two-sided, assumes normality): P(|Z| >= k) = 2 (1 - Phi(k)). With the mean and
  standard deviation estimated from ``n`` history values (pass ``n``), a new value's deviation
  follows the prediction law instead: (X - mean) / (s sqrt(1 + 1/n)) is Student's t with n - 1
  degrees of freedom, so P(|X - mean| >= k s) = 2 P(T >= k / sqrt(1 + 1/n)). At n = 30 and an
  FPR of 1e-5 that is k = 5.42 instead of 4.42: thirty values do not pin down a 1e-5 tail.
* Extreme tail (two-sided, for a batch's minimum or maximum): by the extreme value theorem
  the maximum of many independent values tends to a Gumbel law when the values are
  unbounded and light-tailed (normal, exponential, gamma, lognormal) and to a reversed
  Weibull law when they are bounded (a percentage, a capped sensor). Standardised to mean
  0 and variance 1, the long side of either law (shape >= 1) is at most exponential:
  P(Z >= k) <= exp(-(1 + k)) (the reversed exponential attains it; the Gumbel long side is
  exp(-(g + k pi / sqrt 6)), lighter for k > 1.5). The bound puts that tail on both sides,
  2 exp(-(1 + k)), since which side is long depends on the data; the same for a minimum.
  Power-law values (Frechet law) have heavier extremes and are not covered.
* Skewed tail (two-sided): the same ``2 exp(-(1 + k))``, for a series the normal tail was meant
  for whose history is visibly not normal (``avh.looks_normal``): the day-to-day variation of a
  metric is not a sample mean's, and a skewed or heavy-shouldered history (delays on storm days,
  visibility on foggy ones) is priced as at most exponential on each side, not as normal. k is
  6.6 at 1e-3 and 11.2 at 1e-5 (normal: 3.3 and 4.4); lognormal-like tails are not covered.

* Binomial count (``binomial_count``, for a share of rows that was exactly 0 or 1 in every
  history batch: no NULL, no zero, no upper-case letter ever seen): each of a batch's ``n`` units
  (rows, or letters) is an event with an unknown rate ``p``; after zero events in the history's
  ``m`` units, ``p`` has the Jeffreys posterior Beta(1/2, m + 1/2), and the next batch's event
  count follows the predictive beta-binomial law BetaBinomial(n, 1/2, m + 1/2). The constraint
  admits the smallest count ``c`` with P(count > c) <= fpr; ``c = 0`` is "any event where the
  history had none", priced at P(count > 0), about 1 / (2 x history batches): 0.016 after 30
  batches, so it is affordable at a target of 0.05 and not at 0.001, where one event is admitted
  (P(count > 1) = 0.0004 for 72-row batches after 30 complete ones). Exact counting, not a normal
  approximation (the normal floor admitted 5 NULLs in 72 rows). The predictive law is the FPR
  itself (the probability that the next real batch breaks the constraint), like the Student-t
  prediction law of the normal tail; the earlier rule (the 95% upper bound of ``p``, then the
  binomial tail at that rate) priced "any NULL" at 0.095 and admitted 2 events at 1e-3. On the
  benchmark's feeds "any NULL where 30 days had none" happened on 2 of 669 column-days (0.003)
  against the law's 0.016, and "more than one" on none against 0.0004 (bench/README.md).

``interval(history, fpr, bound)`` turns a history into ``(low, high)``. An empty
history raises ``ValueError``; a near-constant history is widened by a
minimum-variance floor (``min_std``, relative to the mean's magnitude) so a
constant series does not flag every float wiggle.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

from scipy.stats import norm, t

from streamdq.errors import InvalidArgument

Bound = Literal["chebyshev", "cantelli", "normal", "extreme", "skewed", "binomial"]


JEFFREYS = 0.5  # Beta(1/2, 1/2): the Jeffreys prior of an event rate


def _rare_event_law(units: float, seen: float, prior: float) -> Any:
    from scipy.stats import betabinom

    n, m = max(1, round(units)), max(1, round(seen))
    return betabinom(n, prior, m + prior)


def binomial_count(fpr: float, units: float, seen: float, prior: float = JEFFREYS) -> int:
    """The smallest event count ``c`` with P(count > c) <= ``fpr`` in a batch of ``units`` units
    after zero events in ``seen`` units (the predictive beta-binomial law of the module
    docstring, Beta(``prior``, ``prior``) before the history). ``units`` and ``seen`` are rounded
    to whole units (at least 1). 0 means any event breaks the constraint.

    >>> binomial_count(0.001, 72, 2160), binomial_count(0.05, 72, 2160)
    (1, 0)
    """
    if not 0.0 < fpr < 1.0:
        raise InvalidArgument(f"fpr must be in (0, 1), got {fpr}")
    law = _rare_event_law(units, seen, prior)
    count = max(int(law.isf(fpr)) - 1, 0)
    while float(law.sf(count)) > fpr:
        count += 1
    return count


def binomial_fpr(count: int, units: float, seen: float, prior: float = JEFFREYS) -> float:
    """P(count > ``count``) under the predictive law of ``binomial_count``: the FPR of admitting
    at most ``count`` events.

    >>> round(binomial_fpr(0, 72, 2160), 4)
    0.0163
    """
    return float(_rare_event_law(units, seen, prior).sf(count))


def poisson_lower(fpr: float, mean: float, batches: int, prior: float = JEFFREYS) -> int:
    """The smallest count a batch may hold when its count is Poisson at a rate learned from
    ``batches`` history counts averaging ``mean``: the largest ``c`` with P(count < c) <= ``fpr``
    under the predictive law of the next count. The rate has the Jeffreys posterior
    Gamma(total + 1/2, batches) (``total = mean x batches``), so the next count is negative
    binomial with ``total + 1/2`` successes at ``batches / (batches + 1)``: the Poisson spread
    plus the rate's uncertainty, as ``sqrt(1 + 1/n)`` widens the normal tail.

    The lower side of a row count whose Poisson floor sets its spread (``learner._Fit.poisson``):
    Poisson's left tail is lighter than the normal one, so the normal tail on the floor (with the
    Student-t law of 30 points) admitted 26 rows of a 72-row day at 1e-5 where the count's own law
    admits 38.

    >>> poisson_lower(1e-5, 72.0, 30), poisson_lower(1e-3, 72.0, 30)
    (38, 47)
    """
    from scipy.stats import nbinom

    if not 0.0 < fpr < 1.0:
        raise InvalidArgument(f"fpr must be in (0, 1), got {fpr}")
    if batches < 1 or mean < 0:
        raise InvalidArgument(f"poisson_lower needs >= 1 batch and a mean >= 0, got {batches}, {mean}")
    law = nbinom(mean * batches + prior, batches / (batches + 1.0))
    # ppf: the smallest c with P(count <= c) >= fpr, so P(count < c) = P(count <= c - 1) < fpr
    return max(int(law.ppf(fpr)), 0)


def _prediction_scale(n: int | None) -> float | None:
    """``sqrt(1 + 1/n)`` when ``n`` history values carry a t law (n >= 3), else None."""
    if n is not None and n < 1:
        raise ValueError(f"n must be >= 1 history values, got {n}")
    return math.sqrt(1.0 + 1.0 / n) if n is not None and n >= 3 else None


def fpr_at(k: float, bound: Bound, n: int | None = None) -> float:
    """Upper bound on the FPR of a +-k sigma (one-sided for Cantelli) constraint; for the normal
    tail with ``n`` (>= 3) history values, the Student-t prediction law (module docstring)."""
    if k <= 0:
        return 1.0
    scale = _prediction_scale(n) if bound == "normal" else None
    if scale is not None and n is not None:
        return float(2.0 * t.sf(k / scale, n - 1))
    if bound == "chebyshev":
        return min(1.0, 1.0 / (k * k))
    if bound == "cantelli":
        return 1.0 / (1.0 + k * k)
    if bound == "normal":
        return float(2.0 * norm.sf(k))
    if bound in ("extreme", "skewed"):
        return min(1.0, 2.0 * math.exp(-(1.0 + k)))
    raise InvalidArgument(f"unknown bound {bound!r}")


def k_for(fpr: float, bound: Bound, n: int | None = None) -> float:
    """Smallest k whose FPR bound is <= ``fpr`` (0 < fpr < 1); ``n`` as in ``fpr_at``."""
    if not 0.0 < fpr < 1.0:
        raise InvalidArgument(f"fpr must be in (0, 1), got {fpr}")
    scale = _prediction_scale(n) if bound == "normal" else None
    if scale is not None and n is not None:
        return float(t.isf(fpr / 2.0, n - 1) * scale)
    if bound == "chebyshev":
        return 1.0 / math.sqrt(fpr)
    if bound == "cantelli":
        return math.sqrt(1.0 / fpr - 1.0)
    if bound == "normal":
        return float(norm.isf(fpr / 2.0))
    if bound in ("extreme", "skewed"):
        return max(math.log(2.0 / fpr) - 1.0, 0.0)
    raise InvalidArgument(f"unknown bound {bound!r}")


def interval(
    history: Sequence[float],
    fpr: float = 0.001,
    bound: Bound = "chebyshev",
    min_std: float = 1e-6,
) -> tuple[float, float]:
    """Acceptance interval ``mean +- k * std`` for the next value of ``history``.

    ``std`` is the sample standard deviation (ddof=1 when n > 1), floored at
    ``min_std * max(1, |mean|)``; the normal tail uses the prediction law of the n values.
    """
    values = [float(v) for v in history if v is not None and not math.isnan(float(v))]
    if not values:
        raise InvalidArgument("interval needs a non-empty history of finite values")
    n = len(values)
    mean = sum(values) / n
    var = sum((v - mean) ** 2 for v in values) / (n - 1) if n > 1 else 0.0
    std = max(math.sqrt(var), min_std * max(1.0, abs(mean)))
    k = k_for(fpr, bound, n)
    return mean - k * std, mean + k * std
