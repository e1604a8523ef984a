"""The detector protocol, its data types and the registry of detector types.

Contract (DESIGN.md section 3, "Detector"):

* A detector is a frozen, hashable config dataclass. ``to_spec()`` gives a JSON/YAML-able dict
  ``{"type": "online_normal", ...}``; ``detector_from_spec(spec)`` builds it back and raises
  ``ValueError`` naming the offending key for an unknown type, an unknown key or a bad value.
* ``initial_state()`` returns the state of a detector that has seen nothing: a plain dict of JSON
  values (``dump_state``/``load_state`` turn it into canonical bytes with a format version; non-finite
  floats are tagged). The river adapters keep a base64 pickle of the river object inside that dict and
  say so; nothing else is pickled.
* ``update(state, point) -> (state, verdict)`` is a pure function of its inputs (the given state is
  never mutated) and runs on the driver, once per metric point (per batch or per closed window). It
  costs the same whatever the length of the history: every state is bounded.
* Replay safety: a point whose ``seq`` is <= the last ``seq`` seen returns the stored verdict of that
  ``seq`` (the last ``REPLAY_MEMORY`` verdicts are kept) and the state unchanged.
* A missing value (``None``/NaN) is skipped: not anomalous, state unchanged apart from the seq
  (detectors with ``HANDLES_MISSING``, i.e. Holt-Winters, advance with their forecast instead).
* An infinite value (+-inf) is judged against what was learned (outside any finite bounds, so
  flagged once warm-up is over) but never learned: the learned statistics stay as they were
  (``HANDLES_MISSING`` detectors advance as for a missing value). One infinity must not turn every
  later point into an alarm.
* Warm-up: until a detector has enough history it answers ``warming_up=True`` with a message saying
  how many more points it waits for (``warming_up(missing)``), and never flags.
* ``learn_from_anomalies`` (per detector; the default follows Deequ) says whether a point flagged as
  anomalous is folded into the learned statistics. Detectors that do not learn flagged points also
  take ``relearn_after=N``: from the N-th consecutive anomaly on, flagged points are learned anyway
  (a lasting level shift becomes the new normal instead of alerting forever; online form only).
* ``detect(series, start=0, end=None) -> list[int]`` is Deequ's batch form: the indices inside the
  search interval ``[start, end)`` that are anomalous. For the Deequ strategies it reproduces Deequ's
  semantics exactly (SEMANTICS.md "Anomaly detection"); for the others it replays the series through
  ``update``. An empty series gives ``[]`` (BatchNormal and HoltWinters raise, as Deequ does).

Registration is explicit: importing a detector module registers nothing; ``register_detector(cls)``
adds a class, and ``streamdq.detectors.register`` registers the built-ins (``register_builtins()``)
before its look-ups (``detector_from_spec``, ``detector_types``, ``registered_detectors``).

Every detector class gives ``_unit_test_params()`` (parameter sets to build it with); the
conformance kit ``streamdq.testing.detector_checks.check_detector`` puts every registered class
through the laws above (tests/laws/test_detector_conformance.py).

Examples
--------
>>> from streamdq.detectors import detector_from_spec
>>> detector = detector_from_spec({"type": "simple_threshold", "upper_bound": 10})
>>> state = detector.initial_state()
>>> state, verdict = detector.update(state, Point(time=0.0, value=12.0, seq=0))
>>> verdict.anomalous, verdict.upper
(True, 10.0)
>>> detector.update(state, Point(time=0.0, value=1.0, seq=0))[1].anomalous  # a replayed seq
True
>>> load_state(dump_state(state)) == state
True
>>> detector_from_spec({"type": "simple_threshold", "upper_bound": "ten"})
Traceback (most recent call last):
...
streamdq.errors.ConfigError: upper_bound: must be a number, got 'ten' (detector simple_threshold) (fix: give a number such as 3.0)
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import math
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, ClassVar, Self

from streamdq.class_registry import ClassRegistry
from streamdq.errors import ConfigError, InvalidArgument, StreamdqError

# Scala's Double.MinValue / Double.MaxValue: Deequ's "missing bound".
MIN_DOUBLE = -1.7976931348623157e308
MAX_DOUBLE = 1.7976931348623157e308

STATE_FORMAT = 1
REPLAY_MEMORY = 32

DetectorState = dict[str, Any]


@dataclasses.dataclass(frozen=True)
class Point:
    """One point of a metric series: event or processing time, value, and a strictly increasing seq
    (the batch id, or the window index) used for replay safety. ``time`` is a datetime or epoch seconds."""

    time: datetime | float
    value: float | None
    seq: int


@dataclasses.dataclass(frozen=True)
class Verdict:
    """A detector's judgement of one point: anomalous or not, the expected interval, a score."""

    anomalous: bool
    lower: float | None = None
    upper: float | None = None
    score: float | None = None
    warming_up: bool = False
    message: str = ""

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Verdict:
        return cls(
            anomalous=bool(data["anomalous"]),
            lower=data.get("lower"),
            upper=data.get("upper"),
            score=data.get("score"),
            warming_up=bool(data.get("warming_up", False)),
            message=str(data.get("message", "")),
        )


