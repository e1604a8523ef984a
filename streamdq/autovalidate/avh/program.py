"""Program: the explainable result of auto-validation, a short conjunction of constraints.

A ``Program`` belongs to one column. Each ``LearnedConstraint`` bounds one metric of the
metric space (``features.py``), possibly after the stationarity transform remembered
from its history (``stationarity.Transform``: log and/or a lag-1 or seasonal difference),
by ``lower <= value <= upper``; it records the FPR bound it was chosen under, the bound
used (Chebyshev, Cantelli, normal or extreme value tail), ``k`` and how many synthetic
corruptions it caught. The program keeps the profile of the newest batch it has seen
(``reference``), against which two-distribution metrics of a new batch are computed, and
the single metrics of the newest ``MAX_LAG`` batches (``recent_values``), from which
differenced metrics are.

``judge_profile(profile)`` returns the violations (empty = the batch passes); it is pure
and does not move the reference: ``advance(profile)`` does, so a stream can judge each
closed window against the previous one. A ``Program`` is a pure value and never runs Spark: to
judge a DataFrame, ``streamdq.learning.judge(program, batch)`` (also ``streamdq.autovalidate.judge``)
profiles it through the engine first. With a holiday calendar (``calendar.py``) the caller
says whether a batch falls on a day off (``holiday=True``): constraints on volume metrics
(``features.VOLUME_METRICS``) are then not judged, nor on a batch whose difference reads a
holiday batch (``recent_holidays``, kept like ``recent_values``: ``muted``); a day off is
judged by ``off_day_constraints`` (learned with a calendar: the selection without volume
metrics, under the same budget, but with the upper side of the row count's level on the
ordinary days: a day off carries no more rows than they can) instead, and an ordinary batch
whose differences read one by that selection or by the constraints less the muted ones,
whichever covers more synthetic issues (``judged``).
``to_dict``/``from_dict`` round-trip through JSON (the state store keeps programs that way) and ``to_yaml()`` exports a review
document whose ``checks:`` section holds the constraints that are ordinary streamdq
constraints (identity transform, a metric with a Deequ-style constraint), loadable with
``streamdq.load_checks``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import yaml

from streamdq.autovalidate.avh.domain import METRIC as DOMAIN_METRIC
from streamdq.autovalidate.avh.domain import Domain, off_domain_share
from streamdq.autovalidate.avh.features import VOLUME_METRICS, pair_metrics, single_metrics
from streamdq.autovalidate.avh.lattice import METRIC as LATTICE_METRIC
from streamdq.autovalidate.avh.lattice import Lattice, off_lattice_share
from streamdq.autovalidate.avh.profile import ColumnProfile
from streamdq.autovalidate.avh.stationarity import MAX_LAG, Transform
from streamdq.autovalidate.avh.support import METRIC as SUPPORT_METRIC
from streamdq.autovalidate.avh.support import Support, off_support_share
from streamdq.display import between_text
from streamdq.errors import InvalidArgument

FORMAT_VERSION = 2  # 2: recent_values (seasonal lags) instead of last_values

# single-distribution metric -> (constraint kind, extra params) of the ordinary vocabulary
_ORDINARY: dict[str, tuple[str, dict[str, Any]]] = {
    "row_count": ("has_size", {}),
    "completeness": ("has_completeness", {}),
    "mean": ("has_mean", {}),
    "min": ("has_min", {}),
    "max": ("has_max", {}),
    "sum": ("has_sum", {}),
    "std": ("has_standard_deviation", {}),
    "median": ("has_approx_quantile", {"quantile": 0.5}),
    "p05": ("has_approx_quantile", {"quantile": 0.05}),
    "p95": ("has_approx_quantile", {"quantile": 0.95}),
}


@dataclass(frozen=True)
class LearnedConstraint:
    """``lower <= transform(metric) <= upper`` for one column, with why it was chosen."""

    column: str
    metric: str
    lower: float
    upper: float
    bound: str
    k: float
    fpr: float
    transform: Transform = field(default_factory=Transform)
    caught: tuple[str, ...] = ()
    history_mean: float = 0.0
    history_std: float = 0.0
    # learned from the history batches that had the metric (a column all NULL on some batches):
    # a batch without it passes this constraint
    missing_ok: bool = False

    @property
    def pairwise(self) -> bool:
        """A two-distribution metric (against the previous batch)."""
        return self.metric.startswith("dist_")

    def transformed_name(self) -> str:
        name = self.metric
        if self.transform.log:
            name = f"log({name})"
        if self.transform.diff:
            lag = "" if self.transform.lag == 1 else str(self.transform.lag)
            name = f"diff{lag}({name})"
        return name

    def describe(self) -> str:
        what = f"{self.transformed_name()}({self.column})"
        if self.pairwise:
            what += " vs previous batch"
            rule = between_text(what, None, self.upper)
        else:
            rule = between_text(what, self.lower, self.upper)
        if self.missing_ok:
            rule += " or missing"
        return (
            f"{rule}  [{self.bound}, k={self.k:.3g}, FPR <= {self.fpr:.2g}, "
            f"catches {len(self.caught)} synthetic issues]"
        )

    def admits(self, value: float | None) -> bool:
        """Whether ``value`` (the transformed metric of a batch) is within bounds; a missing value
        passes only a ``missing_ok`` constraint."""
        if value is None or math.isnan(value):
            return self.missing_ok
        return self.lower <= value <= self.upper

    def ordinary_spec(self) -> dict[str, Any] | None:
        """This constraint in the checks vocabulary (docs/checks.md), or None when it has none. A
        bound on the log of a metric (no difference) reads back on the raw metric: ``exp`` is
        increasing, so ``exp(lower) <= metric <= exp(upper)`` flags the same batches."""
        if self.pairwise or self.transform.diff or self.metric not in _ORDINARY:
            return None
        if self.missing_ok:  # an ordinary check fails on a batch without the metric
            return None
        kind, extra = _ORDINARY[self.metric]
        params: dict[str, Any] = {} if kind == "has_size" else {"column": self.column}
        params.update(extra)
        lo, hi = float(self.lower), float(self.upper)
        if self.transform.log:
            lo, hi = math.exp(max(min(lo, 700.0), -700.0)), math.exp(max(min(hi, 700.0), -700.0))
        if self.metric in ("row_count", "completeness") or self.metric.endswith("ratio"):
            lo = max(lo, 0.0)
        if self.metric == "completeness":
            hi = min(hi, 1.0)
        params["assertion"] = {"between": [lo, hi]}
        params["hint"] = f"auto-validated: {self.describe()}"
        return {kind: params}

    def to_dict(self) -> dict[str, Any]:
        return {
            "column": self.column,
            "metric": self.metric,
            "lower": _num(self.lower),
            "upper": _num(self.upper),
            "bound": self.bound,
            "k": self.k,
            "fpr": self.fpr,
            "transform": {"log": self.transform.log, "diff": self.transform.diff, "lag": self.transform.lag},
            "caught": list(self.caught),
            "history_mean": _num(self.history_mean),
            "history_std": _num(self.history_std),
            "missing_ok": self.missing_ok,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LearnedConstraint:
        t = data.get("transform") or {}
        return cls(
            column=data["column"],
            metric=data["metric"],
            lower=float(data["lower"]),
            upper=float(data["upper"]),
            bound=data["bound"],
            k=float(data["k"]),
            fpr=float(data["fpr"]),
            transform=Transform(log=bool(t.get("log")), diff=bool(t.get("diff")), lag=int(t.get("lag", 1))),
            caught=tuple(data.get("caught", ())),
            history_mean=float(data.get("history_mean", 0.0)),
            history_std=float(data.get("history_std", 0.0)),
            missing_ok=bool(data.get("missing_ok", False)),
        )


def _num(v: float) -> float | str:
    return v if math.isfinite(v) else repr(v)


@dataclass(frozen=True)
class Violation:
    """One learned constraint a batch breaks, with the value it saw."""

    constraint: LearnedConstraint
    value: float | None
    message: str


def append_recent(
    recent: Mapping[str, tuple[float, ...]], metrics: Mapping[str, float]
) -> dict[str, tuple[float, ...]]:
    """``recent`` (metric -> its newest values, oldest first) after one more batch with the single
    metrics ``metrics``: each of them appended, at most ``MAX_LAG`` kept; a metric the batch lacks
    is dropped, so a window never spans a batch without its metric."""
    return {k: (*recent.get(k, ()), float(v))[-MAX_LAG:] for k, v in metrics.items()}


def off_shares(
    profile: ColumnProfile, lattice: Lattice | None, support: Support | None, domain: Domain | None
) -> dict[str, float]:
    """``profile``'s shares of values off what its history kept to: off the ``lattice``
    (``off_lattice``), outside the ``support`` (``off_support``) and outside the categorical
    ``domain`` (``off_domain``), in that order; each is left out when the history showed none
    (None) or the batch has no values it applies to.

    >>> off_shares(ColumnProfile("o", "categorical", 3.0, values={"EWR": 2.0, "UA": 1.0}),
    ...            None, None, Domain(frozenset({"EWR"})))
    {'off_domain': 0.3333333333333333}
    """
    kept: tuple[tuple[str, Any, Callable[[ColumnProfile, Any], float | None]], ...] = (
        (LATTICE_METRIC, lattice, off_lattice_share),
        (SUPPORT_METRIC, support, off_support_share),
        (DOMAIN_METRIC, domain, off_domain_share),
    )
    out: dict[str, float] = {}
    for metric, limit, share_of in kept:
        if limit is not None:
            share = share_of(profile, limit)
            if share is not None:
                out[metric] = share
    return out


def _covered(constraints: Sequence[LearnedConstraint]) -> int:
    """How many distinct synthetic issues ``constraints`` catch together."""
    return len({name for c in constraints for name in c.caught})


@dataclass(frozen=True)
class Program:
    """A learned conjunction of constraints for one column (empty: nothing is checked)."""

    column: str
    kind: str
    fpr: float
    constraints: tuple[LearnedConstraint, ...] = ()
    reference: ColumnProfile | None = None
    # raw single metrics of the newest batches seen, oldest first (at most MAX_LAG per metric):
    # what differenced constraints subtract
    recent_values: dict[str, tuple[float, ...]] = field(default_factory=dict)
    history: int = 0
    candidates: int = 0
    corruptions: int = 0
    # whether each of the newest batches seen (at most MAX_LAG, oldest first, aligned with the
    # end of every recent_values tuple) fell on a holiday; a batch before the first is not one
    recent_holidays: tuple[bool, ...] = ()
    # the program of a batch whose volume is not judged: selected without volume metrics under
    # the same budget (None: learned without a calendar; muted constraints are then just skipped)
    off_day_constraints: tuple[LearnedConstraint, ...] | None = None
    # the grid the history's values sat on (``lattice.py``): a batch's share of values off it is
    # the metric ``off_lattice``; None when the history showed no lattice
    lattice: Lattice | None = None
    # the limits the history's values never crossed (``support.py``): a batch's share of values
    # outside them is the metric ``off_support``; None when the history showed none
    support: Support | None = None
    # the closed value set of a categorical column's history (``domain.py``): a batch's share of
    # values outside it is the metric ``off_domain``; None when the history showed none (and in a
    # program serialized before it existed)
    domain: Domain | None = None

    @property
    def fpr_bound(self) -> float:
        """Union bound on the program's FPR: the sum of its constraints' bounds."""
        return float(sum(c.fpr for c in self.constraints))

    def values_of(self, profile: ColumnProfile) -> dict[str, float]:
        """Every metric of ``profile``: single ones, and pairwise ones against the reference."""
        values = single_metrics(profile)
        values.update(off_shares(profile, self.lattice, self.support, self.domain))
        if self.reference is not None:
            values.update(pair_metrics(self.reference, profile))
        return values

    def reads_off_day(self, c: LearnedConstraint) -> bool:
        """Whether ``c``'s difference reads a holiday batch on the next batch."""
        lag = c.transform.needs
        return bool(0 < lag <= len(self.recent_holidays) and self.recent_holidays[-lag])

    def judging_transform(self, c: LearnedConstraint) -> Transform | None:
        """The transform ``c`` reads the next (ordinary) batch with: its own, or, when its seasonal
        difference (a lag above 1: the same weekday a week back) reads a holiday batch, the same
        point one more period back when that batch was an ordinary day and its value is kept
        (the weekly row count of the week after a day off); None when neither can be read."""
        if c.metric not in VOLUME_METRICS or not self.reads_off_day(c):
            return c.transform
        lag = c.transform.needs
        back = 2 * lag
        if lag < 2 or back > len(self.recent_holidays) or self.recent_holidays[-back]:
            return None
        if len(self.recent_values.get(c.metric, ())) < back:
            return None
        return replace(c.transform, lag=back)

    def muted(self, *, holiday: bool = False) -> tuple[LearnedConstraint, ...]:
        """The constraints not judged on the next batch: those on a volume metric when that
        batch is a holiday (``holiday``) or when their difference reads a holiday batch and no
        ordinary one a period further back (``judging_transform``)."""
        out = []
        for c in self.constraints:
            if c.metric not in VOLUME_METRICS:
                continue
            if holiday or self.judging_transform(c) is None:
                out.append(c)
        return tuple(out)

    def judged(self, *, holiday: bool = False) -> tuple[LearnedConstraint, ...]:
        """The constraints that judge the next batch: all of them when none is ``muted``; on a day
        off (``holiday``) the ``off_day_constraints``; on an ordinary batch whose differences read
        a day off, of the ``off_day_constraints`` and the constraints less the muted ones, the one
        that covers more of the learning's synthetic issues (``caught``; a tie keeps the off-day
        selection). Both are within the budget: the first was selected under it, the second is a
        part of a selection that was. The second keeps what the first cannot: the weekly row
        count of the day after a holiday, whose day-over-day constraints read the holiday. Learned
        without a calendar (no off-day selection): the constraints less the muted ones."""
        muted = self.muted(holiday=holiday)
        if not muted:
            return self.constraints
        skipped = {id(c) for c in muted}
        rest = tuple(c for c in self.constraints if id(c) not in skipped)
        off_day = self.off_day_constraints
        if off_day is None:
            return rest
        if holiday or _covered(rest) <= _covered(off_day):
            return off_day
        return rest

    def judge_profile(self, profile: ColumnProfile, *, holiday: bool = False) -> list[Violation]:
        """The ``judged`` constraints ``profile`` breaks (empty: it passes)."""
        values = self.values_of(profile)
        out = []
        for c in self.judged(holiday=holiday):
            raw = values.get(c.metric)
            transform = self.judging_transform(c) or c.transform
            value = transform.value_of(raw, self.recent_values.get(c.metric, ()))
            if c.admits(value):
                continue
            seen = "missing" if raw is None else f"{raw:.6g}"
            if value is not None and raw is not None and (c.transform.log or c.transform.diff):
                seen += f" ({c.transformed_name()} = {value:.6g})"
            out.append(
                Violation(
                    constraint=c,
                    value=value,
                    message=f"{c.metric}({c.column}) = {seen} breaks the learned {c.describe()}",
                )
            )
        return out

    def advance(self, profile: ColumnProfile, *, holiday: bool = False) -> Program:
        """The same program with ``profile`` as the newest batch seen (the reference); its
        single metrics join ``recent_values`` (a metric the batch lacks starts over: a
        difference never spans a batch without the metric) and ``holiday`` joins
        ``recent_holidays``."""
        recent = append_recent(self.recent_values, single_metrics(profile))
        flags = (*self.recent_holidays, holiday)[-MAX_LAG:]
        return replace(self, reference=profile, recent_values=recent, recent_holidays=flags)

    # -- serialization --------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {
            "format_version": FORMAT_VERSION,
            "column": self.column,
            "kind": self.kind,
            "fpr": self.fpr,
            "fpr_bound": self.fpr_bound,
            "history": self.history,
            "candidates": self.candidates,
            "corruptions": self.corruptions,
            "constraints": [c.to_dict() for c in self.constraints],
            "reference": self.reference.to_json() if self.reference else None,
            "recent_values": {k: [_num(v) for v in vs] for k, vs in self.recent_values.items()},
            "recent_holidays": list(self.recent_holidays),
            "off_day_constraints": None
            if self.off_day_constraints is None
            else [c.to_dict() for c in self.off_day_constraints],
            "lattice": None if self.lattice is None else self.lattice.to_list(),
            "support": None if self.support is None else self.support.to_list(),
            "domain": None if self.domain is None else self.domain.to_list(),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Program:
        version = int(data.get("format_version", 0))
        if version not in (1, FORMAT_VERSION):
            raise InvalidArgument(
                f"unsupported program format version {version} (this streamdq reads 1 and {FORMAT_VERSION})"
            )
        ref = data.get("reference")
        recent: dict[str, tuple[float, ...]]
        if version == 1:  # one value per metric, lag-1 differences only
            recent = {k: (float(v),) for k, v in (data.get("last_values") or {}).items()}
        else:
            recent = {k: tuple(float(v) for v in vs) for k, vs in (data.get("recent_values") or {}).items()}
        return cls(
            column=data["column"],
            kind=data["kind"],
            fpr=float(data["fpr"]),
            constraints=tuple(LearnedConstraint.from_dict(c) for c in data.get("constraints", ())),
            reference=ColumnProfile.from_json(ref) if ref else None,
            recent_values=recent,
            history=int(data.get("history", 0)),
            candidates=int(data.get("candidates", 0)),
            corruptions=int(data.get("corruptions", 0)),
            recent_holidays=tuple(bool(h) for h in data.get("recent_holidays", ())),
            off_day_constraints=None
            if data.get("off_day_constraints") is None
            else tuple(LearnedConstraint.from_dict(c) for c in data["off_day_constraints"]),
            lattice=None if data.get("lattice") is None else Lattice.from_list(data["lattice"]),
            support=None if data.get("support") is None else Support.from_list(data["support"]),
            domain=None if data.get("domain") is None else Domain.from_list(data["domain"]),
        )

    def show(self) -> str:
        """A readable listing: one line per constraint and the program's FPR budget."""
        head = (
            f"{self.column} ({self.kind}): {len(self.constraints)} constraint(s) learned from "
            f"{self.history} batches, FPR bound {self.fpr_bound:.2g} <= target {self.fpr:g}"
        )
        if not self.constraints:
            return head + "\n  (no constraint fits the FPR budget: nothing is checked)"
        lines = [head, *(f"  - {c.describe()}" for c in self.constraints)]
        if self.off_day_constraints is not None:
            lines.append(
                f"  on a day off (volume judged by its ordinary level above only): {len(self.off_day_constraints)} constraint(s)"
            )
            lines += [f"  - {c.describe()}" for c in self.off_day_constraints]
        return "\n".join(lines)

    def to_yaml(self, dataset: str = "dataset", level: str = "warning") -> str:
        """A review document: the program, and its ordinary constraints as a checks list."""
        ordinary = []
        for spec in (c.ordinary_spec() for c in self.constraints):
            if spec is not None:
                ((kind, params),) = spec.items()
                ordinary.append({kind: {**params, "scope": "window"}})
        doc: dict[str, Any] = {
            "dataset": dataset,
            "checks": [
                {"description": f"auto-validated {self.column}", "level": level, "constraints": ordinary}
            ]
            if ordinary
            else [],
        }
        lines = [
            f"# Learned by streamdq auto-validation: {self.show().splitlines()[0]}",
            "# Every learned constraint (those marked * are below as ordinary streamdq constraints,",
            "# loadable with streamdq.load_checks or checks_file:; the others need the previous batch",
            "# or a transform and are judged by the program itself):",
        ]
        for c in self.constraints:
            mark = "*" if c.ordinary_spec() is not None else "-"
            lines.append(f"#  {mark} {c.describe()}")
        header = "\n".join(lines) + "\n"
        return header + yaml.safe_dump(doc, sort_keys=False, width=100)
