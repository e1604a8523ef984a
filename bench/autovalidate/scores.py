"""Threshold-free baselines: a score per judged batch, and the threshold matched to AVH's alarms.

AVH's FPR target and a baseline's threshold are different knobs, so comparing one AVH program with
OnlineNormal at 3 sigma compares two points on two different precision/recall curves. These
baselines give each judged batch a score (the larger, the more anomalous); after the run, one
threshold per method is chosen ON THE EVALUATION DATA so that the method raises no more false alarms
on the real batches than AVH did (``matched_threshold``), and its recall at that threshold is
reported. The choice sees the answers, so the baseline is an optimistic (oracle-calibrated) one: a
user could not set that threshold in advance.

- ``zscore``: the 3-sigma rule's metrics (``baselines.fixed_metrics``: the metrics OnlineNormal
  watches), each scored ``|x - mean| / std`` against the 30 history batches (sample std; the
  tested batch is not in the moments, unlike OnlineNormal, which caps what it can flag near 5.4
  sigma with 31 points); the batch's score is the largest. A metric that every history batch had
  and the batch lacks (the mean of an all-NULL batch) scores infinity, as does any change of a
  metric whose history is constant.
- ``zscore_all``: the same rule over AVH's own metric space (every single- and two-distribution
  metric of ``streamdq.autovalidate.avh.features`` on the engine's profiles, the very profiles AVH
  learns from), the spread floored as AVH floors it (``avh.std_floor``); distances to the previous
  batch are scored one-sided. What AVH adds over it is the per-metric bound, the differencing and
  the budgeted selection.

Pure functions on floats and profiles; the harness records the scores (``ScoreRecord``).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from streamdq.autovalidate.avh.features import pair_metrics, single_metrics
from streamdq.autovalidate.avh.learner import std_floor
from streamdq.autovalidate.avh.profile import ColumnProfile

SWEEP = (2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 15.0, 20.0, 50.0)


def z_of(history: Sequence[float], value: float | None, floor: float = 0.0, one_sided: bool = False) -> float:
    """How many history standard deviations ``value`` lies from the history's mean (NaN-free
    ``history``; ``floor`` bounds the std from below). Fewer than two history points: 0 (nothing
    to compare with). A missing or non-finite value against a non-empty history: infinity.
    ``one_sided``: only values above the mean score (distances)."""
    if len(history) < 2:
        return 0.0
    if value is None or not math.isfinite(value):
        return math.inf
    arr = np.asarray(history, dtype=float)
    mean = float(arr.mean())
    std = max(float(arr.std(ddof=1)), floor)
    delta = value - mean if one_sided else abs(value - mean)
    if delta <= 0:
        return 0.0
    return math.inf if std == 0 else delta / std


def max_z(
    history: Mapping[str, Sequence[float]],
    values: Mapping[str, float | None],
    floors: Mapping[str, float] | None = None,
    one_sided: frozenset[str] = frozenset(),
) -> float:
    """The largest ``z_of`` over the metrics of ``history`` (0.0 for no metric)."""
    floors = floors or {}
    return max(
        (
            z_of(series, values.get(name), floors.get(name, 0.0), name in one_sided)
            for name, series in history.items()
        ),
        default=0.0,
    )


def profile_scorer(
    history: Sequence[ColumnProfile], min_std: float = 1e-6
) -> Callable[[ColumnProfile], float]:
    """``zscore_all``: the largest z of a profile over AVH's metric space, against ``history`` (oldest
    first; the scored profile follows ``history[-1]``). Metrics missing from some history batch are
    not scored, as AVH builds no candidate on them."""
    singles = [single_metrics(p) for p in history]
    pairs = [pair_metrics(a, b) for a, b in zip(history, history[1:], strict=False)]
    series: dict[str, list[float]] = {}
    for table in (singles, pairs):
        for name in set().union(*table) if table else set():
            values = [s.get(name) for s in table]
            if all(v is not None for v in values):
                series[name] = [float(v) for v in values if v is not None]
    rows = float(np.mean([p.rows for p in history])) if history else 0.0
    floors = {name: std_floor(name, values, rows, min_std) for name, values in series.items()}
    distances = frozenset(name for name in series if name.startswith("dist_"))

    def score(profile: ColumnProfile) -> float:
        values: dict[str, float | None] = dict(single_metrics(profile))
        if history:
            values.update(pair_metrics(history[-1], profile))
        return max_z(series, values, floors, distances)

    return score


def matched_threshold(clean_scores: Sequence[float], alarms: int) -> float:
    """The smallest threshold at which at most ``alarms`` of the ``clean_scores`` are flagged
    (flagged = score strictly above the threshold). When more than ``alarms`` clean scores are
    infinite, the result is infinity, at which nothing at all is flagged (every finite threshold
    would flag them all)."""
    if alarms < 0:
        raise ValueError(f"alarms must be >= 0, got {alarms}")
    ordered = sorted(clean_scores, reverse=True)
    if alarms >= len(ordered):
        return -math.inf
    return ordered[alarms]


@dataclass
class ScoreRecord:
    """The scores one method gave: on real batches (with whether the day is a known incident) and on
    corrupted ones (per corruption name)."""

    clean: list[tuple[float, bool]] = field(default_factory=list)
    tests: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))

    def extend(self, other: ScoreRecord, prefix: str = "") -> None:
        self.clean += other.clean
        for name, scores in other.tests.items():
            self.tests[prefix + name] += scores

    def false_alarms(self, threshold: float) -> int:
        return sum(score > threshold for score, _ in self.clean)

    def false_alarms_excluding_incidents(self, threshold: float) -> int:
        return sum(score > threshold and not incident for score, incident in self.clean)

    def recall(self, threshold: float, key: str | None = None) -> float:
        lists = list(self.tests.values()) if key is None else [self.tests.get(key, [])]
        total = sum(len(s) for s in lists)
        caught = sum(score > threshold for s in lists for score in s)
        return caught / total if total else math.nan

    def issue_recall(self, threshold: float, issue: str) -> float:
        lists = [s for name, s in self.tests.items() if name.split(":")[0] == issue]
        total = sum(len(s) for s in lists)
        return sum(score > threshold for s in lists for score in s) / total if total else math.nan
