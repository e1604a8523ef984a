"""Auto-validation in the streaming job: ``auto_validate:`` in the run config.

``AutoValidateMonitor`` is a ``WindowMonitor`` (streamdq/monitors.py). For each
configured column it keeps the profiles of the last ``history`` closed windows (built
from the window's states; the analyzers it needs join the handler's fused pass). Once
``min_history`` windows exist it learns a program (``learn_from_profiles``, recall
estimated on corruptions of the newest window rebuilt from its profile, see
``reconstruct.py``, profiled by the engine's segmented analysis, which the engine hands over
when it builds the monitor: ``use_analysis``), and re-learns every ``relearn_every`` windows. Every closed window
after that is judged by the program against the previous window; the outcome is one
``CheckResult`` per column (check ``auto-validated <column>``, the configured level,
scope ``window``) whose constraint results carry stable ids per (dataset, column,
metric), so failures and their resolution flow through the alert policy and every sink
like hand-written checks. The judged window then joins the history (a window that
violates the program is kept out of it, so a lasting incident is not learned as normal, and it
does not become the reference of the next window's distances: the window after an incident is
compared with the last window that passed, not with the incident).

With ``unit_windows: N`` (default 1) the unit of learning and judging is N consecutive closed
windows, their states merged (``State.merge``, the same states a range query merges): where
windows are small, an issue touching 1% of the rows is one value in a window of 24, inside any
bound a false-positive budget allows, and several values over a unit of N windows, which need
not be (false alarms rise too: docs/autovalidate.md). The job's windows, and every hand-written check
on them, are unchanged; the auto-validated checks report once per unit, with the unit's window
(the first window's start to the last one's end). The states of a unit still open are persisted
with the monitor state, so a restart resumes the unit where it stood. A unit is a day off when
any of its windows starts on one.

With ``holidays:`` (a ``calendar.HolidayCalendar``), a window whose start falls on a day off
is flagged: its volume constraints (``features.VOLUME_METRICS``: row count, sum, distinct
counts) are not judged, nor those of a later window whose difference reads it; such a window is
judged by the program's off-day selection (``Program.judged``), and only the constraints judged
appear in the check result; learning keeps the flagged windows out of the volume bounds'
statistics.

State (histories, programs, counters) is JSON, persisted by the handler with every batch
commit; the programs are what ``streamdq autovalidate show`` prints. A ``seq`` already
seen is ignored (replay safety).

Config::

    auto_validate:
      columns: [amount, country]          # or {amount: numeric, country: categorical}
      history: 30                         # windows kept and learned from
      fpr: 0.001                          # target false-positive rate per column program
      relearn_every: 10                   # windows between re-learning
      min_history: 10                     # windows before the first program
      level: warning                      # level of the learned checks
      seed: 0
      holidays: {country: US, subdiv: NY} # days off: volume is not judged (calendar.py)
      unit_windows: 1                     # closed windows merged into one judged unit
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from streamdq.analyzers.base import Analyzer
from streamdq.analyzers.metric import COLUMN, Metric
from streamdq.analyzers.state import State, decode_state
from streamdq.autovalidate.avh.calendar import HolidayCalendar, calendar_from_config
from streamdq.autovalidate.avh.learner import MIN_HISTORY, learn_from_profiles
from streamdq.autovalidate.avh.profile import (
    CATEGORICAL,
    KINDS,
    NUMERIC,
    ColumnProfile,
    column_analyzers,
    profile_from_states,
)
from streamdq.autovalidate.avh.program import LearnedConstraint, Program, Violation
from streamdq.config_schema import REQUIRED, Key, Table, custom, integer, optional
from streamdq.display import range_text
from streamdq.errors import ConfigError, InvalidArgument
from streamdq.monitors import MonitorOutput, SegmentedAnalysis
from streamdq.report import CheckResult, ConstraintResult, Window

log = logging.getLogger(__name__)

STATE_VERSION = 1
CHECK_PREFIX = "auto-validated"


class AutoValidateMonitor:
    """Learns and applies one AVH program per configured column over closed windows."""

    key = "auto_validate"

    def __init__(
        self,
        dataset: str,
        columns: Mapping[str, str | None],
        *,
        history: int = 30,
        fpr: float = 0.001,
        relearn_every: int = 10,
        min_history: int = 10,
        level: str = "Warning",
        seed: int = 0,
        max_sample_rows: int = 5000,
        calendar: HolidayCalendar | None = None,
        analysis: SegmentedAnalysis | None = None,
        unit_windows: int = 1,
    ) -> None:
        if unit_windows < 1:
            raise InvalidArgument(f"unit_windows must be at least 1, got {unit_windows}")
        self.dataset = dataset
        self.columns = dict(columns)
        self.history = history
        self.fpr = fpr
        self.relearn_every = relearn_every
        self.min_history = min_history
        self.level = level
        self.seed = seed
        self.max_sample_rows = max_sample_rows
        self.calendar = calendar
        self.analysis = analysis
        self.kinds: dict[str, str] = {c: k for c, k in self.columns.items() if k}
        self.profiles: dict[str, list[ColumnProfile]] = {c: [] for c in self.columns}
        # whether each kept profile's window fell on a holiday (parallel to profiles)
        self.holidays: dict[str, list[bool]] = {c: [] for c in self.columns}
        self.programs: dict[str, Program] = {}
        self.since_learn: dict[str, int] = {c: 0 for c in self.columns}
        self.last_seq: int | None = None
        self._warned_no_analysis = False
        self.unit_windows = unit_windows
        # the unit still open (unit_windows > 1): its windows' states merged, by state key; how
        # many windows it holds; its first window; whether any of them started on a day off
        self.pending: dict[str, State] = {}
        self.pending_windows = 0
        self.pending_start: Window | None = None
        self.pending_day_off: str | None = None

    def use_analysis(self, analysis: SegmentedAnalysis) -> None:
        """Take the engine's segmented analysis (``streamdq.monitors.UsesAnalysis``; the engine's
        ``build_monitors`` calls it): learning profiles corrupted samples with it. Until one is
        given, no program is learned (a warning says so once)."""
        self.analysis = analysis

    # -- WindowMonitor -----------------------------------------------------------------
    def analyzers(self) -> Sequence[Analyzer]:
        out: list[Analyzer] = []
        for column, kind in self.columns.items():
            for k in [kind] if kind else list(KINDS):
                out.extend(column_analyzers(column, k))
        return list(dict.fromkeys(out))

    def observe(
        self, window: Window, seq: int, metrics: Mapping[Analyzer, Metric], states: Mapping[str, State]
    ) -> MonitorOutput:
        if self.last_seq is not None and seq <= self.last_seq:
            return MonitorOutput()
        self.last_seq = seq
        day_off = self._day_off(window)
        if self.unit_windows > 1:
            unit = self._gather(window, states, day_off)
            if unit is None:
                return MonitorOutput()
            window, states, day_off = unit
        results = []
        for column in self.columns:
            kind = self._kind(column, metrics)
            if kind is None:
                continue
            analyzers = column_analyzers(column, kind)
            by_analyzer = {a: states[a.state_key()] for a in analyzers if a.state_key() in states}
            profile = profile_from_states(column, kind, by_analyzer)
            program = self.programs.get(column)
            violations: list[Violation] = []
            if program is not None:
                holiday = day_off is not None
                muted = program.muted(holiday=holiday)
                if muted:
                    log.info(
                        "auto-validation: %s of %s.%s not judged in window %s: %s",
                        ", ".join(c.transformed_name() for c in muted),
                        self.dataset,
                        column,
                        window.start if window else "?",
                        day_off or "it is compared with a holiday",
                    )
                violations = program.judge_profile(profile, holiday=holiday)
                results.append(
                    self._check_result(program, violations, window, program.judged(holiday=holiday))
                )
                advanced = program.advance(profile, holiday=holiday)
                if violations:  # nor is it the previous batch the next window's distances read
                    advanced = replace(advanced, reference=program.reference)
                self.programs[column] = advanced
            if not violations:  # a violating window does not teach the program what normal is
                kept = self.profiles.setdefault(column, [])
                kept.append(profile)
                del kept[: -self.history]
                flags = self.holidays.setdefault(column, [])
                flags.append(day_off is not None)
                del flags[: -self.history]
            self.since_learn[column] = self.since_learn.get(column, 0) + 1
            self._maybe_learn(column, profile)
        return MonitorOutput(check_results=tuple(results))

    def dump_state(self) -> bytes:
        doc: dict[str, Any] = {
            "version": STATE_VERSION,
            "last_seq": self.last_seq,
            "kinds": self.kinds,
            "since_learn": self.since_learn,
            "profiles": {c: [p.to_json() for p in ps] for c, ps in self.profiles.items()},
            "holidays": self.holidays,
            "programs": {c: p.to_dict() for c, p in self.programs.items()},
        }
        if self.pending_windows:
            doc["unit"] = {
                "windows": self.pending_windows,
                "start": self.pending_start.to_dict() if self.pending_start else None,
                "day_off": self.pending_day_off,
                "states": {k: base64.b64encode(s.to_bytes()).decode() for k, s in self.pending.items()},
            }
        return json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()

    def load_state(self, blob: bytes) -> None:
        doc = json.loads(blob)
        if doc.get("version") != STATE_VERSION:
            raise InvalidArgument(f"auto_validate state version {doc.get('version')} is not {STATE_VERSION}")
        self.last_seq = doc.get("last_seq")
        self.kinds.update(doc.get("kinds", {}))
        self.since_learn.update(doc.get("since_learn", {}))
        for c, ps in doc.get("profiles", {}).items():
            self.profiles[c] = [ColumnProfile.from_json(p) for p in ps]
            flags = [bool(h) for h in doc.get("holidays", {}).get(c, ())]
            # a state written before calendars: none of its windows was flagged
            self.holidays[c] = flags if len(flags) == len(ps) else [False] * len(ps)
        self.programs = {c: Program.from_dict(p) for c, p in doc.get("programs", {}).items()}
        unit = doc.get("unit") or {}
        self.pending_windows = int(unit.get("windows", 0))
        self.pending_start = Window.from_dict(unit.get("start"))
        self.pending_day_off = unit.get("day_off")
        self.pending = {k: decode_state(base64.b64decode(b)) for k, b in unit.get("states", {}).items()}

    # -- internals ---------------------------------------------------------------------
    def _gather(
        self, window: Window, states: Mapping[str, State], day_off: str | None
    ) -> tuple[Window, dict[str, State], str | None] | None:
        """Merge one closed window into the open unit; the unit (its window, merged states, day
        off) once it holds ``unit_windows`` windows, else None."""
        keys = {a.state_key() for a in self.analyzers()}
        for key, state in states.items():
            if key in keys:
                held = self.pending.get(key)
                self.pending[key] = state if held is None else held.merge(state)
        if self.pending_windows == 0:
            self.pending_start = window
        self.pending_day_off = self.pending_day_off or day_off
        self.pending_windows += 1
        if self.pending_windows < self.unit_windows:
            return None
        first = self.pending_start or window
        unit_window = Window(first.start, window.end) if first is not None and window is not None else window
        unit = (unit_window, self.pending, self.pending_day_off)
        self.pending, self.pending_windows, self.pending_start, self.pending_day_off = {}, 0, None, None
        return unit

    def _day_off(self, window: Window | None) -> str | None:
        """The name of the holiday the window starts on, or None (no calendar, no window)."""
        if self.calendar is None or window is None:
            return None
        return self.calendar.holiday(window.start)

    def _kind(self, column: str, metrics: Mapping[Analyzer, Metric]) -> str | None:
        """The configured kind, else numeric if the column's mean is computable, else categorical."""
        if column in self.kinds:
            return self.kinds[column]

        def of(name: str) -> Metric | None:
            found = (m for a, m in metrics.items() if name == a.NAME and getattr(a, "column", None) == column)
            return next(found, None)

        mean, histogram = of("Mean"), of("Histogram")
        if mean is not None and mean.ok:
            self.kinds[column] = NUMERIC
        elif mean is not None and mean.empty:
            return None  # no values in this window: cannot tell yet
        elif histogram is not None and histogram.ok:
            self.kinds[column] = CATEGORICAL
        else:
            return None
        return self.kinds[column]

    def _maybe_learn(self, column: str, newest: ColumnProfile) -> None:
        profiles = self.profiles.get(column, [])
        due = column not in self.programs or self.since_learn.get(column, 0) >= self.relearn_every
        if len(profiles) < self.min_history or not due or profiles[-1] is not newest:
            return
        from streamdq.autovalidate.avh.reconstruct import corrupted_profiles

        if self.analysis is None:
            if not self._warned_no_analysis:
                log.warning(
                    "auto-validation of %s cannot learn: no analysis to profile samples with "
                    "(build the monitor with streamdq.engine.monitor.build_monitors, or pass "
                    "analysis=streamdq.engine.monitor.analyze_segments)",
                    self.dataset,
                )
                self._warned_no_analysis = True
            return
        try:
            corrupted = corrupted_profiles(
                newest, self.seed, analysis=self.analysis, max_rows=self.max_sample_rows
            )
            flags = self.holidays.get(column, [])
            # with a calendar the program also gets its off-day selection (Program.judged)
            holidays = flags if self.calendar is not None and len(flags) == len(profiles) else []
            program = learn_from_profiles(profiles, corrupted, fpr=self.fpr, holidays=holidays)
        except Exception:  # learning never stops the stream; the old program stays
            log.exception("auto-validation: learning a program for %s failed", column)
            return
        self.programs[column] = program
        self.since_learn[column] = 0
        log.info("auto-validation learned for %s.%s:\n%s", self.dataset, column, program.show())

    def _check_result(
        self,
        program: Program,
        violations: list[Violation],
        window: Window,
        judged: Sequence[LearnedConstraint],
    ) -> CheckResult:
        """One result per ``judged`` constraint (a constraint not judged in this window has none)."""
        failed = {id(v.constraint): v for v in violations}
        check = f"{CHECK_PREFIX} {program.column}"
        out = []
        for c in judged:
            v = failed.get(id(c))
            ident = hashlib.sha256(
                f"{self.dataset}|{CHECK_PREFIX}|{c.column}|{c.metric}".encode()
            ).hexdigest()
            out.append(
                ConstraintResult(
                    check=check,
                    level=self.level,
                    constraint=f"learned {c.transformed_name()}({c.column}) {range_text(c.lower, c.upper)}",
                    constraint_id=ident[:16],
                    status="Failure" if v else "Success",
                    message=v.message if v else None,
                    metric=Metric(COLUMN, f"AutoValidate.{c.metric}", c.column, value=v.value if v else None)
                    if v
                    else None,
                    scope="window",
                    window=window,
                    bound=[c.lower, c.upper],
                )
            )
        status = self.level if violations else "Success"
        return CheckResult(check, self.level, status, tuple(out))


