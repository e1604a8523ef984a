"""Auto-Validate-by-History vs baselines on real recurring data (AVH paper, Sec. 5.1 protocol).

Protocol. Each traced column of each source is cut into traces of 60 consecutive daily batches
(``data.py``). On every trace, for the steps K = 30 .. 59, each method looks at the sliding history
H_K = C_{K-29} .. C_K (30 batches) and judges:

- the real next batch C_{K+1}: a *precision test* (the data are production-quality, so any flag is
  a false positive);
- C_{K+1} with one synthetic issue injected into the column, for every issue type and magnitude of
  ``streamdq.autovalidate.avh.corruptions.corruptions_for(kind)`` (Appendix B): *recall tests*. A
  corruption that leaves the column's values unchanged (e.g. upper-casing an all-upper-case
  column), or only reorders them (a schema change on a frame with no other column shuffles it), is
  not a test and is counted as skipped: every method judges a batch's values, not their order.

Seeds. ``learn`` gets seed = the day index of C_K plus 1000 x the source index (its place in
``data.SOURCES``, whatever ``--sources`` selects; < 6,000, below the evaluation seeds); the
evaluation corruptions use seeds from 1,000,000 up (one per source, day, column and corruption), so
the synthetic issues the learner trains on never coincide with those it is tested on.

Reported per (method, numeric|categorical): FPR on the precision tests with its 95% Wilson upper
bound, recall over all recall tests, recall per issue type, and precision in the paper's mix of
tests (60K precision tests to 40K recall tests: precision = 0.4 R / (0.4 R + 0.6 FPR)). Methods:
``avh`` (``streamdq.autovalidate.learn`` at fpr=0.001), ``avh_0.01`` and ``avh_0.05`` (the same
learner at looser targets, on the same profiles: the precision/recall frontier the baselines
are compared with), ``avh_paper`` (the paper's algorithm as published, ``paper.py``: its metric
space, ADF and lag differencing, Chebyshev/Cantelli/CLT bounds and greedy selection on the paper's
ten issue types, at the same target ``--fpr``, learned and judged on AVH's profiles at AVH's
seeds; it runs with the profiles, so it needs neither Spark of its own nor ``avh`` in
``--methods``) and the baselines of ``baselines.py``. Two of them, ``zscore`` (OnlineNormal's
metrics) and ``zscore_all`` (AVH's metric space, on AVH's profiles), are scorers: after the run each
gets the threshold at which it raises no more false alarms than AVH at each target, chosen on the
evaluation batches themselves (an oracle calibration, ``scores.py``), and its recall there is
printed beside AVH's: the comparison at equal precision.

Calendar. AVH runs with the holiday calendar a user would configure for each feed
(``data.CALENDARS``, ``--holidays source``): for the flights, whose volume people make,
``auto_validate: {holidays: {country: US, days_before: 1, days_after: 1}}``, the federal
holidays and the day on either side of each (the eve and the bridge day move the volume too: the
Sunday before Memorial and Labor Day, the Friday after 4 July and after Thanksgiving, Christmas
Eve; New York's own observances, in ``US-NY``, move no flights); none for the weather stations,
which read every hour of every day.
Volume metrics are not judged on those days or on a batch differenced against one, and are
learned without them. ``--holidays none`` turns calendars off; a YAML calendar applies to every
source. The baselines get no calendar (none of them has one).

Windows as the unit (``--unit-rows N``): each source's consecutive batches are joined into tumbling
units of ``ceil(N / median batch rows)`` batches (``data.windowed``), and the protocol runs on units
as on batches: 30 units of history, the next unit real (precision) and with one issue injected into
the whole unit (an issue that lasted the unit; recall). A unit is off (calendar) when any of its
days is, and carries an incident when any of its batches does. This is what ``auto_validate:
{unit_windows: W}`` judges in the streaming job; a source with fewer than 60 units gives no trace.

Held-out feeds: ``--sources weather_ewr,co2`` (``data.HELD_OUT``: one airport's hourly weather,
24 rows a day, on the columns ``weather`` does not trace; weekly CO2 readings cut by quarter)
were not looked at while choosing any learner change; report them apart.

    python bench/autovalidate/run.py [--quick] [--sources flights,weather] [--traces N] [--first-trace N] [--steps N]
                                     [--methods avh,avh_paper,online_normal,online_normal_5,tfdv_linf,
                                                deequ_default,streamdq_suggest,zscore,zscore_all]
                                     [--fpr 0.001] [--also-fpr 0.01,0.05] [--profile-cache DIR] [--json F]
                                     [--by-corruption] [--by-column] [--holidays source|none|YAML]
                                     [--unit-rows N]

The last line is ``RESULT autovalidate precision_avh=... recall_avh=... recall_online_normal=... ...``.
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

import baselines  # noqa: E402
import data  # noqa: E402
import paper  # noqa: E402
from scores import SWEEP, ScoreRecord, matched_threshold, profile_scorer  # noqa: E402

from streamdq.autovalidate.avh.calendar import HolidayCalendar, calendar_from_config  # noqa: E402
from streamdq.autovalidate.avh.corruptions import ISSUE_TYPES, Corruption, apply, corruptions_for  # noqa: E402

HISTORY = 30
TRACE = 60
EVAL_SEED_BASE = 1_000_000
TARGET_FPR = 0.001
PAPER_PRECISION_SHARE = 0.6  # 60K precision tests vs 40K recall tests in the paper
PAPER = "avh_paper"  # the paper's algorithm as published (paper.py), on AVH's profiles

Judge = baselines.Judge


def avh_method(fpr: float, primary: float) -> str:
    """The report's name of AVH learned at target ``fpr``: ``avh`` for the primary target,
    ``avh_<fpr>`` for the others (the precision/recall frontier)."""
    return "avh" if fpr == primary else f"avh_{fpr:g}"


def avh_available() -> str | None:
    """None when ``streamdq.autovalidate.learn`` can be imported, else the reason."""
    try:
        from streamdq.autovalidate import learn  # noqa: F401
    except ImportError as exc:
        return str(exc)
    return None


def avh_trace(
    trace: list[pd.DataFrame],
    column: str,
    kind: str,
    steps: range,
    seeds: dict[int, int],
    tests: dict[int, list[tuple[Corruption, pd.DataFrame]]],
    fprs: tuple[float, ...],
    chunk: int,
    cache: ProfileCache | None = None,
    cache_key: str = "",
    dates: tuple[str, ...] = (),
    incident_of: Callable[[str], str | None] | None = None,
    score_all: bool = False,
    holidays: tuple[bool, ...] = (),
    paper_fpr: float | None = None,
    seconds: dict[str, float] | None = None,
) -> tuple[dict[str, dict[int, tuple[bool, list[bool], object]]], dict[int, tuple[float, list[float]]]]:
    """AVH on every step of one trace, for each target FPR in ``fprs`` (may be empty):
    ``{method: {k: (clean batch flagged, [test flagged...], program)}}``, ``method`` =
    ``avh_method(fpr, fprs[0])`` (the false alarms of the first target are printed); with
    ``paper_fpr``, also ``avh_paper`` (``paper.learn_paper`` at that target, on the same profiles;
    its false alarms are printed too); with ``score_all``, also the ``zscore_all`` baseline on the
    same profiles, ``{k: (clean batch's score, [test scores...])}`` (``scores.profile_scorer``).
    ``holidays`` (parallel to ``trace``; empty: no calendar) flags the batches on a day off: they
    are passed to learning and judging as ``auto_validate.holidays`` would (``--holidays``);
    ``avh_paper`` gets no calendar. ``seconds`` (when given) accumulates the time spent in
    ``avh_paper``'s learning and judging under ``PAPER``.

    Equivalent to ``judge(learn(trace[k-30:k], column, fpr, seed), batch)`` for each step and batch, but
    with the engine's profiles computed in a few segmented runs (the 60 clean batches once by
    ``profile_frames``, then the learning corruptions and the test batches of ``chunk`` steps per
    run by ``streamdq.learning.profile_steps``, the public call for this) instead of one
    Spark run per ``learn`` and per ``judge``; ``learn_at_targets`` (``learn_from_profiles`` at several targets
    over one computation of the metrics) and ``Program.judge_profile`` are the very
    functions ``learn``/``judge`` call after profiling. With a ``cache``, profiles are read from
    (or written to) it under ``cache_key``, so a change to the learner alone is re-measured
    without Spark.
    """
    from streamdq.autovalidate import profile_frames
    from streamdq.autovalidate.avh.learner import learn_at_targets
    from streamdq.learning import profile_steps

    def profiled(frames: list[pd.DataFrame]) -> list:
        if cache is None:
            return profile_frames(frames, column, kind)
        return cache.profiles(
            cache_key, frames, column, kind, lambda todo: profile_frames(todo, column, kind)
        )

    clean = profiled([b[[column]] for b in trace[: steps.stop]])
    names = {fpr: avh_method(fpr, fprs[0]) for fpr in fprs}
    out: dict[str, dict[int, tuple[bool, list[bool], object]]] = {name: {} for name in names.values()}
    if paper_fpr is not None:
        out[PAPER] = {}
    pairs: dict[int, dict[str, float]] = {}  # paper.pair_values(clean[i - 1], clean[i]), by i
    scored: dict[int, tuple[float, list[float]]] = {}
    ks = list(steps)
    for i in range(0, len(ks), chunk):
        part = ks[i : i + chunk]
        # the learning corruptions of each step's newest batch (as learn() draws them) and the
        # step's tests, profiled in one engine run (one cached read when all are known)
        stepped = profile_steps(
            [(trace[k - 1], seeds[k], [b for _, b in tests[k]]) for k in part],
            column,
            kind,
            profiler=profiled,
        )
        for k, step in zip(part, stepped, strict=True):
            learned, batches = step.corrupted, list(step.judged)
            if score_all:
                score = profile_scorer(clean[k - HISTORY : k])
                scored[k] = (score(clean[k]), [score(p) for p in batches])
            flags = holidays[k - HISTORY : k] if holidays else ()
            holiday = bool(holidays and holidays[k])
            if paper_fpr is not None:
                t0 = time.perf_counter()
                for i in range(k - HISTORY + 1, k):
                    if i not in pairs:
                        pairs[i] = paper.pair_values(clean[i - 1], clean[i])
                learned_paper = paper.learn_paper(
                    clean[k - HISTORY : k],
                    learned,
                    paper_fpr,
                    history_pairs=[pairs[i] for i in range(k - HISTORY + 1, k)],
                )
                violations_paper = learned_paper.judge(clean[k])
                day = dates[k] if k < len(dates) else "?"
                for shown in violations_paper:
                    print(
                        f"# avh_paper false alarm on real batch {k} of the trace, {day}: {shown}", flush=True
                    )
                flagged_paper = [bool(learned_paper.judge(p)) for p in batches]
                out[PAPER][k] = (bool(violations_paper), flagged_paper, learned_paper)
                if seconds is not None:
                    seconds[PAPER] = seconds.get(PAPER, 0.0) + time.perf_counter() - t0
            if not fprs:
                continue
            programs = learn_at_targets(clean[k - HISTORY : k], learned, fprs, holidays=flags)
            for fpr in fprs:
                program = programs[fpr]
                flagged = [bool(program.judge_profile(p, holiday=holiday)) for p in batches]
                violations = program.judge_profile(clean[k], holiday=holiday)
                if fpr == fprs[0]:
                    day = dates[k] if k < len(dates) else "?"
                    why = incident_of(day) if incident_of else None
                    note = f" (known incident: {why})" if why else ""
                    for v in violations:
                        print(
                            f"# avh false alarm on real batch {k} of the trace, {day}{note}: {v.message}",
                            flush=True,
                        )
                out[names[fpr]][k] = (bool(violations), flagged, program)
    return out, scored


class ProfileCache:
    """Engine profiles of the harness's batches, pickled under a directory and addressed by content
    (a bench-only aid).

    A profile is keyed by the column, its kind and a digest of the batch's values and dtype, in one
    directory per ``group`` (source, trace, column): adding a corruption, or a new test, profiles only
    the new batches, and a change to the learner, the corruptions' order or the harness's seeds reuses
    every batch whose values did not change. The root adds a digest of ``profile.py``, so a change to
    what a profile keeps starts a fresh cache, and so does the module's name (the pickles name the
    class by its module: the caches written before the autovalidate split, under
    ``streamdq.autovalidate.profile``, no longer load). Changes to the engine itself (analyzers, plan)
    are not in the digest: delete the directory after one.
    """

    def __init__(self, root: Path) -> None:
        import hashlib
        import inspect

        from streamdq.autovalidate.avh import profile

        digest = hashlib.sha256(inspect.getsource(profile).encode())
        digest.update(profile.ColumnProfile.__module__.encode())
        self.root = root / f"content-{digest.hexdigest()[:16]}"
        self.root.mkdir(parents=True, exist_ok=True)
        self._group = ""
        self._known: dict[str, object] = {}

    @staticmethod
    def key(frame: pd.DataFrame, column: str, kind: str) -> str:
        import hashlib

        values = frame[column] if column in frame.columns else pd.Series([], dtype=object)
        digest = hashlib.sha256(f"{column}\0{kind}\0{values.dtype}\0{len(values)}\0".encode())
        digest.update(pd.util.hash_pandas_object(values, index=False).to_numpy().tobytes())
        return digest.hexdigest()[:32]

    def _load(self, group: str) -> None:
        import pickle

        if group == self._group:
            return
        self._group, self._known = group, {}
        folder = self.root / group
        if folder.is_dir():
            for path in sorted(folder.glob("*.pkl")):
                self._known.update(pickle.loads(path.read_bytes()))

    def profiles(
        self, group: str, frames: list[pd.DataFrame], column: str, kind: str, compute: Callable[[list], list]
    ) -> list:
        """The profiles of ``frames`` (in order): cached ones read, the others computed in ONE
        ``compute(missing_frames)`` call and written to a new shard of ``group``."""
        import os
        import pickle

        self._load(group)
        keys = [self.key(f, column, kind) for f in frames]
        missing: dict[str, pd.DataFrame] = {}
        for key, frame in zip(keys, frames, strict=True):
            if key not in self._known and key not in missing:
                missing[key] = frame
        if missing:
            computed = compute(list(missing.values()))
            fresh = dict(zip(missing, computed, strict=True))
            folder = self.root / group
            folder.mkdir(parents=True, exist_ok=True)
            tmp = folder / f".{os.getpid()}-{len(self._known)}.tmp"
            tmp.write_bytes(pickle.dumps(fresh))
            tmp.rename(folder / f"{time.time_ns()}-{os.getpid()}.pkl")
            self._known.update(fresh)
        return [self._known[k] for k in keys]


def source_calendar(source: data.Source | None, choice: str) -> HolidayCalendar | None:
    """The holiday calendar AVH gets for ``source`` under ``--holidays choice``: ``source`` = the
    source's own (``data.CALENDARS``), ``none`` = none, else ``choice`` parsed as YAML."""
    if choice.lower() == "none":
        return None
    if choice.lower() == "source":
        if source is None or source.name not in data.CALENDARS:
            return None
        return calendar_from_config(
            yaml.safe_load(data.CALENDARS[source.name]), f"data.CALENDARS[{source.name!r}]"
        )
    return calendar_from_config(yaml.safe_load(choice), "--holidays")


