"""Alert hygiene as a pure function: ``AlertPolicy.evaluate(report, state) -> (alerts, new_state)``.

Runs on the driver after a batch has been judged. It never does I/O and never reads the
clock: time is the report's ``processing_time``. Its whole memory is ``state``, a plain
JSON-serializable dict (``{}`` to start) that the streaming runner persists with the
batch commit, so hygiene survives restarts.

Rules, per key ``dataset/constraint_id``:

- **De-duplication**: a failing constraint alerts once (kind ``violation``, or
  ``anomaly`` when a detector's anomaly carries the same constraint id) and stays *open*
  while it keeps failing; no further alert until it passes again, then one ``resolved``
  alert (only if the violation was actually sent). ``renotify_seconds`` optionally
  repeats the alert for a constraint that has been failing that long.
- **Absolute floors**: a violation of a constraint whose scope holds fewer than
  ``min_rows_floor`` rows is not alerted (a completeness of 0.5 over 2 rows is noise);
  for volume metrics (``Size``) the distance between the value and the expected bound
  must be at least ``min_abs_change`` rows (default ``min_rows_floor``): no alert on a
  50% drop of 2 rows, but an alert on a drop from 1000 rows to 1.
- **Cool-down**: after a violation/anomaly alert for a key, no new one for the same key
  for ``cooldown_seconds`` (flapping constraints). A still-failing constraint whose
  alert was held back is alerted once the cool-down is over.
- **Rate limit**: at most ``rate_limit_per_minute`` violation/anomaly alerts per
  sliding minute; held-back open violations are sent in a later batch if still failing.
  ``resolved`` alerts are never held back (a recipient must not keep a stale incident).
- **Replay safety**: evaluating the report of the batch evaluated last (same query id and
  batch id) returns the same alerts again and leaves the state unchanged; an older batch
  of the same query returns no alerts. Alert ids are deterministic, so sinks de-duplicate.

The dataset's pass verdict (``BatchReport.measure_check_pass``, per scope and closed window)
is judged like a constraint ``pass:<scope>`` of a check ``pass`` at level Error
(``pass_results``): one alert when the pass turns false, one ``resolved`` when it is true again.

Anomalies that carry no constraint id of this report are one-shot events: floors,
cool-down and rate limit apply, but they are not kept open and have no ``resolved``.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from streamdq.alerts.alert import Alert
from streamdq.alerts.candidate import Candidate, anomaly_key, pass_results, step_key
from streamdq.alerts.messages import build_alert
from streamdq.alerts.throttle import MINUTE_SECONDS, Throttle
from streamdq.config_schema import Key, Table, boolean, number, optional
from streamdq.errors import ConfigError, InvalidArgument
from streamdq.report import Anomaly, BatchReport, CheckResult, ConstraintResult, Window

STATE_VERSION = 1
# a sensible value of each numeric key, for the fix of a config mistake
_EXAMPLES = {
    "cooldown_seconds": 300,
    "rate_limit_per_minute": 30,
    "min_rows_floor": 100,
    "min_abs_change": 100,
    "renotify_seconds": 3600,
}


def _number(key: str, doc: str, *, whole: bool = False, default: Any = 0.0, none: bool = False) -> Key:
    check = number(0, whole=whole)
    return Key(
        key,
        optional(check) if none else check,
        default=default,
        fix=f"e.g. {key}: {_EXAMPLES[key]}",
        doc=doc,
    )


ALERTS_TABLE = Table(
    "alerts",
    (
        _number("cooldown_seconds", "seconds between two alerts of one key"),
        _number(
            "rate_limit_per_minute", "alerts per sliding minute at most", whole=True, default=None, none=True
        ),
        _number("min_rows_floor", "no alert for a scope of fewer rows", whole=True, default=0),
        _number(
            "min_abs_change",
            "Size: rows outside the bound at least (default min_rows_floor)",
            default=None,
            none=True,
        ),
        _number(
            "renotify_seconds", "repeat the alert of a constraint failing this long", default=None, none=True
        ),
        Key(
            "alert_on_anomalies",
            boolean(),
            default=True,
            fix="set alerts.alert_on_anomalies: true or false",
            doc="also alert on anomalies that belong to no constraint",
        ),
    ),
    known_label="use one of",
)
"""The keys of ``alerts:`` (streamdq.config_schema; docs/configuration.md)."""


def _iso(value: datetime) -> str:
    return value.astimezone(UTC).isoformat()


def _seconds(value: str) -> float:
    return datetime.fromisoformat(value).timestamp()


def rows_in_scope(report: BatchReport, scope: str, window: Window | None) -> int | None:
    """Rows behind a scope: the ``Size`` metric of that scope/window, else (batch scope)
    the ``input_rows`` counter; None when the report does not say."""
    for scoped in report.metrics:
        m = scoped.metric
        same_scope = scoped.scope == scope and scoped.window == window
        if m.name == "Size" and m.instance == "*" and same_scope and m.scalar is not None:
            return int(m.scalar)
    if scope == "batch" and "input_rows" in report.counters:
        return int(report.counters["input_rows"])
    return None


@dataclass(frozen=True)
class AlertPolicy:
    """Alert hygiene settings (see the module docstring for the rules).

    ``cooldown_seconds``: minimum seconds between two violation/anomaly alerts of one key.
    ``rate_limit_per_minute``: cap on violation/anomaly alerts per sliding minute (None: no cap).
    ``min_rows_floor``: no alert for a scope holding fewer rows than this.
    ``min_abs_change``: for ``Size`` metrics, minimum distance (rows) outside the bound;
    None means ``min_rows_floor``.
    ``renotify_seconds``: repeat the alert of a constraint failing this long (None: never).
    ``alert_on_anomalies``: also alert on anomalies that belong to no constraint.

    >>> policy = AlertPolicy.from_spec({"cooldown_seconds": 300, "rate_limit_per_minute": 30})
    >>> policy.throttle
    Throttle(cooldown_seconds=300.0, rate_limit_per_minute=30)
    >>> try:
    ...     AlertPolicy.from_spec({"cooldown": 300})
    ... except ConfigError as e:
    ...     print(e.key, "|", e.problem)
    alerts.cooldown | unknown key
    """

    cooldown_seconds: float = 0.0
    rate_limit_per_minute: int | None = None
    min_rows_floor: int = 0
    min_abs_change: float | None = None
    renotify_seconds: float | None = None
    alert_on_anomalies: bool = True

    @classmethod
    def from_spec(cls, spec: dict[str, Any] | None, where: str = "alerts") -> AlertPolicy:
        """Build from the run config's ``alerts:`` mapping by ``ALERTS_TABLE``; a ConfigError
        names the bad key (every mistake at once)."""
        if spec is None:
            return cls()
        if not isinstance(spec, dict):
            raise ConfigError(
                where,
                f"expected a mapping, got {type(spec).__name__}",
                "e.g. alerts: {cooldown_seconds: 300}",
            )
        return cls(**ALERTS_TABLE.parse(spec, where))

    @property
    def throttle(self) -> Throttle:
        """The cool-down and rate limit rule, shared with the per-sink ``AlertThrottle``."""
        return Throttle(self.cooldown_seconds, self.rate_limit_per_minute)

    # -- the pure function -------------------------------------------------------------

    def evaluate(
        self, report: BatchReport, state: dict[str, Any] | None
    ) -> tuple[list[Alert], dict[str, Any]]:
        """Alerts for this report and the new state; ``state`` is not modified."""
        old = state or {}
        if old and old.get("version", STATE_VERSION) != STATE_VERSION:
            raise InvalidArgument(f"alert policy state: unsupported version {old.get('version')!r}")
        last = old.get("last") or {}
        if last.get("query_id") == report.query_id:
            if int(last.get("batch_id", -1)) == report.batch_id:
                return [Alert.from_dict(a) for a in last.get("alerts", [])], copy.deepcopy(dict(old))
            if int(last.get("batch_id", -1)) > report.batch_id:
                return [], copy.deepcopy(dict(old))

        new: dict[str, Any] = {
            "version": STATE_VERSION,
            "open": copy.deepcopy(old.get("open", {})),
            "last_alert_at": dict(old.get("last_alert_at", {})),
            "sent": list(old.get("sent", [])),
            "suppressed": dict(old.get("suppressed", {})),
        }
        now = report.processing_time
        new["sent"] = [t for t in new["sent"] if _seconds(t) > now.timestamp() - MINUTE_SECONDS]
        alerts: list[Alert] = []

        for failing, passing in self._steps(report):
            self._step(report, failing, passing, new, now, alerts)

        if self.cooldown_seconds > 0 or self.renotify_seconds is not None:
            horizon = max(self.cooldown_seconds, self.renotify_seconds or 0.0)
            new["last_alert_at"] = {
                k: t
                for k, t in new["last_alert_at"].items()
                if k in new["open"] or now.timestamp() - _seconds(t) < horizon
            }
        else:
            new["last_alert_at"] = {k: t for k, t in new["last_alert_at"].items() if k in new["open"]}
        new["last"] = {
            "query_id": report.query_id,
            "batch_id": report.batch_id,
            "alerts": [a.to_dict() for a in alerts],
        }
        return alerts, new

    # -- helpers ----------------------------------------------------------------------

    def _step(
        self,
        report: BatchReport,
        failing: dict[str, Candidate],
        passing: dict[str, tuple[Candidate, int | None]],
        new: dict[str, Any],
        now: datetime,
        alerts: list[Alert],
    ) -> None:
        """Apply one observation of each key (resolve, open, de-duplicate, hold back, alert)."""
        for key, (cand, since) in list(passing.items()):
            entry = new["open"].pop(key, None)
            if entry is not None and entry.get("notified"):
                alert = build_alert(report, cand, "resolved", since_batch=entry.get("since_batch", since))
                alerts.append(alert)  # never held back, and never counted by the rate limit

        for key, cand in failing.items():
            entry = new["open"].get(key)
            free = cand.result is None
            if entry is None and not free:
                entry = {
                    "since_batch": report.batch_id,
                    "since": _iso(now),
                    "notified": False,
                    "check": cand.check,
                    "constraint": cand.constraint,
                }
                new["open"][key] = entry
            if entry is not None and entry.get("notified"):
                renotify = self.renotify_seconds
                last_at = new["last_alert_at"].get(key)
                if renotify is None or last_at is None or now.timestamp() - _seconds(last_at) < renotify:
                    continue  # de-duplicated: still failing, already alerted
            reason = self._hold_back(report, cand, key, new, now)
            if reason is not None:
                new["suppressed"][reason] = int(new["suppressed"].get(reason, 0)) + 1
                continue
            alerts.append(build_alert(report, cand, cand.kind))
            new["sent"].append(_iso(now))
            new["last_alert_at"][key] = _iso(now)
            if entry is not None:
                entry["notified"] = True

    def _steps(
        self, report: BatchReport
    ) -> list[tuple[dict[str, Candidate], dict[str, tuple[Candidate, int | None]]]]:
        """The report's observations in order, as (failing, passing) keys per step.

        Each window this batch closed is its own step, in event-time order, before the step
        of the batch and total scopes: a batch that closes several windows (a backlog after
        a restart, slow batches) judges a window-scope constraint once per window, so two
        failing windows with a passing one between them are two incidents (violation,
        resolved, violation), as they would have been had each window closed in its own
        batch.
        """
        results: dict[datetime | None, list[tuple[CheckResult, ConstraintResult]]] = {}
        for check in report.check_results:
            for result in check.constraint_results:
                results.setdefault(step_key(result.scope, result.window), []).append((check, result))
        for check, result in pass_results(report):  # the dataset-level pass verdicts
            results.setdefault(step_key(result.scope, result.window), []).append((check, result))
        anomalies: dict[datetime | None, list[Anomaly]] = {}
        for anomaly in report.anomalies:
            anomalies.setdefault(step_key(anomaly.scope, anomaly.window), []).append(anomaly)
        # an anomaly whose scope/window matches no step with results still belongs to its constraint
        by_cid: dict[str, Anomaly] = {}
        for step, found in anomalies.items():
            for anomaly in found:
                if anomaly.constraint_id and step not in results:
                    by_cid.setdefault(anomaly.constraint_id, anomaly)
        seen_cids = {r.constraint_id for step in results.values() for _, r in step}
        windows = sorted(k for k in {*results, *anomalies} if k is not None)
        order: list[datetime | None] = [*windows, None]
        return [
            self._classify(report, results.get(k, []), anomalies.get(k, []), by_cid, seen_cids) for k in order
        ]

    def _classify(
        self,
        report: BatchReport,
        results: list[tuple[CheckResult, ConstraintResult]],
        anomalies: list[Anomaly],
        all_by_cid: dict[str, Anomaly],
        seen_cids: set[str],
    ) -> tuple[dict[str, Candidate], dict[str, tuple[Candidate, int | None]]]:
        """Failing and passing keys of one step (a key fails if any of its results fails)."""
        anomalies_by_cid: dict[str, Anomaly] = {}
        for anomaly in anomalies:
            if anomaly.constraint_id:
                anomalies_by_cid.setdefault(anomaly.constraint_id, anomaly)
        failing: dict[str, Candidate] = {}
        passing: dict[str, tuple[Candidate, int | None]] = {}
        for check, result in results:
            key = f"{report.dataset}/{result.constraint_id}"
            own = anomalies_by_cid.get(result.constraint_id) or all_by_cid.get(result.constraint_id)
            cand = Candidate(
                constraint_id=result.constraint_id,
                check=result.check or check.check,
                severity=result.level or check.level,
                constraint=result.constraint,
                result=result,
                anomaly=own if result.failed else None,
            )
            if result.failed:
                failing.setdefault(key, cand)
                passing.pop(key, None)
            elif key not in failing:
                passing.setdefault(key, (cand, None))
        if self.alert_on_anomalies:
            for anomaly in anomalies:
                if anomaly.constraint_id and anomaly.constraint_id in seen_cids:
                    continue
                cid = anomaly.constraint_id or anomaly_key(anomaly)
                key = f"{report.dataset}/{cid}"
                failing.setdefault(
                    key,
                    Candidate(
                        constraint_id=cid,
                        check="anomalies",
                        severity="Warning",
                        constraint=f"no anomaly in {anomaly.metric.name}({anomaly.metric.instance}) by {anomaly.detector}",
                        result=None,
                        anomaly=anomaly,
                    ),
                )
        return failing, passing

    def _hold_back(
        self, report: BatchReport, cand: Candidate, key: str, state: dict[str, Any], now: datetime
    ) -> str | None:
        """Why an alert is held back (``floor``, ``cooldown``, ``rate_limit``), or None."""
        metric = cand.metric
        if metric is not None and metric.name == "Size":
            floor = self.min_abs_change if self.min_abs_change is not None else float(self.min_rows_floor)
            dist = cand.distance_outside()  # from the structured bounds, never from the bound's text
            if floor > 0 and dist is not None and dist < floor:
                return "floor"
        elif self.min_rows_floor > 0:
            rows = rows_in_scope(report, cand.scope, cand.window)
            if rows is not None and rows < self.min_rows_floor:
                return "floor"
        last_at = state["last_alert_at"].get(key)
        return self.throttle.hold_back(
            _seconds(last_at) if last_at is not None else None, len(state["sent"]), now.timestamp()
        )