@dataclass(frozen=True)
class AutoValidateSettings:
    """``auto_validate:`` parsed by ``AUTO_VALIDATE_TABLE``: the columns to learn (name -> kind,
    None: found from the data) and how. A frozen value; ``auto_validate_monitor`` builds the
    monitor from it without validating again."""

    columns: tuple[tuple[str, str | None], ...]
    history: int = 30
    fpr: float = 0.001
    relearn_every: int = 10
    min_history: int = 10
    level: str = "Warning"
    seed: int = 0
    max_sample_rows: int = 5000
    calendar: HolidayCalendar | None = None
    unit_windows: int = 1


def _columns(path: str, cols: Any) -> tuple[tuple[str, str | None], ...]:
    if isinstance(cols, list) and cols and all(isinstance(c, str) for c in cols):
        return tuple((c, None) for c in cols)
    if isinstance(cols, dict) and cols and all(k in KINDS for k in cols.values()):
        return tuple((str(c), str(k)) for c, k in cols.items())
    raise ConfigError(
        path,
        f"expected a non-empty list of column names, or a mapping column -> numeric | categorical, got {cols!r}",
        "list the columns to learn, e.g. columns: [amount, country] or {amount: numeric}",
    )


def _fpr(path: str, fpr: Any) -> float:
    if not isinstance(fpr, int | float) or isinstance(fpr, bool) or not 0 < fpr < 1:
        raise ConfigError(
            path, f"expected a false-positive rate in (0, 1), got {fpr!r}", "e.g. fpr: 0.001 (the default)"
        )
    return float(fpr)


