"""The supervisor: keeps one streaming query running, restarting it from its checkpoint.

``Supervisor(runner, config).run(stop_requested, deadline)`` starts the runner's query and
watches it. When the query fails, the failure is classified (``classify``; classes in
``streamdq.supervision``):

* transient (``worker``, ``worker_killed``, ``broker``, ``network``): restarted from the
  checkpoint after an exponential backoff with jitter (``backoff_initial`` doubling up to
  ``backoff_max``; the wait is drawn from ``[d/2, d]``), at most ``max_restarts`` restarts
  within any ``window`` seconds (the budget); the backoff starts again from
  ``backoff_initial`` once a batch has completed since the last failure;
* ``batch`` (any other failure inside a microbatch): restarted the same way, and counted per
  batch id. A batch id that failed ``poison_after`` times is a poison batch (Spark replays a
  batch id with the same offsets, recorded in ``<checkpoint>/offsets/<id>``). By policy
  (``poison``): ``quarantine`` tells the runner, whose handler then commits that batch with all
  its rows in quarantine (reason ``poison batch: <last error>``) and the stream moves on;
  ``stop`` stops with a message naming the batch and its offsets;
* ``config`` (a ConfigError, an AnalysisException) and ``interrupted`` (the user's Ctrl-C or
  SIGTERM, i.e. ``stop_requested()``): never retried.

Exactly-once holds across restarts: a restart is Spark's own restart from the checkpoint, and
the state store skips a batch id it already committed (DESIGN.md section 5).

Every state change is a console line on stderr (``streamdq: supervisor: ...``) and a
``SupervisorStatus`` published to the sinks that take it (the Prometheus sink's
``streamdq_supervisor_*`` series). ``run`` returns a frozen :class:`Outcome` with the exit
code; it never raises for a failed query.
"""

from __future__ import annotations

import contextlib
import json
import random
import sys
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from streamdq.engine.checkpoint_log import local_path
from streamdq.engine.config import SupervisionConfig
from streamdq.supervision import TRANSIENT_CLASSES, SupervisorStatus

if TYPE_CHECKING:
    from pyspark.sql.streaming import StreamingQuery

    from streamdq.engine.streaming import StreamRunner

# (class, substrings of the failure text); the first class with a match wins
_PATTERNS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "config",
        (
            "ConfigError",
            "AnalysisException",
            "[UNRESOLVED_COLUMN",
            "[PARSE_SYNTAX_ERROR",
            "[CANNOT_PARSE_DATATYPE",
            "[PATH_NOT_FOUND",
        ),
    ),
    (
        "worker",
        (
            "failed to connect back",
            "waiting for the Python worker to connect back",
        ),
    ),
    (
        "worker_killed",
        (
            "Python worker exited unexpectedly",
            "worker exited unexpectedly",
            "Python worker died",
            "ExecutorLostFailure",
            "killed by signal",
        ),
    ),
    (
        "broker",
        (
            "kafka source: cannot",
            "kafka source: no progress",
            "BrokerUnreachable",
            "NoBrokersAvailable",
            "KafkaTimeoutError",
            "KafkaConnectionError",
            "BrokerNotAvailable",
            "Broker transport failure",
            "_ALL_BROKERS_DOWN",
            "_TRANSPORT",
            "org.apache.kafka.common.errors.TimeoutException",
        ),
    ),
    (
        "network",
        (
            "Py4JNetworkError",
            "Answer from Java side is empty",
            "Error while sending or receiving",
            "Error while receiving",
            "Connection refused",
            "Connection reset",
            "Broken pipe",
            "java.net.SocketException",
            "java.net.ConnectException",
            "SocketTimeoutException",
        ),
    ),
)


@dataclass(frozen=True)
class Failure:
    """One classified failure of the query: its class, a one-line message, the failed batch."""

    kind: str
    message: str
    batch_id: int | None = None

    @property
    def transient(self) -> bool:
        return self.kind in TRANSIENT_CLASSES