def check_learn(
    trace: list[pd.DataFrame],
    column: str,
    k: int,
    seed: int,
    fpr: float,
    program: object,
    holidays: tuple[bool, ...] = (),
) -> bool:
    """Whether ``learn()`` itself gives the fast path's program (same constraints, same bounds)."""
    from streamdq.autovalidate import learn

    def shape(p: object) -> list[tuple[str, str, float, float, float]]:
        return [
            (c.metric, c.bound, round(c.k, 6), round(c.lower, 6), round(c.upper, 6))
            for c in p.constraints  # type: ignore[attr-defined]
        ]

    flags = holidays[k - HISTORY : k] if holidays else ()
    reference = learn(trace[k - HISTORY : k], column, fpr=fpr, seed=seed, holidays=flags)
    return shape(reference) == shape(program)


@dataclass
class Tally:
    """Flag counts of one method on one kind of column."""

    clean: int = 0
    false_alarms: int = 0
    incident_clean: int = 0  # of ``clean``: real batches of a known incident (``Source.incidents``)
    incident_alarms: int = 0  # of ``false_alarms``: flags on those batches
    # the calendar dates of the flagged real batches (one table-level shock flags many columns on
    # one day: the alarms are not independent tests), and of those of ordinary days
    alarm_days: set[str] = field(default_factory=set)
    ordinary_alarm_days: set[str] = field(default_factory=set)
    recall_tests: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    caught: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    fit_seconds: float = 0.0
    judge_seconds: float = 0.0
    fits: int = 0

    @property
    def fpr(self) -> float:
        return self.false_alarms / self.clean if self.clean else math.nan

    @property
    def fpr_excluding_incidents(self) -> float:
        """FPR over the real batches of ordinary days only."""
        n = self.clean - self.incident_clean
        return (self.false_alarms - self.incident_alarms) / n if n else math.nan

    def count_clean(self, flagged: bool, incident: bool, day: str = "") -> None:
        self.clean += 1
        self.false_alarms += flagged
        self.incident_clean += incident
        self.incident_alarms += flagged and incident
        if flagged and day:
            self.alarm_days.add(day)
            if not incident:
                self.ordinary_alarm_days.add(day)

    def recall(self, key: str | None = None) -> float:
        tests = sum(self.recall_tests.values()) if key is None else self.recall_tests.get(key, 0)
        hits = sum(self.caught.values()) if key is None else self.caught.get(key, 0)
        return hits / tests if tests else math.nan

    def issue_recall(self, issue: str) -> float:
        keys = [k for k in self.recall_tests if k.split(":")[0] == issue]
        tests = sum(self.recall_tests[k] for k in keys)
        return sum(self.caught.get(k, 0) for k in keys) / tests if tests else math.nan

    def precision(self, excluding_incidents: bool = False) -> float:
        r, f = self.recall(), (self.fpr_excluding_incidents if excluding_incidents else self.fpr)
        if math.isnan(r) or math.isnan(f):
            return math.nan
        tp, fp = (1 - PAPER_PRECISION_SHARE) * r, PAPER_PRECISION_SHARE * f
        return tp / (tp + fp) if tp + fp > 0 else math.nan


