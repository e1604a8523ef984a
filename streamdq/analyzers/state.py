"""Mergeable analyzer states and their versioned, tagged serialization.

Contract (DESIGN.md section 3):

* A ``State`` is immutable. ``merge(other)`` is associative and commutative and every
  state type has an empty identity (``empty()``) such that ``s.merge(empty) == s``.
* ``to_bytes()`` writes ``MAGIC | tag length | tag | format version | payload``; the
  payload is canonical JSON for numeric states and the sketch's own serialization for
  DataSketches states. ``decode_state()`` dispatches on the tag. Nothing is pickled.
* Exact states satisfy ``metric(merge(s(A), s(B))) == metric(s(A ++ B))``; sketch states
  stay inside the sketch's error bounds.

States run on the driver: the engine builds them from one aggregated row per grouping
set and merges them across microbatches, windows and stored history.

Registration is explicit: importing a state module registers nothing. ``register_state(cls)``
adds a class to the process-wide registry of tags; ``streamdq.analyzers.register`` registers the
built-ins (``register_builtins()``) and its ``state_from_bytes`` / ``registered_states`` call it
first, so readers of stored bytes use those. The registry here is the registry *as filled so
far* (``state_types()``).
"""

from __future__ import annotations

import dataclasses
import json
import struct
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, ClassVar, Self

from streamdq.class_registry import ClassRegistry
from streamdq.errors import StreamdqError

MAGIC = b"SDQS"
_HEADER = struct.Struct(">4sH")  # magic, tag length
_VERSION = struct.Struct(">H")


class StateFormatError(StreamdqError, ValueError):
    """Raised when bytes are not a streamdq state or carry an unknown tag or version."""


class StateTagTaken(StreamdqError, ValueError):
    """``register_state`` of a class under a tag another class already holds."""


STATE_CLASSES: ClassRegistry[State] = ClassRegistry("state tag", lambda c: c.TYPE_TAG, StateTagTaken)


def register_state(cls: type[State]) -> type[State]:
    """Make ``cls`` loadable from its bytes under its ``TYPE_TAG`` (returns ``cls``).

    Idempotent and thread-safe: registering the same class again does nothing; a different class
    under a tag already taken raises ``StateTagTaken`` (the registry is unchanged).
    """
    return STATE_CLASSES.register(cls)


def unregister_state(cls: type[State]) -> bool:
    """Forget ``cls`` under its ``TYPE_TAG``, the undo of ``register_state`` for a class registered
    for a while (a test fixture); True when it was the registered class, else False and nothing
    changes (another class holding the tag keeps it). Thread-safe. A built-in removed stays
    removed for the process (the built-ins are registered once) until registered again.
    """
    return STATE_CLASSES.unregister(cls)


def state_types() -> dict[str, type[State]]:
    """The state classes registered so far, by type tag (no built-ins unless registered:
    ``streamdq.analyzers.register.registered_states()`` registers them first)."""
    return STATE_CLASSES.snapshot()


def state_type(tag: str) -> type[State] | None:
    """The class registered so far under ``tag``, or None."""
    return STATE_CLASSES.get(tag)


class State(ABC):
    """An immutable, mergeable summary of the rows an analyzer has seen."""

    TYPE_TAG: ClassVar[str]
    FORMAT_VERSION: ClassVar[int] = 1

    @classmethod
    @abstractmethod
    def empty(cls) -> Self:
        """The identity of ``merge``: the state of zero rows."""

    @abstractmethod
    def merge(self, other: Self) -> Self:
        """Combine two states of the same type (associative, commutative)."""

    @abstractmethod
    def payload(self) -> bytes:
        """The body of ``to_bytes`` (without header)."""

    @classmethod
    @abstractmethod
    def from_payload(cls, payload: bytes, version: int) -> Self:
        """Inverse of ``payload`` for the given format version."""

    @property
    def is_empty(self) -> bool:
        return self == self.empty()

    def to_bytes(self) -> bytes:
        tag = self.TYPE_TAG.encode()
        return _HEADER.pack(MAGIC, len(tag)) + tag + _VERSION.pack(self.FORMAT_VERSION) + self.payload()


def split_header(data: bytes) -> tuple[str, int, bytes]:
    """``(type tag, format version, payload)`` of ``to_bytes`` output; ``StateFormatError`` if not one."""
    if len(data) < _HEADER.size or data[:4] != MAGIC:
        raise StateFormatError("not a streamdq state (bad magic)")
    _, tag_len = _HEADER.unpack_from(data)
    start = _HEADER.size
    if len(data) < start + tag_len + _VERSION.size:
        raise StateFormatError("not a streamdq state (truncated header)")
    tag = data[start : start + tag_len].decode()
    (version,) = _VERSION.unpack_from(data, start + tag_len)
    return tag, version, data[start + tag_len + _VERSION.size :]


def decode_state(data: bytes, classes: Callable[[str], type[State] | None] = state_type) -> State:
    """Load a state from ``to_bytes`` output, finding its class by tag with ``classes`` (by default
    the registry as filled so far); ``StateFormatError`` for an unknown tag or a newer version."""
    tag, version, payload = split_header(data)
    cls = classes(tag)
    if cls is None:
        raise StateFormatError(f"unknown state type tag {tag!r}")
    if version > cls.FORMAT_VERSION:
        raise StateFormatError(
            f"state {tag!r} has format version {version}, this streamdq reads up to {cls.FORMAT_VERSION}"
        )
    return cls.from_payload(payload, version)


def _encode_float(value: Any) -> Any:
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return {"__float__": repr(value)}
    return value


def _decode_float(value: Any) -> Any:
    if isinstance(value, dict) and "__float__" in value:
        return float(value["__float__"])
    return value


class JsonState(State):
    """Base for dataclass states whose fields are numbers, strings, None or lists thereof.

    The payload is canonical JSON (sorted keys, no whitespace) so equal states have
    equal bytes; non-finite floats are tagged explicitly.
    """

    def payload(self) -> bytes:
        fields = {f.name: _encode_float(getattr(self, f.name)) for f in dataclasses.fields(self)}  # type: ignore[arg-type]
        return json.dumps(fields, sort_keys=True, separators=(",", ":"), allow_nan=False).encode()

    @classmethod
    def from_payload(cls, payload: bytes, version: int) -> Self:
        raw = json.loads(payload)
        return cls(**{k: _decode_float(v) for k, v in raw.items()})