def warming_up(
    missing: int,
    what: str = "points",
    *,
    lower: float | None = None,
    upper: float | None = None,
    score: float | None = None,
    doing: str = "",
    note: str = "",
) -> Verdict:
    """The verdict of a detector that still lacks ``missing`` points of history: never anomalous,
    ``warming_up=True``, the message says what it waits for (``doing`` comes first, ``note`` is
    appended as is).

    >>> warming_up(3).message
    'warming up: waiting for 3 more points'
    >>> warming_up(2, "points in bucket hour_of_day=4").anomalous
    False
    """
    task = f"{doing}, " if doing else ""
    message = f"warming up: {task}waiting for {missing} more {what}{note}"
    return Verdict(False, lower, upper, score, warming_up=True, message=message)


class DetectorTypeTaken(StreamdqError, ValueError):
    """``register_detector`` of a class under a type another class already holds."""


DETECTOR_CLASSES: ClassRegistry[Detector] = ClassRegistry(
    "detector type", lambda c: c.TYPE, DetectorTypeTaken
)


def register_detector(cls: type[Detector]) -> type[Detector]:
    """Make ``cls`` buildable by ``detector_from_spec`` under its ``TYPE`` (returns ``cls``).

    Idempotent and thread-safe: the same class again does nothing; another class under a type
    already taken raises ``DetectorTypeTaken``. Importing a detector module registers nothing:
    ``streamdq.detectors.register.register_builtins()`` registers the built-ins.
    """
    return DETECTOR_CLASSES.register(cls)


def unregister_detector(cls: type[Detector]) -> bool:
    """Forget ``cls`` under its ``TYPE``, the undo of ``register_detector`` for a class registered
    for a while (a test fixture); True when it was the registered class, else False and nothing
    changes (another class holding the type keeps it). Thread-safe. A built-in removed stays
    removed for the process (the built-ins are registered once) until registered again.
    """
    return DETECTOR_CLASSES.unregister(cls)


def detector_classes() -> dict[str, type[Detector]]:
    """The detector classes registered so far, by type (no built-ins unless registered:
    ``streamdq.detectors.register.registered_detectors()`` registers them first)."""
    return DETECTOR_CLASSES.snapshot()


def spec_error(kind: str, key: str, problem: str, fix: str | None = None) -> ConfigError:
    """The ``ConfigError`` of a detector spec: ``key`` is the spec key, the problem names the type.

    >>> str(spec_error("online_normal", "min_points", "must be >= 0, got -1", "give 0 or more"))
    'min_points: must be >= 0, got -1 (detector online_normal) (fix: give 0 or more)'
    """
    return ConfigError(key, f"{problem} (detector {kind})", fix)