def wilson_upper(hits: int, n: int, z: float = 1.959963984540054) -> float:
    if n == 0:
        return math.nan
    p = hits / n
    denom = 1 + z * z / n
    centre = p + z * z / (2 * n)
    return (centre + z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))) / denom


def eval_seed(source_idx: int, day: int, column_idx: int, corruption_idx: int) -> int:
    return EVAL_SEED_BASE + ((source_idx * 400 + day) * 16 + column_idx) * 64 + corruption_idx


def run(args: argparse.Namespace) -> tuple[dict[tuple[str, str], Tally], dict[tuple[str, str], ScoreRecord]]:
    methods: dict[str, Callable[[baselines.FitContext], Judge | None]] = {}
    scorers: dict[str, Callable[[baselines.FitContext], baselines.Scorer]] = {}
    use_avh = False
    for name in args.methods:
        if name in baselines.SCORERS:
            scorers[name] = baselines.SCORERS[name]
        elif name == "zscore_all":
            continue  # scored on AVH's profiles, with AVH
        elif name.startswith("avh"):
            if name not in ("avh", PAPER):
                continue  # the other targets are learned with the primary one
            reason = avh_available()
            if reason:
                print(f"# {name} skipped: streamdq.autovalidate.learn not importable ({reason})", flush=True)
                continue
            use_avh = True
        else:
            methods[name] = baselines.BASELINES[name]
    tallies: dict[tuple[str, str], Tally] = defaultdict(Tally)
    records: dict[tuple[str, str], ScoreRecord] = defaultdict(ScoreRecord)
    if "zscore_all" in args.methods and not use_avh:
        print("# zscore_all skipped: it scores AVH's profiles, so it runs only with avh", flush=True)
    checks: list[bool] = []
    cache = baselines.MetricCache()
    started = time.perf_counter()
    steps = range(HISTORY, HISTORY + args.steps)
    try:
        _run_sources(args, methods, scorers, use_avh, tallies, records, checks, cache, started, steps)
    except KeyboardInterrupt:
        print("# INTERRUPTED: the tables below cover only the traces and columns finished so far", flush=True)
    if checks:
        verdict = "identical" if all(checks) else f"DIFFERENT in {checks.count(False)} of {len(checks)}"
        print(
            f"# learn() vs the harness's profile-cached path, first step of each trace and column: {verdict}"
        )
    return tallies, records


