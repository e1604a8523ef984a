"""What ``streamdq run`` tells a person at the terminal: a start banner, an idle heartbeat and a
summary on stop (stderr, so stdout stays the console sink's).

* ``banner(config, sinks)``: the dataset, the source (type and path/topic), the state path,
  the checkpoint, the metrics URL of a Prometheus sink, and that windows are UTC.
* ``Progress`` is a sink (``emit(report, alerts)``) the run command adds to the runner's
  sinks: it counts batches, rows, bad rows, late rows and alerts. ``tick()`` (called from the
  supervisor's stop poll, about once a second) prints ``idle: no batch completed for 60 s (12 batches,
  5,400 rows so far)`` once every ``heartbeat_seconds`` while no batch arrived; a batch
  resets the clock. ``summary()`` is the stop line.

It never raises into the stream: a closed stream is ignored.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any, TextIO

from streamdq.alerts.alert import Alert
from streamdq.errors import InvalidArgument
from streamdq.report import BatchReport

DEFAULT_HEARTBEAT_SECONDS = 60.0


def _source_text(source: dict[str, Any]) -> str:
    kind = str(source.get("type", "?"))
    where = source.get("path") or source.get("topic") or source.get("topics") or source.get("subscribe")
    fmt = source.get("format")
    text = kind + (f" {fmt}" if fmt and kind == "files" else "")
    return f"{text} {where}" if where else text


def banner(config: Any, sinks: Sequence[Any] = ()) -> str:
    """The start banner of a run config (a ``RunConfig``) and its built sinks."""
    urls = []
    for sink in sinks:  # the Prometheus sink's ``url`` (a property; a method is taken too)
        url = getattr(sink, "url", None)
        url = url() if callable(url) else url
        if isinstance(url, str) and url.startswith("http"):
            urls.append(url)
    state = config.state.path or "(none: metrics are not stored)"
    lines = [
        f"streamdq: validating dataset {config.dataset!r}",
        f"  source      {_source_text(config.source)}",
        f"  state       {state}",
        f"  checkpoint  {config.checkpoint}",
        f"  metrics     {', '.join(urls) if urls else '(no prometheus sink)'}",
        (
            f"  windows     {_seconds_text(config.window_seconds)} event-time windows on "
            f"{config.event_time}, in UTC"
            if config.event_time
            else "  windows     none (no event_time: checks judge each batch and the total)"
        ),
    ]
    return "\n".join(lines)


def _seconds_text(seconds: float) -> str:
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size and seconds % size == 0:
            n = int(seconds // size)
            return f"{n} {unit}{'s' if n != 1 else ''}"
    return f"{seconds:g} s"


class Progress:
    """Counts what the stream did (a sink) and prints the heartbeat and the summary."""

    name = "progress"

    def __init__(
        self,
        *,
        heartbeat_seconds: float = DEFAULT_HEARTBEAT_SECONDS,
        stream: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if heartbeat_seconds <= 0:
            raise InvalidArgument(f"heartbeat_seconds must be > 0, got {heartbeat_seconds}")
        self.heartbeat_seconds = heartbeat_seconds
        self._stream = stream
        self._clock = clock
        self._seen: set[tuple[str, int]] = set()
        self.batches = self.rows = self.bad = self.late = self.alerts = 0
        self.started = self._last_activity = self._last_beat = clock()

    # -- sink -----------------------------------------------------------------------
    def emit(self, report: BatchReport, alerts: list[Alert]) -> None:
        key = (report.query_id, report.batch_id)
        self._last_activity = self._last_beat = self._clock()
        if key in self._seen:
            return
        self._seen.add(key)
        self.batches += 1
        self.rows += int(report.counters.get("input_rows", 0))
        self.bad += int(report.counters.get("bad_rows", 0))
        self.late += int(report.counters.get("late_rows", 0))
        self.alerts += len(alerts)

    def close(self) -> None:
        pass

    # -- terminal -------------------------------------------------------------------
    def _so_far(self) -> str:
        return f"{self.batches:,} batches, {self.rows:,} rows so far"

    def tick(self) -> bool:
        """Print the heartbeat when due; False (so it can sit in a stop predicate)."""
        now = self._clock()
        if now - self._last_beat >= self.heartbeat_seconds:
            idle = now - self._last_activity
            self._print(f"streamdq: idle: no batch completed for {idle:.0f} s ({self._so_far()})")
            self._last_beat = now
        return False

    def summary(self) -> str:
        took = self._clock() - self.started
        return (
            f"streamdq: stopped after {took:.0f} s: {self.batches:,} batches, {self.rows:,} rows, "
            f"{self.bad:,} bad, {self.late:,} late, {self.alerts:,} alerts"
        )

    def _print(self, text: str) -> None:
        with contextlib.suppress(OSError, ValueError):
            print(text, file=self._stream or sys.stderr, flush=True)

    def print_summary(self) -> None:
        self._print(self.summary())


def attach(runner: Any, *, heartbeat_seconds: float = DEFAULT_HEARTBEAT_SECONDS) -> Progress:
    """Print the banner of a (not yet started) ``StreamRunner`` and add a ``Progress`` to its
    sinks; the caller polls ``tick()`` and prints ``summary()`` on stop."""
    progress = Progress(heartbeat_seconds=heartbeat_seconds)
    progress._print(banner(runner.config, runner.sinks))
    runner.sinks.append(progress)
    return progress