def build_detector(spec: Mapping[str, Any], classes: Mapping[str, type[Detector]]) -> Detector:
    """Build a detector from its ``to_spec()`` dict, its class found by ``type`` in ``classes``
    (``streamdq.detectors.register.detector_from_spec`` passes the registry, built-ins included);
    a ``ConfigError`` names the bad key."""
    known = ", ".join(sorted(classes))
    if not isinstance(spec, Mapping):
        raise ConfigError(
            "type",
            f"a detector spec must be a mapping, got {type(spec).__name__}",
            f"write a mapping such as {{type: online_normal}} (types: {known})",
        )
    if "type" not in spec:
        raise ConfigError("type", "missing in the detector spec", f"add type: one of {known}")
    kind = spec["type"]
    cls = classes.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise ConfigError("type", f"unknown detector type {kind!r}", f"use one of {known}")
    return cls.from_spec(spec)


_EXPECTED = {
    "bool": ("must be true or false", "write true or false"),
    "int": ("must be an integer", "give a whole number such as 10"),
    "float": ("must be a number", "give a number such as 3.0"),
    "str": ("must be a string", "give a text value"),
}


def _coerce(kind: str, key: str, annotation: str, value: Any) -> Any:
    """Check and convert one spec value against its (string) field annotation."""
    options = [part.strip() for part in annotation.split("|")]
    if value is None:
        if "None" in options:
            return None
        raise spec_error(kind, key, "must not be null", "give a value or leave the key out for its default")
    base = next(opt for opt in options if opt != "None")
    if base not in _EXPECTED:
        raise TypeError(f"detector {kind!r}: unsupported field annotation {annotation!r} for {key!r}")
    if base == "bool" and isinstance(value, bool):
        return value
    if base == "int" and not isinstance(value, bool):
        if isinstance(value, int):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
    if base == "float" and isinstance(value, int | float) and not isinstance(value, bool):
        if math.isnan(value):
            raise spec_error(kind, key, "must be a number, got NaN", "give a number such as 3.0")
        return float(value)
    if base == "str" and isinstance(value, str):
        return value
    problem, fix = _EXPECTED[base]
    raise spec_error(kind, key, f"{problem}, got {value!r}", fix)


def _annotation(kind: Any) -> str:
    """A field annotation as text ("float | None"), whether or not the module postponed annotations."""
    return kind.__name__ if isinstance(kind, type) else str(kind)


def require(condition: bool, kind: str, key: str, message: str, fix: str | None = None) -> None:
    """Raise ``ConfigError`` (key = the spec key, the problem names the detector type) unless
    ``condition`` holds."""
    if not condition:
        raise spec_error(kind, key, message, fix)


def require_factors(detector: Any) -> None:
    """The ``lower_factor`` / ``upper_factor`` pair of the normal detectors: one at least, none negative."""
    require(
        detector.lower_factor is not None or detector.upper_factor is not None,
        detector.TYPE,
        "lower_factor",
        "at least one of lower_factor / upper_factor has to be set",
        "give lower_factor, upper_factor or both (3.0 is three standard deviations)",
    )
    for key in ("lower_factor", "upper_factor"):
        factor = getattr(detector, key)
        require(
            factor is None or factor >= 0,
            detector.TYPE,
            key,
            f"factor cannot be negative, got {factor}",
            "give a number >= 0, or null for no bound on that side",
        )


def require_relearn_after(detector: Any) -> None:
    """``relearn_after`` is null or a count >= 1."""
    require(
        detector.relearn_after is None or detector.relearn_after >= 1,
        detector.TYPE,
        "relearn_after",
        f"must be >= 1 or null, got {detector.relearn_after}",
        "give the number of consecutive anomalies after which they are learned, or null",
    )


INT_MAX = 2**31 - 1  # Deequ's "to the end" (Int.MaxValue)


def resolve_end(end: int | None) -> int:
    """``end=None`` means "to the end of the series", as Deequ's default ``Int.MaxValue``."""
    return INT_MAX if end is None else end