def _run_sources(
    args: argparse.Namespace,
    methods: dict[str, Callable[[baselines.FitContext], Judge | None]],
    scorers: dict[str, Callable[[baselines.FitContext], baselines.Scorer]],
    use_avh: bool,
    tallies: dict[tuple[str, str], Tally],
    records: dict[tuple[str, str], ScoreRecord],
    checks: list[bool],
    cache: baselines.MetricCache,
    started: float,
    steps: range,
) -> None:
    skipped = 0
    for source_name in args.sources:
        # seeds depend on the source's and the column's place in the full catalogue, not in the
        # selection: a run over --sources weather or --kinds categorical draws the same tests as
        # the full run (and reads the same cached profiles)
        source_idx = list(data.SOURCES).index(source_name)
        source = data.SOURCES[source_name]()
        width = data.unit_width(source, args.unit_rows)
        days_of, median = source.dates, data.median_rows(source)
        source = data.windowed(source, width)
        if width > 1:
            print(
                f"# {source_name}: units of {width} consecutive batches (median batch "
                f"{median:g} rows, --unit-rows {args.unit_rows}): "
                f"{len(source.batches)} units, {len(source.batches) // TRACE} trace(s) of {TRACE}",
                flush=True,
            )
        catalogue_columns = [(c, "numeric") for c in source.numeric] + [
            (c, "categorical") for c in source.categorical
        ]
        selected = set(source.numeric[: args.columns]) | set(source.categorical[: args.columns])
        columns = [
            (i, c, kind)
            for i, (c, kind) in enumerate(catalogue_columns)
            if kind in args.kinds and c in selected
        ]
        traced = source.traces(TRACE)[args.first_trace :]
        calendar = source_calendar(source, args.holidays)
        holidays: tuple[bool, ...] = ()
        if calendar:
            holidays = data.unit_flags(source, dict(zip(days_of, calendar.flags(days_of), strict=True)))
        for start, trace in traced[: args.traces or None]:
            trace_holidays = holidays[start : start + TRACE]
            cache.clear()
            for column_idx, column, kind in columns:
                catalogue = corruptions_for(kind)
                tests: dict[int, list[tuple[Corruption, pd.DataFrame]]] = {}
                seeds: dict[int, int] = {}
                for k in steps:
                    day = start + k - 1  # day index of C_K, the last history batch
                    seeds[k] = source_idx * 1000 + day
                    tests[k] = _tests(trace[k], column, catalogue, source_idx, day, column_idx)
                    skipped += len(catalogue) - len(tests[k])
                column_key = f"{source_name}.{column}"
                if use_avh:
                    t0, spent = time.perf_counter(), {PAPER: 0.0}
                    fprs = (args.fpr, *args.also_fpr) if "avh" in args.methods else ()
                    by_target, scored = avh_trace(
                        trace,
                        column,
                        kind,
                        steps,
                        seeds,
                        tests,
                        fprs,
                        args.chunk,
                        cache=args.profile_cache,
                        cache_key=f"{source_name}-{start}-{column}-{kind}"
                        + (f"-w{width}" if width > 1 else ""),
                        dates=source.dates[start : start + TRACE],
                        incident_of=functools.partial(source.incident, column=column),
                        score_all="zscore_all" in args.methods,
                        holidays=trace_holidays,
                        paper_fpr=args.fpr if PAPER in args.methods else None,
                        seconds=spent,
                    )
                    if "avh" in by_target:
                        tallies[("avh", kind)].fit_seconds += time.perf_counter() - t0 - spent[PAPER]
                    if PAPER in by_target:
                        tallies[(PAPER, kind)].fit_seconds += spent[PAPER]
                    for name, verdicts in by_target.items():
                        for k in steps:
                            clean_flag, flags, _ = verdicts[k]
                            tallies[(name, kind)].fits += 1
                            date = source.dates[start + k]
                            incident = bool(source.incident(date, column))
                            for t in (tallies[(name, kind)], tallies[(name, column_key)]):
                                t.count_clean(clean_flag, incident, date)
                                for (corruption, _), flag in zip(tests[k], flags, strict=True):
                                    t.recall_tests[corruption.name] += 1
                                    t.caught[corruption.name] += flag
                    for k, (clean_score, test_scores) in scored.items():
                        incident = bool(source.incident(source.dates[start + k], column))
                        keep = (records[("zscore_all", kind)], records[("zscore_all", column_key)])
                        _record_scores(keep, clean_score, incident, tests[k], test_scores)
                    if args.check_learn and "avh" in by_target:
                        k = steps.start
                        program = by_target["avh"][k][2]
                        checks.append(
                            check_learn(trace, column, k, seeds[k], args.fpr, program, trace_holidays)
                        )
                for k in steps:
                    history, nxt = trace[k - HISTORY : k], trace[k]
                    ctx = baselines.FitContext(history, trace[0], column, kind, cache)
                    for name, fit in methods.items():
                        tally = tallies[(name, kind)]
                        t0 = time.perf_counter()
                        judge = fit(ctx)
                        tally.fit_seconds += time.perf_counter() - t0
                        if judge is None:
                            continue
                        tally.fits += 1
                        by_column = tallies[(name, column_key)]
                        t0 = time.perf_counter()
                        flagged = bool(judge(nxt))
                        date = source.dates[start + k]
                        incident = bool(source.incident(date, column))
                        tally.count_clean(flagged, incident, date)
                        by_column.count_clean(flagged, incident, date)
                        for corruption, batch in tests[k]:
                            flagged = bool(judge(batch))
                            for t in (tally, by_column):
                                t.recall_tests[corruption.name] += 1
                                t.caught[corruption.name] += flagged
                        tally.judge_seconds += time.perf_counter() - t0
                    for name, fit_scorer in scorers.items():
                        score = fit_scorer(ctx)
                        incident = bool(source.incident(source.dates[start + k], column))
                        keep = (records[(name, kind)], records[(name, column_key)])
                        _record_scores(keep, score(nxt), incident, tests[k], [score(b) for _, b in tests[k]])
                print(
                    f"# {source_name}[{start}:{start + TRACE}] {column:<10} {kind:<11} done "
                    f"({time.perf_counter() - started:.0f} s)",
                    flush=True,
                )
    print(f"# corruptions that changed nothing (not tests): {skipped}")