def _level(path: str, value: Any) -> str:
    level = str(value).capitalize()
    if level not in ("Warning", "Error"):
        raise ConfigError(
            path, f"expected warning or error, got {value!r}", "set level: warning or level: error"
        )
    return level


def _min_history(values: dict[str, Any], where: str) -> None:
    history, least = values["history"], values["min_history"]
    if least is not None and least > history:
        raise ConfigError(
            f"{where}.min_history",
            f"min_history ({least}) cannot exceed history ({history})",
            f"set min_history <= {history}, or raise history",
        )


def _integer(key: str, default: int, low: int, doc: str) -> Key:
    return Key(key, integer(low=low), default=default, fix=f"set {key}: {max(low, default)}", doc=doc)


AUTO_VALIDATE_TABLE = Table(
    "auto_validate",
    (
        Key(
            "columns",
            custom(_columns, "list of columns | mapping column -> numeric | categorical"),
            default=REQUIRED,
            fix="list the columns to learn, e.g. columns: [amount, country] or {amount: numeric}",
            doc="the columns whose profiles are learned",
        ),
        _integer("history", 30, MIN_HISTORY, "past units (windows; unit_windows) a program is learned from"),
        Key(
            "min_history",
            optional(integer(low=MIN_HISTORY)),
            default=None,
            fix="set min_history: 10",
            shown="min(10, history)",
            doc="units seen before the first program",
        ),
        Key(
            "fpr",
            custom(_fpr, "number in (0, 1)"),
            default=0.001,
            doc="the false-positive rate a program is bought at",
        ),
        _integer("relearn_every", 10, 1, "units between two learnings"),
        Key(
            "level",
            custom(_level, "warning | error"),
            default="Warning",
            doc="the level of its check results",
        ),
        _integer("seed", 0, 0, "seed of the corruption samples"),
        _integer("max_sample_rows", 5000, 100, "rows sampled per unit for learning"),
        Key(
            "holidays",
            optional(custom(lambda path, raw: calendar_from_config(raw, path), "country | mapping")),
            default=None,
            doc="days off, judged apart (docs/autovalidate.md)",
        ),
        _integer("unit_windows", 1, 1, "closed windows merged into one learned and judged unit"),
    ),
    known_label="use one of",
    rules=(_min_history,),
)
"""The keys of ``auto_validate:`` (streamdq.config_schema; docs/configuration.md)."""
KEYS = set(AUTO_VALIDATE_TABLE.names())


