"""Running states at the three scopes: batch, window (event-time tumbling) and total.

Runs on the driver inside ``foreachBatch``. States are keyed by ``Analyzer.state_key()``
(grouping analyzers on one ``FrequencySpec`` share one state). Merging is the states'
own associative merge, so the window and total states after N batches equal the states
of one pass over all N batches' rows (exact states exactly, sketches within bounds).

Window and watermark arithmetic saturates at datetime's range instead of raising (the
handler quarantines implausible event times before they get here: engine/event_time.py).

Windows: a window [start, start + length) stays open until the watermark passes its
end; then ``close_up_to`` removes it and returns its final states. Rows of a window that
is already closed are late: they are counted and left out of the window scope (they still
count in batch and total).

``advance(batch_states)`` is the handler's scope stage: it merges one microbatch's
``BatchStates`` (the batch into total, each window's states into its open window unless
the watermark had already closed it), moves the watermark (max event time seen minus the
delay; it never goes back) and closes the windows it passed, and returns the frozen
``ScopeUpdate``. The ScopeStates object is the running state; the update is what changed.

>>> from datetime import UTC, datetime, timedelta
>>> from streamdq.analyzers.basic_states import NumMatches
>>> from streamdq.engine.stages import BatchStates
>>> scopes = ScopeStates(timedelta(minutes=1), watermark_delay=timedelta(seconds=0))
>>> t0 = datetime(2026, 1, 1, tzinfo=UTC)
>>> one = {"size": NumMatches(3)}
>>> u = scopes.advance(BatchStates(batch=one, windows={t0: one}, event_time_max=t0 + timedelta(seconds=90)))
>>> [w.start.minute for w, _ in u.closed], u.watermark.minute, scopes.total["size"].matches
([0], 1, 3)
>>> scopes.advance(BatchStates(batch=one, windows={t0: one}, window_rows={t0: 3})).late_rows
3
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from streamdq.analyzers.base import Analyzer
from streamdq.analyzers.state import State
from streamdq.engine.stages import BatchStates, ScopeUpdate
from streamdq.report import Window

StateMap = dict[str, State]


def _add(moment: datetime, delta: timedelta) -> datetime:
    """``moment + delta`` saturated at datetime's range: the handler keeps implausible event
    times out (engine/event_time.py), this keeps a state restored from an older run from
    crashing the scope stage."""
    try:
        return moment + delta
    except OverflowError:
        edge = datetime.max if delta > timedelta(0) else datetime.min
        return edge.replace(tzinfo=moment.tzinfo)


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
    watermark_delay: timedelta = timedelta(0)
    watermark: datetime | None = None
    max_event_time: datetime | None = None

    def window_end(self, start: datetime) -> datetime:
        """``start + window_length``, saturated at ``datetime.max`` (never an OverflowError)."""
        return _add(start, self.window_length)

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

    def advance(self, states: BatchStates) -> ScopeUpdate:
        """Merge one microbatch, move the watermark, close windows; what changed (see module doc)."""
        before = self.watermark
        touched: list[datetime] = []
        late: list[datetime] = []
        late_rows = 0
        for start in sorted(states.windows):
            if self.is_closed(start, before):
                late.append(start)
                late_rows += int(states.window_rows.get(start, 0))
                continue
            self.add_window(start, states.windows[start])
            touched.append(start)
        self.add_batch(states.batch)
        seen = states.event_time_max
        if seen is not None and (self.max_event_time is None or seen > self.max_event_time):
            self.max_event_time = seen
        if self.max_event_time is not None:
            candidate = _add(self.max_event_time, -self.watermark_delay)
            if self.watermark is None or candidate > self.watermark:
                self.watermark = candidate
        closed = tuple((Window(s, self.window_end(s)), st) for s, st in self.close_up_to(self.watermark))
        return ScopeUpdate(
            touched=tuple(touched),
            closed=closed,
            late=tuple(late),
            late_rows=late_rows,
            watermark=self.watermark,
            event_time_max=self.max_event_time,
        )