def _record_scores(
    keep: tuple[ScoreRecord, ...],
    clean_score: float,
    incident: bool,
    tests: list[tuple[Corruption, pd.DataFrame]],
    test_scores: list[float],
) -> None:
    """One step's scores (the real batch's, then each test's) into every record of ``keep``."""
    for r in keep:
        r.clean.append((clean_score, incident))
        for (corruption, _), score in zip(tests, test_scores, strict=True):
            r.tests[corruption.name].append(score)


def _tests(
    nxt: pd.DataFrame,
    column: str,
    catalogue: list[Corruption],
    source_idx: int,
    day: int,
    column_idx: int,
) -> list[tuple[Corruption, pd.DataFrame]]:
    out = []
    for i, corruption in enumerate(catalogue):
        rng = np.random.default_rng(eval_seed(source_idx, day, column_idx, i))
        batch = apply(nxt, column, corruption, rng)
        if batch.equals(nxt) or same_values(nxt[column], batch[column]):
            continue
        out.append((corruption, batch[[column]]))
    return out


def same_values(before: pd.Series, after: pd.Series) -> bool:
    """Whether ``after`` holds the very values of ``before`` (missing ones included), perhaps in
    another order: a corruption that only reorders a column is no issue a method judging its
    values could see (``corruptions.py``: a schema change on a frame with no other column).

    >>> same_values(pd.Series([3.0, None, 1.0]), pd.Series([1.0, 3.0, None]))
    True
    >>> same_values(pd.Series([3.0, 1.0]), pd.Series([1.0, 1.0]))
    False
    >>> same_values(pd.Series(["a", "b"]), pd.Series(["b", "a", "a"]))
    False
    """
    if len(before) != len(after) or before.dtype != after.dtype:
        return False
    try:
        a = before.sort_values(na_position="last", ignore_index=True)
        b = after.sort_values(na_position="last", ignore_index=True)
    except TypeError:  # values of mixed types do not sort: compare them in order only
        return False
    return bool(a.equals(b))


