"""How big a bounded frequency state may grow: the sample size for a ``max_groups`` bound.

A bounded state keeps at most ``k = 2**lg_k`` keys, where ``lg_k`` is log2(max_groups)
clamped to 5..12 (4096 keys, about 1.6% relative standard error on distinct counts, is
the cap). Shared by the Spark query, the driver-side merges and the v1 conversion.

>>> lg_k_for(100), sample_size(100), sample_size(1), sample_size(10**9)
(6, 64, 32, 4096)
"""

from __future__ import annotations

import math

MIN_LG_K = 5  # the smallest sample (and the smallest tuple sketch DataSketches builds)
# Cap of the sample size (4096 keys: ~1.6% relative standard error on distinct counts).
MAX_LG_K = 12


def lg_k_for(max_groups: int) -> int:
    """log2 of the sample size for a bound of ``max_groups`` groups (k <= max(max_groups, 32))."""
    return max(MIN_LG_K, min(MAX_LG_K, int(math.floor(math.log2(max(max_groups, 1))))))


def sample_size(max_groups: int) -> int:
    """k, the number of keys a bounded state keeps at bound ``max_groups`` (``2**lg_k``)."""
    return 1 << lg_k_for(max_groups)
