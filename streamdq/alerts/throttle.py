"""Cool-down and rate limit: the one rule the alert policy and the per-sink valves share.

``Throttle(cooldown_seconds, rate_limit_per_minute)`` is a pure value: given when a key last
sent (``last_at``), how many alerts were sent in the sliding minute ending ``now`` and ``now``
(all in seconds), ``hold_back`` says ``"cooldown"``, ``"rate_limit"`` or None. It keeps no
memory; the caller does:

* ``streamdq.alerts.policy.AlertPolicy`` keeps the times in its persisted JSON state (so the
  hygiene survives restarts);
* ``AlertThrottle`` (used by the webhook and email sinks, importable from
  ``streamdq.connectors.sinks.base`` as before) keeps them in memory, per sink process.

Both record only the violation/anomaly alerts they let through: a ``resolved`` alert is never
held back and never uses up the rate limit. Runs on the driver, no I/O, no clock: time is the
alerts' ``processing_time``.
"""

from __future__ import annotations

import collections
from collections.abc import Iterable
from dataclasses import dataclass

from streamdq.alerts.alert import Alert

MINUTE_SECONDS = 60.0


@dataclass(frozen=True)
class Throttle:
    """Cool-down per key and a cap per sliding minute (None: no cap); 0 cool-down: none.

    >>> t = Throttle(cooldown_seconds=30, rate_limit_per_minute=2)
    >>> t.hold_back(last_at=100.0, sent_in_minute=0, now=110.0)
    'cooldown'
    >>> t.hold_back(last_at=None, sent_in_minute=2, now=110.0)
    'rate_limit'
    >>> t.hold_back(last_at=70.0, sent_in_minute=1, now=110.0) is None
    True
    >>> t.in_minute([40.0, 50.0, 50.5], now=110.0)
    [50.5]
    """

    cooldown_seconds: float = 0.0
    rate_limit_per_minute: int | None = None

    def in_minute(self, sent: Iterable[float], now: float) -> list[float]:
        """The sending times inside the sliding minute that ends at ``now`` (exclusive start)."""
        return [t for t in sent if t > now - MINUTE_SECONDS]

    def hold_back(self, last_at: float | None, sent_in_minute: int, now: float) -> str | None:
        """Why an alert of a key that last sent at ``last_at`` is held back at ``now``, or None."""
        if self.cooldown_seconds > 0 and last_at is not None and now - last_at < self.cooldown_seconds:
            return "cooldown"
        if self.rate_limit_per_minute is not None and sent_in_minute >= self.rate_limit_per_minute:
            return "rate_limit"
        return None


class AlertThrottle:
    """Per-sink cool-down and rate limit for human channels (email, webhook).

    The persisted, global hygiene is ``streamdq.alerts.AlertPolicy``; this is an extra,
    in-memory valve per sink (it restarts empty with the job), with the same ``Throttle`` rule.
    Time is the alerts' ``processing_time``. ``resolved`` alerts always pass. A
    violation/anomaly is held back (dropped for this sink, counted in ``held_back``) if the same
    ``dataset/constraint_id`` passed this sink less than ``cooldown_seconds`` ago, or if
    ``rate_limit_per_minute`` alerts passed in the last minute.
    """

    def __init__(self, cooldown_seconds: float = 0.0, rate_limit_per_minute: int | None = None) -> None:
        self.rule = Throttle(cooldown_seconds, rate_limit_per_minute)
        self._last: dict[str, float] = {}
        self._sent: collections.deque[float] = collections.deque()
        self.held_back = 0

    @property
    def cooldown_seconds(self) -> float:
        return self.rule.cooldown_seconds

    @property
    def rate_limit_per_minute(self) -> int | None:
        return self.rule.rate_limit_per_minute

    def admit(self, alerts: Iterable[Alert]) -> list[Alert]:
        """The alerts this sink may deliver now, in order (the rest counted in ``held_back``)."""
        out = []
        for alert in alerts:
            now = alert.processing_time.timestamp()
            if alert.kind == "resolved":
                out.append(alert)
                continue
            while self._sent and self._sent[0] <= now - MINUTE_SECONDS:
                self._sent.popleft()
            if self.rule.hold_back(self._last.get(alert.key), len(self._sent), now) is not None:
                self.held_back += 1
                continue
            self._last[alert.key] = now
            self._sent.append(now)
            out.append(alert)
        return out