def _fmt(x: float) -> str:
    return "  n/a" if math.isnan(x) else f"{x:.3f}"


def report(tallies: dict[tuple[str, str], Tally], methods: list[str]) -> dict[str, float]:
    present = [
        m
        for m in methods
        if any((m, k) in tallies and tallies[(m, k)].clean for k in ("numeric", "categorical"))
    ]
    print()
    print("## overall (FPR on real next batches; recall on corrupted next batches)")
    print(
        f"{'method':<16} {'kind':<11} {'clean':>6} {'FPR':>7} {'FPR95up':>8} {'FPR-inc':>7} {'recall':>7} "
        f"{'prec*':>7} {'fit ms':>7} {'judge ms':>8}"
    )
    result: dict[str, float] = {}
    for m in present:
        for kind in ("numeric", "categorical"):
            t = tallies.get((m, kind))
            if t is None or not t.clean:
                print(f"{m:<16} {kind:<11} {'n/a':>6}")
                continue
            judged = t.clean + sum(t.recall_tests.values())
            print(
                f"{m:<16} {kind:<11} {t.clean:>6} {_fmt(t.fpr):>7} {_fmt(wilson_upper(t.false_alarms, t.clean)):>8} "
                f"{_fmt(t.fpr_excluding_incidents):>7} {_fmt(t.recall()):>7} {_fmt(t.precision()):>7} "
                f"{1000 * t.fit_seconds / max(t.fits, 1):>7.1f} "
                f"{1000 * t.judge_seconds / max(judged, 1):>8.2f}"
            )
        both = _merge(tallies, m)
        result[f"precision_{m}"] = both.precision()
        result[f"fpr_{m}"] = both.fpr
        result[f"fpr_{m}_excl_incidents"] = both.fpr_excluding_incidents
        result[f"precision_{m}_excl_incidents"] = both.precision(excluding_incidents=True)
        result[f"recall_{m}"] = both.recall()
        for kind in ("numeric", "categorical"):
            t = tallies.get((m, kind))
            if t is not None and t.clean:
                result[f"recall_{m}_{kind}"] = t.recall()
                result[f"fpr_{m}_{kind}"] = t.fpr
    print("prec* = precision in the paper's test mix (60% precision tests, 40% recall tests)")
    print(
        "FPR-inc = FPR without the real batches of known incidents (blizzard Nemo, 2013-02-08/09; "
        "weather wind_speed 1048 mph on 2013-02-12; weather.origin on the 16 days a station missed "
        "hourly readings): see bench/autovalidate/data.py"
    )
    print()
    print("## false alarms by calendar day (both kinds; a table-level shock flags many columns at once)")
    for m in present:
        both = _merge(tallies, m)
        print(
            f"{m:<16} {both.false_alarms:>5} alarms on {len(both.alarm_days):>3} days; outside known incidents "
            f"{both.false_alarms - both.incident_alarms:>5} on {len(both.ordinary_alarm_days):>3} days"
        )
        result[f"alarm_days_{m}"] = float(len(both.alarm_days))
        result[f"ordinary_alarm_days_{m}"] = float(len(both.ordinary_alarm_days))
    for kind in ("numeric", "categorical"):
        cols = [m for m in present if (m, kind) in tallies and tallies[(m, kind)].clean]
        if not cols:
            continue
        print()
        print(f"## recall per issue type, {kind} columns")
        print(f"{'issue':<24} {'tests':>6} " + " ".join(f"{m:>14}" for m in cols))
        for issue in ISSUE_TYPES:
            n = sum(v for k, v in tallies[(cols[0], kind)].recall_tests.items() if k.split(":")[0] == issue)
            if not n:
                continue
            row = " ".join(f"{_fmt(tallies[(m, kind)].issue_recall(issue)):>14}" for m in cols)
            print(f"{issue:<24} {n:>6} {row}")
    return result


def report_by_corruption(tallies: dict[tuple[str, str], Tally], methods: list[str]) -> None:
    for kind in ("numeric", "categorical"):
        cols = [m for m in methods if (m, kind) in tallies and tallies[(m, kind)].clean]
        if not cols:
            continue
        print()
        print(f"## recall per issue and magnitude, {kind} columns")
        print(f"{'corruption':<34} {'tests':>6} " + " ".join(f"{m:>14}" for m in cols))
        for c in corruptions_for(kind):
            n = tallies[(cols[0], kind)].recall_tests.get(c.name, 0)
            if not n:
                continue
            row = " ".join(f"{_fmt(tallies[(m, kind)].recall(c.name)):>14}" for m in cols)
            print(f"{c.name:<34} {n:>6} {row}")


