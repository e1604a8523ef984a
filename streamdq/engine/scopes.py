"""Running states at the three scopes: batch, window (event-time tumbling) and total.

Runs on the driver inside ``foreachBatch``. States are keyed by ``Analyzer.state_key()``
(grouping analyzers on one ``FrequencySpec`` share one state). Merging is the states'
own associative merge, so the window and total states after N batches equal the states
of one pass over all N batches' rows (exact states exactly, sketches within bounds).

Windows: a window [start, start + length) stays open until the watermark passes its
end; then ``close_up_to`` removes it and returns its final states. Rows of a window that
is already closed are late: the caller counts them and leaves them out of the window
scope (they still count in batch and total).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from streamdq.analyzers.base import Analyzer
from streamdq.analyzers.state import State

StateMap = dict[str, State]


def merge_maps(left: Mapping[str, State], right: Mapping[str, State]) -> StateMap:
    """Key-wise merge of two state maps (a key missing on one side is taken as is)."""
    out = dict(left)
    for key, state in right.items():
        mine = out.get(key)
        out[key] = state if mine is None else mine.merge(state)
    return out


def states_by_key(states: Mapping[Analyzer, State]) -> StateMap:
    """Re-key per-analyzer states by state key (shared states collapse to one entry)."""
    out: StateMap = {}
    for analyzer, state in states.items():
        out.setdefault(analyzer.state_key(), state)
    return out


def states_for(analyzers: Iterable[Analyzer], by_key: Mapping[str, State]) -> dict[Analyzer, State]:
    """Per-analyzer view of a keyed map; an analyzer without a state gets its empty state."""
    return {a: by_key.get(a.state_key()) or a.empty_state() for a in analyzers}


@dataclass
class ScopeStates:
    """Open window states and the total state of one dataset."""

    window_length: timedelta
    total: StateMap = field(default_factory=dict)
    windows: dict[datetime, StateMap] = field(default_factory=dict)

    def window_end(self, start: datetime) -> datetime:
        return start + self.window_length

    def is_closed(self, start: datetime, watermark: datetime | None) -> bool:
        return watermark is not None and self.window_end(start) <= watermark

    def add_batch(self, batch: Mapping[str, State]) -> None:
        self.total = merge_maps(self.total, batch)

    def add_window(self, start: datetime, states: Mapping[str, State]) -> None:
        self.windows[start] = merge_maps(self.windows.get(start, {}), states)

    def close_up_to(self, watermark: datetime | None) -> list[tuple[datetime, StateMap]]:
        """Remove and return (start, states) of every open window whose end <= watermark, oldest first."""
        closed = sorted(s for s in self.windows if self.is_closed(s, watermark))
        return [(s, self.windows.pop(s)) for s in closed]