def auto_validate_settings(raw: Any) -> AutoValidateSettings:
    """Parse ``auto_validate:`` once (errors name ``auto_validate.<key>`` and the fix, all at
    once); builds no monitor."""
    if not isinstance(raw, Mapping):
        raise ConfigError(
            "auto_validate",
            f"expected a mapping, got {type(raw).__name__}",
            "write auto_validate: {columns: [amount, country], history: 30, fpr: 0.001}",
        )
    values = AUTO_VALIDATE_TABLE.parse(raw, "auto_validate")
    if values["min_history"] is None:
        values["min_history"] = min(10, values["history"])
    return AutoValidateSettings(calendar=values.pop("holidays"), **values)


def auto_validate_monitor(
    settings: AutoValidateSettings, dataset: str, *, analysis: SegmentedAnalysis | None = None
) -> AutoValidateMonitor:
    """The monitor of parsed settings; ``analysis`` (else ``use_analysis`` later) is what it
    learns with."""
    return AutoValidateMonitor(
        dataset,
        dict(settings.columns),
        history=settings.history,
        fpr=settings.fpr,
        relearn_every=settings.relearn_every,
        min_history=settings.min_history,
        level=settings.level,
        seed=settings.seed,
        max_sample_rows=settings.max_sample_rows,
        calendar=settings.calendar,
        analysis=analysis,
        unit_windows=settings.unit_windows,
    )


def auto_validate_monitor_from_config(
    raw: Any, dataset: str, *, analysis: SegmentedAnalysis | None = None
) -> AutoValidateMonitor:
    """Validate ``auto_validate:`` (errors name ``auto_validate.<key>`` and the fix) and build the
    monitor: ``auto_validate_monitor(auto_validate_settings(raw), ...)``."""
    return auto_validate_monitor(auto_validate_settings(raw), dataset, analysis=analysis)