def report_by_column(tallies: dict[tuple[str, str], Tally], methods: list[str]) -> None:
    """FPR and recall per traced column (``source.column``) and method, and each column's recall
    per issue type: where a method's false alarms and misses come from."""
    columns = sorted({key for _, key in tallies if key not in ("numeric", "categorical")})
    present = [m for m in methods if any((m, c) in tallies for c in columns)]
    if not columns or not present:
        return
    print()
    print("## per column: false alarms / precision tests, recall")
    print(f"{'column':<20} " + " ".join(f"{m:>22}" for m in present))
    for c in columns:
        cells = []
        for m in present:
            t = tallies.get((m, c))
            cells.append(
                f"{t.false_alarms:>4}/{t.clean:<4} {_fmt(t.recall()):>7}" if t and t.clean else "n/a"
            )
        print(f"{c:<20} " + " ".join(f"{cell:>22}" for cell in cells))
    print()
    print("## per column: recall per issue type")
    for c in columns:
        rows = [(m, tallies[(m, c)]) for m in present if (m, c) in tallies and tallies[(m, c)].clean]
        issues = [i for i in ISSUE_TYPES if any(k.split(":")[0] == i for k in rows[0][1].recall_tests)]
        print(f"{c:<20} " + " ".join(f"{i[:10]:>10}" for i in issues))
        for m, t in rows:
            print(f"  {m:<18} " + " ".join(f"{_fmt(t.issue_recall(i)):>10}" for i in issues))


def report_matched(
    tallies: dict[tuple[str, str], Tally], records: dict[tuple[str, str], ScoreRecord], methods: list[str]
) -> dict[str, float]:
    """The scorers (``scores.py``) at thresholds matched to each AVH target's false alarms (both kinds
    pooled, one threshold per scorer), their recall per issue type beside AVH's at the primary
    target, and their precision/recall sweep over ``SWEEP``."""
    scorers = [m for m in methods if any((m, k) in records for k in ("numeric", "categorical"))]
    targets = [
        m
        for m in methods
        if m.startswith("avh") and m != PAPER and any((m, k) in tallies for k in ("numeric", "categorical"))
    ]
    result: dict[str, float] = {}
    if not scorers:
        return result
    pooled = {m: _pool(records, m) for m in scorers}
    kinds = ("numeric", "categorical")
    if targets:
        print()
        print("## recall at AVH's false alarms (each scorer's threshold chosen on these batches: an oracle)")
        print(
            f"{'method':<16} {'matched to':<10} {'threshold':>9} {'alarms':>6} {'alarms-inc':>10} "
            f"{'recall':>7} {'numeric':>7} {'categ.':>7}"
        )
        for target in targets:
            both = _merge(tallies, target)
            print(
                f"{target:<16} {'':<10} {'':>9} {both.false_alarms:>6} {both.false_alarms - both.incident_alarms:>10} "
                f"{_fmt(both.recall()):>7} "
                + " ".join(
                    f"{_fmt(tallies[(target, k)].recall()) if (target, k) in tallies else '':>7}"
                    for k in kinds
                )
            )
            for m in scorers:
                t = matched_threshold([sc for sc, _ in pooled[m].clean], both.false_alarms)
                by_kind = [records.get((m, k)) for k in kinds]
                print(
                    f"{m:<16} {target:<10} {t:>9.3g} {pooled[m].false_alarms(t):>6} "
                    f"{pooled[m].false_alarms_excluding_incidents(t):>10} {_fmt(pooled[m].recall(t)):>7} "
                    + " ".join(f"{_fmt(r.recall(t)) if r else '':>7}" for r in by_kind)
                )
                suffix = "" if target == "avh" else target[3:]
                result[f"recall_{m}_at_avh{suffix}"] = pooled[m].recall(t)
                result[f"alarms_{m}_at_avh{suffix}"] = float(pooled[m].false_alarms(t))
        primary = targets[0]
        both = _merge(tallies, primary)
        thresholds = {
            m: matched_threshold([sc for sc, _ in pooled[m].clean], both.false_alarms) for m in scorers
        }
        for kind in kinds:
            if (primary, kind) not in tallies:
                continue
            print()
            print(f"## recall per issue type at {primary}'s false alarms, {kind} columns")
            print(f"{'issue':<24} {primary:>14} " + " ".join(f"{m:>14}" for m in scorers))
            for issue in ISSUE_TYPES:
                if not any(k.split(":")[0] == issue for k in tallies[(primary, kind)].recall_tests):
                    continue
                cells = [
                    _fmt(records[(m, kind)].issue_recall(thresholds[m], issue))
                    if (m, kind) in records
                    else "n/a"
                    for m in scorers
                ]
                row = " ".join(f"{c:>14}" for c in cells)
                print(f"{issue:<24} {_fmt(tallies[(primary, kind)].issue_recall(issue)):>14} {row}")
    print()
    print("## scorers' sweep: FPR and recall (both kinds) at fixed thresholds")
    print(f"{'method':<16} " + " ".join(f"{t:>13g}" for t in SWEEP))
    for m in scorers:
        n = len(pooled[m].clean)
        cells = [f"{pooled[m].false_alarms(t) / n:.3f}/{pooled[m].recall(t):.3f}" for t in SWEEP]
        print(f"{m:<16} " + " ".join(f"{c:>13}" for c in cells))
    print("(each cell: FPR/recall)")
    return result


def _pool(records: dict[tuple[str, str], ScoreRecord], method: str) -> ScoreRecord:
    out = ScoreRecord()
    for kind in ("numeric", "categorical"):
        if (method, kind) in records:
            out.extend(records[(method, kind)], prefix=f"{kind}/")
    return out


