"""learn() and judge(): auto-validation by history on DataFrames, profiled by the engine.

It sits beside the engine, above autovalidate, as :mod:`streamdq.verification` does for the
checks: the learner (:mod:`streamdq.autovalidate.avh.learner`) and a ``Program`` are pure values
on column profiles and never import the engine; the profiles of frames need the engine's analysis
plan, so the entry points that start from frames live here and hand the engine's segmented run
(``streamdq.engine.monitor.analyze_segments``) to :mod:`streamdq.autovalidate.avh.profiling`.
``streamdq.autovalidate.learn`` / ``judge`` / ``profile_frames`` (and the same names of
``streamdq.autovalidate.avh``) are these functions, resolved on first use, so importing
autovalidate never imports the engine.

* ``learn(history, column, fpr=0.001, seed=None) -> Program``: profiles every history batch and
  every synthetic corruption of the newest in ONE engine run, then ``learn_from_profiles``.
* ``judge(program, batch) -> [Violation]``: the batch's profile (one run), judged by the program.
* ``profile_frames`` / ``profile_segments``: profiles of frames or of one frame's segments.
* ``profile_steps``: the profiles of many learning steps in one run (evaluation at scale).

>>> program = learn(history, "amount", fpr=0.001, seed=0)  # doctest: +SKIP
>>> judge(program, next_batch)  # [] means the batch passes  # doctest: +SKIP
[]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from streamdq.autovalidate.avh import profiling
from streamdq.autovalidate.avh.learner import learn_from_profiles
from streamdq.autovalidate.avh.profile import ColumnProfile
from streamdq.autovalidate.avh.profiling import StepProfiles, corrupted_frames, kind_of
from streamdq.autovalidate.avh.program import Program, Violation
from streamdq.engine.monitor import analyze_segments
from streamdq.engine.plan import DEFAULT_MAX_GROUPS
from streamdq.errors import InvalidArgument


def profile_frames(
    frames: Sequence[Any], column: str, kind: str, *, spark: Any = None, max_groups: int = DEFAULT_MAX_GROUPS
) -> list[ColumnProfile]:
    """The profile of ``column`` in each frame (pandas or Spark), in one segmented engine run
    (``avh.profiling.profile_frames`` with the engine's analysis). No frame: ``[]``."""
    return profiling.profile_frames(
        frames, column, kind, analysis=analyze_segments, spark=spark, max_groups=max_groups
    )


def profile_segments(
    df: Any,
    segment: Any,
    keys: Sequence[Any],
    column: str,
    kind: str,
    *,
    max_groups: int = DEFAULT_MAX_GROUPS,
) -> list[ColumnProfile]:
    """The profile of ``column`` in each segment ``keys[i]`` of one Spark frame, in that order
    (one engine run: a scan-shareable pass grouped by the Spark column ``segment``, plus one
    grouped pass for a categorical column). A key without rows gets the empty profile."""
    return profiling.profile_segments(
        df, segment, keys, column, kind, analysis=analyze_segments, max_groups=max_groups
    )


def learn(
    history: Sequence[Any],
    column: str,
    fpr: float = 0.001,
    seed: int | None = None,
    *,
    kind: str | None = None,
    spark: Any = None,
    holidays: Sequence[bool] = (),
) -> Program:
    """Learn the program of ``column`` from ``history`` (per-batch frames, oldest first);
    ``holidays``: whether each history batch fell on a day off (``learn_at_targets``).

    An empty ``history``, ``fpr`` outside (0, 1) or ``holidays`` not one flag per history batch
    raise ``InvalidArgument`` (a ``StreamdqError``, also a ``ValueError``) before any profiling.
    """
    if not history:
        raise InvalidArgument("learn() needs a non-empty history of batches")
    if not 0.0 < fpr < 1.0:
        raise InvalidArgument(f"learn(): fpr must be in (0, 1), got {fpr}")
    if holidays and len(holidays) != len(history):
        raise InvalidArgument(
            f"learn(): holidays has {len(holidays)} flags for {len(history)} history batches"
        )
    kind = kind or kind_of(history[-1], column)
    corrupted = corrupted_frames(history[-1], column, kind, seed)
    names = list(corrupted)
    profiles = profile_frames([*history, *corrupted.values()], column, kind, spark=spark)
    hist, bad = profiles[: len(history)], profiles[len(history) :]
    return learn_from_profiles(hist, dict(zip(names, bad, strict=True)), fpr=fpr, holidays=holidays)


def judge(program: Program, batch: Any, *, holiday: bool = False, spark: Any = None) -> list[Violation]:
    """The violations of one new ``batch`` (a pandas or Spark DataFrame) under ``program``; empty
    means it passes. Runs on the driver: the batch's profile is computed by the engine
    (``profile_frames``, one run), then judged by the pure ``program.judge_profile``; the program
    is not changed (``program.advance`` moves its reference). ``holiday``: the batch falls on a
    day off (``Program.judged``). An empty batch is judged as one (its row count is 0)."""
    (profile,) = profile_frames([batch], program.column, program.kind, spark=spark)
    return program.judge_profile(profile, holiday=holiday)


def profile_steps(
    steps: Sequence[tuple[Any, int | None, Sequence[Any]]],
    column: str,
    kind: str,
    *,
    spark: Any = None,
    profiler: Callable[[list[Any]], Sequence[ColumnProfile]] | None = None,
) -> list[StepProfiles]:
    """Profiles for evaluating auto-validation at scale, in ONE engine run for all steps.

    Each step is ``(newest, seed, to_judge)``: the newest history batch (pandas or Spark), the
    seed ``learn`` would get, and the batches the step's program will judge. Every step's
    corruptions (``corrupted_frames(newest, column, kind, seed)``) and batches to judge are
    profiled together (``profile_frames``; ``profiler(frames) -> profiles`` replaces it, e.g.
    with a cache). With the history's profiles (``profile_frames`` of the batches once, shared
    by overlapping windows), each step is then
    ``learn_from_profiles(history, step.corrupted, fpr)`` and ``program.judge_profile(p)`` for
    ``p`` in ``step.judged``: the same programs and verdicts as ``learn(...)`` and
    ``judge(program, batch)`` (docs/autovalidate.md, "Evaluating at scale"). No step: ``[]``.

    >>> steps = [(batches[k - 1], k, [batches[k]]) for k in range(30, 60)]  # doctest: +SKIP
    >>> out = profile_steps(steps, "temp", "numeric")  # doctest: +SKIP
    >>> history = profile_frames(batches[:59], "temp", "numeric")  # doctest: +SKIP
    >>> program = learn_from_profiles(history[0:30], out[0].corrupted)  # doctest: +SKIP
    >>> flagged = bool(program.judge_profile(out[0].judged[0]))  # doctest: +SKIP
    """
    frames: list[Any] = []
    layout: list[tuple[list[str], int]] = []
    for newest, seed, to_judge in steps:
        corrupted = corrupted_frames(newest, column, kind, seed)
        judged = list(to_judge)
        layout.append((list(corrupted), len(judged)))
        frames += [*corrupted.values(), *judged]
    if not frames:
        return [StepProfiles({}, ()) for _ in steps]
    if profiler is None:
        profiles = profile_frames(frames, column, kind, spark=spark)
    else:
        profiles = list(profiler(frames))
    out, pos = [], 0
    for names, n_judged in layout:
        corrupted_profiles = dict(zip(names, profiles[pos : pos + len(names)], strict=True))
        pos += len(names)
        out.append(StepProfiles(corrupted_profiles, tuple(profiles[pos : pos + n_judged])))
        pos += n_judged
    return out


__all__ = ["judge", "learn", "profile_frames", "profile_segments", "profile_steps", "StepProfiles"]