def _one_line(text: str, limit: int = 300) -> str:
    """The most telling line of an error text: the last ``SomethingError: ...`` line, else the first."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if not lines:
        return ""
    named = [
        ln
        for ln in lines
        if ":" in ln
        and not ln.startswith(("at ", "File ", "Traceback", "JVM stacktrace"))
        and ln.split(":", 1)[0].replace(".", "").replace("_", "").isalnum()
        and ln.split(":", 1)[0].endswith(("Error", "Exception", "Failure"))
    ]
    line = named[-1] if named else lines[0]
    if named:  # a.b.SomeError: ... -> SomeError: ...
        name, rest = line.split(":", 1)
        line = f"{name.rsplit('.', 1)[-1]}:{rest}"
    return line if len(line) <= limit else line[: limit - 3] + "..."


def classify(
    error: BaseException | str | None,
    *,
    batch_id: int | None = None,
    cause: BaseException | None = None,
    stopping: bool = False,
) -> Failure:
    """The failure class of ``error`` (an exception or its text; ``stopping``: the user asked to stop).

    ``batch_id`` is the microbatch whose handler raised, if the failure happened inside one, and
    ``cause`` what the handler raised (its text is searched first and names the failure)."""
    if stopping or isinstance(error, KeyboardInterrupt):
        return Failure("interrupted", "stopped by the user", batch_id)
    text = error if isinstance(error, str) else _error_text(error)
    own = _error_text(cause) if cause is not None else ""
    message = _one_line(f"{type(cause).__name__}: {cause}" if cause is not None else text)
    for kind, needles in _PATTERNS:
        if any(n in own or n in text for n in needles):
            return Failure(kind, message, batch_id)
    if isinstance(error, ConnectionError | TimeoutError) or isinstance(cause, ConnectionError | TimeoutError):
        return Failure("network", message, batch_id)
    return Failure("batch", message, batch_id)


def _error_text(error: BaseException | None) -> str:
    if error is None:
        return ""
    parts = [f"{type(error).__module__}.{type(error).__name__}: {error}"]
    desc = getattr(error, "desc", None)  # pyspark's captured exceptions
    if desc:
        parts.append(str(desc))
    trace = getattr(error, "stackTrace", None)
    if isinstance(trace, str):
        parts.append(trace)
    cause = error.__cause__ or error.__context__
    if cause is not None and cause is not error:
        parts.append(_error_text(cause))
    return "\n".join(parts)


def backoff_delay(attempt: int, initial: float, most: float, rng: random.Random) -> float:
    """The wait before restart number ``attempt`` (1, 2, ...) of a run of failures:
    ``d = min(most, initial * 2**(attempt-1))``, drawn uniformly from ``[d/2, d]`` (jitter)."""
    d = min(most, initial * 2 ** max(attempt - 1, 0))
    return d / 2 + rng.uniform(0, d / 2)


class RestartBudget:
    """At most ``max_restarts`` restarts within any ``window`` seconds (a sliding window)."""

    def __init__(self, max_restarts: int, window: float) -> None:
        self.max_restarts = max_restarts
        self.window = window
        self._times: deque[float] = deque()

    def _trim(self, now: float) -> None:
        while self._times and now - self._times[0] >= self.window:
            self._times.popleft()

    def allows(self, now: float) -> bool:
        self._trim(now)
        return len(self._times) < self.max_restarts

    def spend(self, now: float) -> None:
        self._trim(now)
        self._times.append(now)

    def used(self, now: float) -> int:
        self._trim(now)
        return len(self._times)


@dataclass(frozen=True)
class Outcome:
    """How a supervised run ended: ``exit_code`` 0 for a requested or finished stop, 1 for a
    failure not retried (``message`` says why), ``restarts`` made on the way."""

    exit_code: int
    state: str
    message: str | None = None
    restarts: int = 0
    failure: Failure | None = None


def batch_offsets(checkpoint: str, batch_id: int) -> str | None:
    """The source offsets of ``batch_id``: ``from <start> to <end>``, read from Spark's offset log
    (``<checkpoint>/offsets/<id>`` holds a batch's end offsets, the previous batch's its start);
    just the end when the start is unknown (the first batch), None without a log entry."""
    end = _logged_offsets(checkpoint, batch_id)
    if end is None:
        return None
    start = _logged_offsets(checkpoint, batch_id - 1) if batch_id > 0 else None
    return f"from {start} to {end}" if start is not None else f"to {end}"


def _logged_offsets(checkpoint: str, batch_id: int) -> str | None:
    root = local_path(checkpoint)
    if root is None:
        return None
    path = root / "offsets" / str(batch_id)
    try:
        lines = [ln for ln in path.read_text().splitlines() if ln.strip()]
    except OSError:
        return None
    # line 0: the log version, line 1: the batch metadata, then one line per source
    sources = [ln for ln in lines[2:] if ln.strip() != "-"]
    if not sources:
        return None
    with contextlib.suppress(ValueError):
        return json.dumps([json.loads(s) for s in sources], sort_keys=True)
    return " ".join(sources)


class Supervisor:
    """Runs the runner's query until a requested stop, its end, or a failure not retried."""

    def __init__(
        self,
        runner: StreamRunner,
        config: SupervisionConfig | None = None,
        *,
        say: Callable[[str], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
    ) -> None:
        self.runner = runner
        self.config = config or runner.config.supervision
        self.say = say or _stderr
        self.clock = clock
        self.sleep = sleep
        self.rng = rng or random.Random()
        self.budget = RestartBudget(self.config.max_restarts, self.config.window)
        self.restarts: Counter[str] = Counter()
        self.poisoned: Counter[str] = Counter()
        self.batch_failures: Counter[int] = Counter()
        self.last_failure: Failure | None = None
        self._last_failure_time: float | None = None
        self.state = "starting"

    # -- status ------------------------------------------------------------------------
    def status(self) -> SupervisorStatus:
        return SupervisorStatus(
            dataset=self.runner.config.dataset,
            state=self.state,
            restarts=tuple(sorted(self.restarts.items())),
            last_failure=self.last_failure.kind if self.last_failure else None,
            last_failure_message=self.last_failure.message if self.last_failure else None,
            last_failure_time=self._last_failure_time,
            poison_batches=tuple(sorted(self.poisoned.items())),
            batch_id=self.last_failure.batch_id if self.last_failure else None,
        )

    def _set(self, state: str) -> None:
        self.state = state
        self.runner.publish_status(self.status())

    # -- the loop ----------------------------------------------------------------------
    def run(
        self,
        stop_requested: Callable[[], bool] = lambda: False,
        deadline: float | None = None,
        on_tick: Callable[[StreamingQuery], None] | None = None,
    ) -> Outcome:
        """Start the query and keep it running (see the module docstring).

        ``stop_requested`` is polled about once a second (a signal handler sets it);
        ``deadline`` is a ``clock()`` time after which the run stops cleanly; ``on_tick``
        is called with the live query about once a second."""

        def stopping() -> bool:
            return stop_requested() or (deadline is not None and self.clock() >= deadline)

        attempt = 0
        self._set("starting")
        try:
            while True:
                query, failure = self._start(stopping)
                if query is not None:
                    self._set("running")
                    failure = self._watch(query, stopping, on_tick)
                if failure is None:
                    self._set("stopped")
                    return Outcome(0, "stopped", restarts=self.restarts.total())
                if self.runner.batches_completed:
                    attempt = 0  # progress since the last failure: the backoff starts over
                outcome = self._decide(failure)
                if outcome is not None:
                    return outcome
                attempt += 1
                if not self._backoff(failure, attempt, stopping):
                    self._set("stopped")
                    return Outcome(0, "stopped", restarts=self.restarts.total())
        except KeyboardInterrupt:
            self.runner.stop_query()
            self._set("stopped")
            return Outcome(0, "stopped", "interrupted", restarts=self.restarts.total())

    def _start(self, stopping: Callable[[], bool]) -> tuple[StreamingQuery | None, Failure | None]:
        """Start the query: (query, None), or (None, the classified start failure)."""
        try:
            return self.runner.start(), None
        except KeyboardInterrupt:
            raise
        except Exception as exc:  # start-up can fail as a run can (worker, broker, py4j)
            return None, classify(exc, stopping=stopping())

    def _watch(
        self,
        query: StreamingQuery,
        stopping: Callable[[], bool],
        on_tick: Callable[[StreamingQuery], None] | None,
    ) -> Failure | None:
        """Wait while the query runs; None for a requested stop or a finished query."""
        while not stopping():
            try:
                if query.awaitTermination(1):
                    break
            except KeyboardInterrupt:
                raise
            except Exception:  # the query failed: its exception is read below
                break
            if on_tick is not None:
                on_tick(query)
        requested = stopping()
        self.runner.stop_query()
        if requested:
            return None
        error: Any = None
        try:
            error = query.exception()
        except Exception as exc:  # py4j gone: that is the failure
            error = exc
        if error is None:
            # a pipelined tail (judge, commit, emit) may have failed after the query's last
            # foreachBatch returned: then the query did not finish, its last batch failed
            error = self.runner.tail_failure
        if error is None:
            return None  # a trigger once / available_now query that finished
        failed = self.runner.failed_batch
        if failed is None:
            return classify(error)
        return classify(error, batch_id=failed[0], cause=failed[1])

    def _decide(self, failure: Failure) -> Outcome | None:
        """Record ``failure``; an Outcome if the run ends here, None to restart."""
        now = self.clock()
        self.last_failure = failure
        self._last_failure_time = time.time()
        where = f" in batch {failure.batch_id}" if failure.batch_id is not None else ""
        self.say(f"streamdq: supervisor: the query failed{where} ({failure.kind}): {failure.message}")
        if failure.kind in ("config", "interrupted"):
            return self._fail(failure, f"{failure.message} (not retried: a {failure.kind} failure)")
        if not self.config.enabled:
            return self._fail(failure, f"{failure.message} (supervision is off)")
        if failure.kind == "batch" and failure.batch_id is not None:
            self.batch_failures[failure.batch_id] += 1
            if self.batch_failures[failure.batch_id] >= self.config.poison_after:
                poisoned = self._poison(failure)
                if poisoned is not None:
                    return poisoned
        if not self.budget.allows(now):
            return self._fail(
                failure,
                f"{failure.message} (gave up after {self.budget.used(now)} restarts within "
                f"{self.config.window:g} s: supervision.max_restarts)",
            )
        return None

    def _poison(self, failure: Failure) -> Outcome | None:
        assert failure.batch_id is not None
        batch = failure.batch_id
        offsets = batch_offsets(self.runner.config.checkpoint, batch) or "unknown"
        times = self.batch_failures[batch]
        if self.config.poison == "stop":
            self.poisoned["stop"] += 1
            return self._fail(
                failure,
                f"poison batch {batch} (offsets {offsets}) failed {times} times: {failure.message} "
                "(supervision.poison: stop)",
            )
        self.poisoned["quarantine"] += 1
        self.say(
            f"streamdq: supervisor: batch {batch} (offsets {offsets}) failed {times} times: "
            "a poison batch; its rows go to quarantine and the stream moves on"
        )
        self.runner.mark_poison(batch, failure.message)
        return None

    def _fail(self, failure: Failure, message: str) -> Outcome:
        self._set("failed")
        return Outcome(1, "failed", message, restarts=self.restarts.total(), failure=failure)

    def _backoff(self, failure: Failure, attempt: int, stopping: Callable[[], bool]) -> bool:
        """Wait before the restart (False if a stop was requested meanwhile) and spend budget."""
        poison_next = failure.batch_id is not None and failure.batch_id in self.runner.poison
        delay = (
            0.0
            if poison_next
            else backoff_delay(attempt, self.config.backoff_initial, self.config.backoff_max, self.rng)
        )
        self.budget.spend(self.clock())
        self.restarts[failure.kind] += 1
        self._set("backoff")
        self.say(
            f"streamdq: supervisor: restart {self.budget.used(self.clock())}/{self.config.max_restarts} "
            f"(within {self.config.window:g} s) from the checkpoint in {delay:.1f} s"
        )
        end = self.clock() + delay
        while self.clock() < end:
            if stopping():
                return False
            self.sleep(min(0.5, max(end - self.clock(), 0.0)))
        return not stopping()


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