def _merge(tallies: dict[tuple[str, str], Tally], method: str) -> Tally:
    out = Tally()
    for kind in ("numeric", "categorical"):
        t = tallies.get((method, kind))
        if t is None:
            continue
        out.clean += t.clean
        out.false_alarms += t.false_alarms
        out.incident_clean += t.incident_clean
        out.incident_alarms += t.incident_alarms
        out.alarm_days |= t.alarm_days
        out.ordinary_alarm_days |= t.ordinary_alarm_days
        for k, v in t.recall_tests.items():
            out.recall_tests[f"{kind}/{k}"] += v
        for k, v in t.caught.items():
            out.caught[f"{kind}/{k}"] += v
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--quick", action="store_true", help="smoke run: flights, 1 trace, 2 columns per kind, 3 steps"
    )
    parser.add_argument("--sources", default="flights,weather")
    parser.add_argument(
        "--traces",
        type=int,
        default=0,
        help="traces of 60 days per source (a year holds 6; 0, the default, = all)",
    )
    parser.add_argument(
        "--first-trace",
        type=int,
        default=0,
        help="skip this many traces first (e.g. 2: the held-out traces 3-6)",
    )
    parser.add_argument(
        "--unit-rows",
        type=int,
        default=0,
        help="windows as the unit: each source's consecutive batches are joined into tumbling units of "
        "ceil(N / its median batch rows) batches, which are learned from and judged (0, the default: "
        "each batch is a unit, the paper's protocol)",
    )
    parser.add_argument("--steps", type=int, default=TRACE - HISTORY, help="sliding steps per trace (max 30)")
    parser.add_argument("--kinds", default="numeric,categorical", help="column kinds to trace")
    parser.add_argument("--columns", type=int, default=99, help="columns per kind and source")
    parser.add_argument(
        "--methods",
        default="avh,avh_paper,online_normal,online_normal_5,tfdv_linf,deequ_default,streamdq_suggest,zscore,zscore_all",
    )
    parser.add_argument("--fpr", type=float, default=TARGET_FPR, help="AVH's target FPR (the `avh` rows)")
    parser.add_argument(
        "--also-fpr",
        default="0.01,0.05",
        help="AVH also learned at these targets on the same profiles (`avh_<fpr>` rows; '' for none)",
    )
    parser.add_argument("--chunk", type=int, default=30, help="AVH: steps profiled per engine run")
    parser.add_argument(
        "--holidays",
        default="source",
        help="AVH's holiday calendar: 'source' (each source's own, data.CALENDARS: the default), "
        "'none', or one calendar for all sources as auto_validate.holidays in YAML (e.g. US-NY or "
        "'{country: US, days_after: 1}')",
    )
    parser.add_argument(
        "--check-learn", action="store_true", help="compare learn() itself with the cached path (slow)"
    )
    parser.add_argument("--by-corruption", action="store_true", help="also print recall per magnitude")
    parser.add_argument(
        "--by-column", action="store_true", help="also print FPR and recall per traced column"
    )
    parser.add_argument("--json", default=None, help="write all counts to this file")
    parser.add_argument(
        "--profile-cache",
        default=None,
        help="AVH: keep the engine's profiles in this directory (learner experiments)",
    )
    args = parser.parse_args()
    if args.first_trace < 0 or args.traces < 0:
        parser.error("--first-trace and --traces must be >= 0")
    args.profile_cache = ProfileCache(Path(args.profile_cache)) if args.profile_cache else None
    source_calendar(None, args.holidays)  # a bad --holidays fails before any work
    if args.quick:
        args.sources, args.traces, args.columns, args.steps = "flights", 1, 2, 3
        args.check_learn = True
    args.sources = [s for s in args.sources.split(",") if s]
    args.methods = [m for m in args.methods.split(",") if m]
    args.also_fpr = tuple(f for f in (float(x) for x in args.also_fpr.split(",") if x) if f != args.fpr)
    if "avh" in args.methods:
        at = args.methods.index("avh") + 1
        args.methods[at:at] = [avh_method(f, args.fpr) for f in args.also_fpr]
    args.kinds = [k for k in args.kinds.split(",") if k]
    args.steps = max(1, min(args.steps, TRACE - HISTORY))
    print(
        f"# sources={args.sources} traces={args.traces or 'all'} first_trace={args.first_trace} steps={args.steps} columns/kind={args.columns} "
        f"methods={args.methods} fpr={args.fpr} holidays={args.holidays}"
        + (f" unit_rows={args.unit_rows}" if args.unit_rows else ""),
        flush=True,
    )
    tallies, records = run(args)
    result = report(tallies, args.methods)
    result.update(report_matched(tallies, records, args.methods))
    if args.by_corruption:
        report_by_corruption(tallies, args.methods)
    if args.by_column:
        report_by_column(tallies, args.methods)
    if args.json:
        payload = {
            f"{m}/{k}": {
                "clean": t.clean,
                "false_alarms": t.false_alarms,
                "incident_clean": t.incident_clean,
                "incident_alarms": t.incident_alarms,
                "recall_tests": dict(t.recall_tests),
                "caught": dict(t.caught),
            }
            for (m, k), t in tallies.items()
        }
        for (m, k), r in records.items():
            payload[f"{m}/{k}"] = {"clean_scores": r.clean, "test_scores": dict(r.tests)}
        Path(args.json).write_text(json.dumps(payload, indent=1, sort_keys=True))
    print()
    units = f"unit_rows={args.unit_rows} " if args.unit_rows else ""  # figures over units, not batches
    print("RESULT autovalidate " + units + " ".join(f"{k}={_fmt(v).strip()}" for k, v in result.items()))


if __name__ == "__main__":
    main()
