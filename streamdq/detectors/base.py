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
* Warm-up: until a detector has enough history it answers ``warming_up=True`` with a message saying
  how many more points it waits for, and never flags.
* ``learn_from_anomalies`` (per detector; the default follows Deequ) says whether a point flagged as
  anomalous is folded into the learned statistics. Detectors that do not learn flagged points also
  take ``relearn_after=N``: from the N-th consecutive anomaly on, flagged points are learned anyway
  (a lasting level shift becomes the new normal instead of alerting forever; online form only).
* ``detect(series, start=0, end=None) -> list[int]`` is Deequ's batch form: the indices inside the
  search interval ``[start, end)`` that are anomalous. For the Deequ strategies it reproduces Deequ's
  semantics exactly (SEMANTICS.md "Anomaly detection"); for the others it replays the series through
  ``update``.
"""

from __future__ import annotations

import dataclasses
import json
import math
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, ClassVar, Self

# Scala's Double.MinValue / Double.MaxValue: Deequ's "missing bound".
MIN_DOUBLE = -1.7976931348623157e308
MAX_DOUBLE = 1.7976931348623157e308

STATE_FORMAT = 1
REPLAY_MEMORY = 32

DetectorState = dict[str, Any]

_REGISTRY: dict[str, type[Detector]] = {}


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


def warming_up(missing: int, what: str = "points") -> Verdict:
    """The verdict of a detector that still lacks ``missing`` points of history."""
    return Verdict(False, warming_up=True, message=f"warming up: waiting for {missing} more {what}")


def register_detector(cls: type[Detector]) -> type[Detector]:
    """Class decorator: make ``cls`` buildable by ``detector_from_spec`` under its ``TYPE``."""
    if cls.TYPE in _REGISTRY and _REGISTRY[cls.TYPE] is not cls:
        raise ValueError(f"detector type {cls.TYPE!r} registered twice")
    _REGISTRY[cls.TYPE] = cls
    return cls


def detector_types() -> list[str]:
    """The registered detector type names."""
    return sorted(_REGISTRY)


def detector_from_spec(spec: Mapping[str, Any]) -> Detector:
    """Build a detector from its ``to_spec()`` dict; ``ValueError`` names the bad key."""
    if not isinstance(spec, Mapping):
        raise ValueError(f"detector spec must be a mapping, got {type(spec).__name__}")
    if "type" not in spec:
        raise ValueError(f"detector spec: missing key 'type' (one of {', '.join(detector_types())})")
    kind = spec["type"]
    cls = _REGISTRY.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise ValueError(
            f"detector spec key 'type': unknown detector type {kind!r} (known: {', '.join(detector_types())})"
        )
    return cls.from_spec(spec)


def _coerce(kind: str, key: str, annotation: str, value: Any) -> Any:
    """Check and convert one spec value against its (string) field annotation."""
    options = [part.strip() for part in annotation.split("|")]
    if value is None:
        if "None" in options:
            return None
        raise ValueError(f"detector {kind!r}: key {key!r} must not be null")
    base = next(opt for opt in options if opt != "None")
    if base == "bool":
        if isinstance(value, bool):
            return value
        raise ValueError(f"detector {kind!r}: key {key!r} must be true or false, got {value!r}")
    if base == "int":
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        raise ValueError(f"detector {kind!r}: key {key!r} must be an integer, got {value!r}")
    if base == "float":
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
        raise ValueError(f"detector {kind!r}: key {key!r} must be a number, got {value!r}")
    if base == "str":
        if isinstance(value, str):
            return value
        raise ValueError(f"detector {kind!r}: key {key!r} must be a string, got {value!r}")
    raise TypeError(f"detector {kind!r}: unsupported field annotation {annotation!r} for {key!r}")


def _annotation(kind: Any) -> str:
    """A field annotation as text ("float | None"), whether or not the module postponed annotations."""
    return kind.__name__ if isinstance(kind, type) else str(kind)


def require(condition: bool, kind: str, key: str, message: str) -> None:
    """Raise ``ValueError`` naming the detector type and spec key unless ``condition`` holds."""
    if not condition:
        raise ValueError(f"detector {kind!r}: key {key!r}: {message}")


INT_MAX = 2**31 - 1  # Deequ's "to the end" (Int.MaxValue)


def resolve_end(end: int | None) -> int:
    """``end=None`` means "to the end of the series", as Deequ's default ``Int.MaxValue``."""
    return INT_MAX if end is None else end


def check_interval(kind: str, start: int, end: int) -> None:
    if start > end:
        raise ValueError(
            f"detector {kind!r}: the start of the interval ({start}) can't be larger than the end ({end})"
        )


def is_missing(value: float | None) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


class Detector(ABC):
    """Base of every detector; subclasses are ``@dataclass(frozen=True)`` and ``@register_detector``.

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
                    raise ValueError(f"detector spec key 'type': expected {cls.TYPE!r}, got {value!r}")
                continue
            if key not in fields:
                raise ValueError(
                    f"detector {cls.TYPE!r}: unknown key {key!r} (allowed: {', '.join(sorted(fields))})"
                )
            kwargs[key] = _coerce(cls.TYPE, key, _annotation(fields[key].type), value)
        for name, field in fields.items():
            no_default = field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING
            if no_default and name not in kwargs:
                raise ValueError(f"detector {cls.TYPE!r}: missing required key {name!r}")
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
            raise ValueError(f"detector {self.TYPE!r}: not a detector state (use initial_state())")
        if state.get("type") != self.TYPE:
            raise ValueError(f"detector {self.TYPE!r}: state belongs to detector type {state.get('type')!r}")
        if state.get("format", 0) > STATE_FORMAT:
            raise ValueError(
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
        raise ValueError(f"not a detector state: {exc}") from exc
    if not isinstance(state, dict) or "type" not in state or "core" not in state:
        raise ValueError("not a detector state: missing 'type' or 'core'")
    if state.get("format", 0) > STATE_FORMAT:
        raise ValueError(f"detector state format {state.get('format')} is newer than {STATE_FORMAT}")
    return state
