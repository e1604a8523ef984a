"""Persisting river objects inside a detector's JSON state.

river models and drift detectors have no serialization of their own other than pickle, so the river
adapters (and only they) keep ``base64(pickle(obj))`` in their state together with the river version
that wrote it. ``load_river`` returns None when the state was written by another river version (the
adapter then starts a fresh model and says so in its verdict) rather than unpickling across versions.
The state store is trusted storage written by streamdq itself: never load detector states from
untrusted sources (unpickling runs code).
"""

from __future__ import annotations

import base64
import pickle
from typing import Any

import river


def dump_river(obj: Any) -> dict[str, str]:
    return {"river": river.__version__, "pickle": base64.b64encode(pickle.dumps(obj)).decode("ascii")}


def load_river(blob: dict[str, str] | None) -> Any | None:
    if not blob or blob.get("river") != river.__version__:
        return None
    return pickle.loads(base64.b64decode(blob["pickle"]))  # noqa: S301 - trusted state store, see module doc