def check_interval(kind: str, start: int, end: int) -> None:
    if start > end:
        raise InvalidArgument(
            f"detector {kind!r}: the start of the interval ({start}) can't be larger than the end ({end})"
        )


def is_missing(value: float | None) -> bool:
    """None or NaN: a point without a value."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def is_infinite(value: float | None) -> bool:
    """+-inf: a value that is judged but never learned."""
    return isinstance(value, float) and math.isinf(value)


class Detector(ABC):
    """Base of every detector; subclasses are ``@dataclass(frozen=True)``, registered by
    ``register_detector(cls)`` (the built-ins by ``streamdq.detectors.register.register_builtins``).

    Subclasses implement ``_initial_core()`` and ``_step(core, point)``. ``_step`` gets a shallow copy
    of the core dict: it may assign its keys but must replace, never mutate in place, the lists and
    dicts inside (they are shared with the caller's state, which must stay unchanged).
    """

    TYPE: ClassVar[str]
    # True if ``_step`` wants missing values (e.g. to keep a seasonal phase); else the base skips them.
    HANDLES_MISSING: ClassVar[bool] = False

    # -- spec ---------------------------------------------------------------------------------
    def to_spec(self) -> dict[str, Any]:
        spec: dict[str, Any] = {"type": self.TYPE}
        for field in dataclasses.fields(self):  # type: ignore[arg-type]
            spec[field.name] = getattr(self, field.name)
        return spec

    @classmethod
    def from_spec(cls, spec: Mapping[str, Any]) -> Self:
        fields = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
        kwargs: dict[str, Any] = {}
        for key, value in spec.items():
            if key == "type":
                if value != cls.TYPE:
                    raise spec_error(
                        cls.TYPE, "type", f"expected {cls.TYPE!r}, got {value!r}", f"write {cls.TYPE}"
                    )
                continue
            if key not in fields:
                allowed = ", ".join(sorted(fields))
                close = difflib.get_close_matches(key, list(fields), n=1, cutoff=0.5)
                hint = f"did you mean {close[0]!r}? " if close else ""
                raise spec_error(cls.TYPE, key, "unknown key", f"{hint}allowed: {allowed}")
            kwargs[key] = _coerce(cls.TYPE, key, _annotation(fields[key].type), value)
        for name, field in fields.items():
            no_default = field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING
            if no_default and name not in kwargs:
                raise spec_error(cls.TYPE, name, "missing required key", f"add {name}")
        return cls(**kwargs)

    # -- online form ---------------------------------------------------------------------------
    def initial_state(self) -> DetectorState:
        return {
            "format": STATE_FORMAT,
            "type": self.TYPE,
            "last_seq": None,
            "points": 0,
            "streak": 0,
            "recent": [],
            "core": self._initial_core(),
        }

    def update(self, state: DetectorState, point: Point) -> tuple[DetectorState, Verdict]:
        """Judge ``point`` and learn from it; see the module docstring for the contract."""
        self._check_state(state)
        last_seq = state["last_seq"]
        if last_seq is not None and point.seq <= last_seq:
            for seq, verdict in state["recent"]:
                if seq == point.seq:
                    return state, Verdict.from_dict(verdict)
            return state, Verdict(
                False,
                message=f"replayed point seq={point.seq} (last seen {last_seq}); verdict no longer kept",
            )
        streak = state.get("streak", 0)
        if is_missing(point.value) and not self.HANDLES_MISSING:
            core, verdict = state["core"], Verdict(False, message="missing value: skipped")
        elif is_infinite(point.value):
            # judged against what was learned, never learned (a missing value's step for those
            # that keep a phase)
            _, verdict = self._step(dict(state["core"]), point)
            core = state["core"]
            if self.HANDLES_MISSING:
                core, _ = self._step(dict(core), dataclasses.replace(point, value=None))
            verdict = dataclasses.replace(
                verdict, message=f"{verdict.message}; non-finite value: not learned"
            )
            streak = streak + 1 if verdict.anomalous else 0
        else:
            core, verdict = self._step(dict(state["core"]), point)
            streak = streak + 1 if verdict.anomalous else 0
            relearn_after = getattr(self, "relearn_after", None)
            if relearn_after and streak >= relearn_after and not getattr(self, "learn_from_anomalies", True):
                # a run of anomalies is a new normal: learn this point after all (same verdict)
                learner = dataclasses.replace(self, learn_from_anomalies=True)  # type: ignore[type-var]
                core, _ = learner._step(dict(state["core"]), point)
                verdict = dataclasses.replace(
                    verdict, message=f"{verdict.message}; learned anyway after {streak} consecutive anomalies"
                )
        recent = [*state["recent"], [point.seq, verdict.to_dict()]][-REPLAY_MEMORY:]
        new_state = {
            "format": STATE_FORMAT,
            "type": self.TYPE,
            "last_seq": point.seq,
            "points": state["points"] + 1,
            "streak": streak,
            "recent": recent,
            "core": core,
        }
        return new_state, verdict

    def _check_state(self, state: DetectorState) -> None:
        if not isinstance(state, dict) or "core" not in state:
            raise InvalidArgument(f"detector {self.TYPE!r}: not a detector state (use initial_state())")
        if state.get("type") != self.TYPE:
            raise InvalidArgument(
                f"detector {self.TYPE!r}: state belongs to detector type {state.get('type')!r}"
            )
        if state.get("format", 0) > STATE_FORMAT:
            raise InvalidArgument(
                f"detector {self.TYPE!r}: state format {state.get('format')} is newer than {STATE_FORMAT}"
            )

    @abstractmethod
    def _initial_core(self) -> dict[str, Any]:
        """The detector-specific part of the state for an empty history."""

    @abstractmethod
    def _step(self, core: dict[str, Any], point: Point) -> tuple[dict[str, Any], Verdict]:
        """Judge a non-missing point and learn from it."""

    # -- batch form ----------------------------------------------------------------------------
    def _batch_time(self, index: int) -> float:
        """The time given to point ``index`` of a plain series in ``detect`` (epoch seconds)."""
        return float(index)

    def detect(self, series: Sequence[float], start: int = 0, end: int | None = None) -> list[int]:
        """Indices in ``[start, end)`` flagged when the series is replayed point by point."""
        stop = resolve_end(end)
        check_interval(self.TYPE, start, stop)
        state = self.initial_state()
        flagged = []
        for i, value in enumerate(series[: max(stop, 0)]):
            state, verdict = self.update(state, Point(time=self._batch_time(i), value=float(value), seq=i))
            if verdict.anomalous and i >= start:
                flagged.append(i)
        return flagged


# -- state serialization ------------------------------------------------------------------------
def _encode(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return {"__float__": repr(value)}
    if isinstance(value, dict):
        return {k: _encode(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_encode(v) for v in value]
    return value


def _decode(value: Any) -> Any:
    if isinstance(value, dict):
        if set(value) == {"__float__"}:
            return float(value["__float__"])
        return {k: _decode(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_decode(v) for v in value]
    return value


def dump_state(state: DetectorState) -> bytes:
    """Canonical JSON bytes of a detector state (sorted keys; inf/NaN tagged)."""
    return json.dumps(_encode(state), sort_keys=True, separators=(",", ":"), allow_nan=False).encode()


def load_state(data: bytes | str) -> DetectorState:
    """Inverse of ``dump_state``; ``ValueError`` if the bytes are not a detector state."""
    try:
        state = _decode(json.loads(data))
    except json.JSONDecodeError as exc:
        raise InvalidArgument(f"not a detector state: {exc}") from exc
    if not isinstance(state, dict) or "type" not in state or "core" not in state:
        raise InvalidArgument("not a detector state: missing 'type' or 'core'")
    if state.get("format", 0) > STATE_FORMAT:
        raise InvalidArgument(f"detector state format {state.get('format')} is newer than {STATE_FORMAT}")
    return state
