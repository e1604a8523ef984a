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
import hashlib
import json
import math
import re
from dataclasses import dataclass, fields
from datetime import UTC, datetime, timedelta
from typing import Any

from streamdq.alerts.alert import Alert, alert_id_for
from streamdq.display import bound_text, interval_text, window_text
from streamdq.errors import ConfigError
from streamdq.report import FAILURE, SUCCESS, Anomaly, BatchReport, CheckResult, ConstraintResult, Window

STATE_VERSION = 1
_BOUND_RE = re.compile(r"^\s*(>=|<=|==|=|>|<)\s*([-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*$")


def _iso(value: datetime) -> str:
    return value.astimezone(UTC).isoformat()


def _parse(value: str) -> datetime:
    return datetime.fromisoformat(value)


def _window_dict(window: Window | None) -> dict[str, str | None] | None:
    return window.to_dict() if window is not None else None


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        if not math.isfinite(value):
            return repr(value)
        return f"{value:.6g}"
    return str(value)


def expected_interval(expected: Any) -> tuple[float | None, float | None] | None:
    """``(lower, upper)`` for a bound given as ``{"lower", "upper"}``, ``[lo, hi]``, a number
    or a simple comparison string (``">= 0.95"``); None when it cannot be read as numbers."""
    if isinstance(expected, dict) and ("lower" in expected or "upper" in expected):
        lo, hi = expected.get("lower"), expected.get("upper")
        return (float(lo) if lo is not None else None, float(hi) if hi is not None else None)
    if isinstance(expected, list | tuple) and len(expected) == 2:
        try:
            lo = float(expected[0]) if expected[0] is not None else None
            hi = float(expected[1]) if expected[1] is not None else None
        except (TypeError, ValueError):
            return None
        return (lo, hi)
    if isinstance(expected, int | float) and not isinstance(expected, bool):
        return (float(expected), float(expected))
    if isinstance(expected, str):
        match = _BOUND_RE.match(expected)
        if match:
            op, num = match.group(1), float(match.group(2))
            if op in (">=", ">"):
                return (num, None)
            if op in ("<=", "<"):
                return (None, num)
            return (num, num)
    return None


def distance_outside(value: Any, expected: Any) -> float | None:
    """How far a numeric value lies outside the expected interval (0 inside); None if unknown."""
    if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
        return None
    interval = expected_interval(expected)
    if interval is None:
        return None
    lo, hi = interval
    below = (lo - value) if lo is not None else 0.0
    above = (value - hi) if hi is not None else 0.0
    return max(below, above, 0.0)


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


def _step_key(scope: str, window: Window | None) -> datetime | None:
    """The step an observation belongs to: its window's start at window scope, else None."""
    return window.start if scope == "window" and window is not None else None


PASS_CHECK = "pass"
PASS_ID_PREFIX = "pass:"


def pass_results(report: BatchReport) -> list[tuple[CheckResult, ConstraintResult]]:
    """The dataset-level pass verdicts of ``report`` (its measure/check/pass documents) as
    results of a check ``pass``, constraint id ``pass:<scope>``: a dataset whose pass turns
    false alerts once (a ``violation`` at level Error) and once more (``resolved``) when it
    is true again, with the hygiene of any constraint; its alert ids are as deterministic."""
    out = []
    for doc in report.measure_check_pass:
        scope = doc.scope or "batch"
        window = (
            Window(datetime.fromisoformat(doc.window[0]), datetime.fromisoformat(doc.window[1]))
            if doc.window
            else None
        )
        failed = [name for name, ok in doc.check.items() if not ok]
        result = ConstraintResult(
            check=PASS_CHECK,
            level="Error",
            constraint="the dataset's pass policy",
            constraint_id=f"{PASS_ID_PREFIX}{scope}",
            status=SUCCESS if doc.passed else FAILURE,
            message=None if doc.passed else f"failed checks: {', '.join(failed) or 'none'}",
            scope=scope,
            window=window,
        )
        out.append((CheckResult(PASS_CHECK, "Error", result.status, (result,)), result))
    return out


def _anomaly_key(anomaly: Anomaly) -> str:
    raw = json.dumps([anomaly.detector, anomaly.metric.name, anomaly.metric.instance, anomaly.scope])
    return "anomaly-" + hashlib.sha256(raw.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class _Candidate:
    """A failing constraint (possibly with its anomaly), or a free-standing anomaly."""

    constraint_id: str
    check: str
    severity: str
    constraint: str
    result: ConstraintResult | None
    anomaly: Anomaly | None

    @property
    def scope(self) -> str:
        if self.result is not None:
            return self.result.scope
        assert self.anomaly is not None
        return self.anomaly.scope

    @property
    def window(self) -> Window | None:
        if self.result is not None and self.result.window is not None:
            return self.result.window
        return self.anomaly.window if self.anomaly is not None else None

    @property
    def metric(self) -> Any:
        if self.result is not None and self.result.metric is not None:
            return self.result.metric
        return self.anomaly.metric if self.anomaly is not None else None

    @property
    def value(self) -> Any:
        if self.anomaly is not None:
            return self.anomaly.value
        metric = self.metric
        return metric.value if metric is not None else None

    @property
    def expected(self) -> Any:
        if self.anomaly is not None and (self.anomaly.lower is not None or self.anomaly.upper is not None):
            return {"lower": self.anomaly.lower, "upper": self.anomaly.upper}
        return self.result.bound if self.result is not None else None

    @property
    def kind(self) -> str:
        return "anomaly" if self.anomaly is not None else "violation"


def _event_time(report: BatchReport, window: Window | None) -> datetime | None:
    return window.end if window is not None else report.event_time_max


def _metric_text(metric: Any, value: Any) -> str:
    if metric is None:
        return _fmt(value)
    return f"{metric.name}({metric.instance}) = {_fmt(value) if metric.failure is None else 'failed: ' + metric.failure}"


def _where(scope: str, window: Window | None) -> str:
    if window is not None:
        return f"{scope} scope, window {window_text(window.start, window.end)}"
    return f"{scope} scope"


def _build(report: BatchReport, cand: _Candidate, kind: str, since_batch: int | None = None) -> Alert:
    metric = cand.metric
    value = cand.value
    expected = cand.expected
    where = _where(cand.scope, cand.window)
    if kind == "resolved" and cand.constraint_id.startswith(PASS_ID_PREFIX):
        message = f"{report.dataset}: the dataset passes its pass policy again ({where})" + (
            f"; failing since batch {since_batch}" if since_batch is not None else ""
        )
    elif kind == "resolved":
        message = (
            f"{cand.check}: '{cand.constraint}' passes again ({where}): {_metric_text(metric, value)}"
            + (f", expected {bound_text(expected)}" if expected is not None else "")
            + (f"; failing since batch {since_batch}" if since_batch is not None else "")
        )
    elif kind == "anomaly":
        assert cand.anomaly is not None
        lo, hi = cand.anomaly.lower, cand.anomaly.upper
        interval = f", expected {interval_text(lo, hi)}" if lo is not None or hi is not None else ""
        message = f"{cand.anomaly.detector} flagged {_metric_text(metric, value)}{interval} ({where})"
        if cand.anomaly.message:
            message += f": {cand.anomaly.message}"
    elif cand.constraint_id.startswith(PASS_ID_PREFIX):
        message = f"{report.dataset}: the dataset does not pass its pass policy ({where})"
        if cand.result is not None and cand.result.message:
            message += f"; {cand.result.message}"
    else:
        message = f"{cand.check}: '{cand.constraint}' failed ({where}): {_metric_text(metric, value)}"
        if expected is not None:
            message += f", expected {bound_text(expected)}"
        if cand.result is not None and cand.result.message:
            message += f"; {cand.result.message}"
    return Alert(
        alert_id=alert_id_for(
            report.query_id,
            report.batch_id,
            cand.check,
            cand.constraint_id,
            kind,
            _step_key(cand.scope, cand.window),
        ),
        kind=kind,
        dataset=report.dataset,
        severity=cand.severity,
        check=cand.check,
        constraint=cand.constraint,
        constraint_id=cand.constraint_id,
        metric_name=metric.name if metric is not None else None,
        metric_entity=metric.entity if metric is not None else None,
        metric_instance=metric.instance if metric is not None else None,
        metric_value=value,
        expected=expected,
        scope=cand.scope,
        window=_window_dict(cand.window),
        query_id=report.query_id,
        batch_id=report.batch_id,
        event_time=_event_time(report, cand.window),
        processing_time=report.processing_time,
        message=message,
    )


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
    """

    cooldown_seconds: float = 0.0
    rate_limit_per_minute: int | None = None
    min_rows_floor: int = 0
    min_abs_change: float | None = None
    renotify_seconds: float | None = None
    alert_on_anomalies: bool = True

    @classmethod
    def from_spec(cls, spec: dict[str, Any] | None, where: str = "alerts") -> AlertPolicy:
        """Build from the run config's ``alerts:`` mapping; ConfigError names the bad key."""
        if spec is None:
            return cls()
        if not isinstance(spec, dict):
            raise ConfigError(f"{where}: expected a mapping, got {type(spec).__name__}")
        known = {f.name for f in fields(cls)}
        for key in spec:
            if key not in known:
                raise ConfigError(f"{where}.{key}: unknown key (known: {', '.join(sorted(known))})")
        kwargs: dict[str, Any] = {}
        for key, value in spec.items():
            path = f"{where}.{key}"
            if key == "alert_on_anomalies":
                if not isinstance(value, bool):
                    raise ConfigError(f"{path}: expected true or false, got {value!r}")
                kwargs[key] = value
                continue
            if value is None and key in ("rate_limit_per_minute", "min_abs_change", "renotify_seconds"):
                kwargs[key] = None
                continue
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                raise ConfigError(f"{path}: expected a number >= 0, got {value!r}")
            if key in ("rate_limit_per_minute", "min_rows_floor"):
                if value != int(value):
                    raise ConfigError(f"{path}: expected an integer >= 0, got {value!r}")
                value = int(value)
            kwargs[key] = value
        return cls(**kwargs)

    # -- the pure function -------------------------------------------------------------

    def evaluate(
        self, report: BatchReport, state: dict[str, Any] | None
    ) -> tuple[list[Alert], dict[str, Any]]:
        """Alerts for this report and the new state; ``state`` is not modified."""
        old = state or {}
        if old and old.get("version", STATE_VERSION) != STATE_VERSION:
            raise ValueError(f"alert policy state: unsupported version {old.get('version')!r}")
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
        minute_ago = now - timedelta(minutes=1)
        new["sent"] = [t for t in new["sent"] if _parse(t) > minute_ago]
        alerts: list[Alert] = []

        for failing, passing in self._steps(report):
            self._step(report, failing, passing, new, now, alerts)

        if self.cooldown_seconds > 0 or self.renotify_seconds is not None:
            horizon = max(self.cooldown_seconds, self.renotify_seconds or 0.0)
            new["last_alert_at"] = {
                k: t
                for k, t in new["last_alert_at"].items()
                if k in new["open"] or (now - _parse(t)).total_seconds() < horizon
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
        failing: dict[str, _Candidate],
        passing: dict[str, tuple[_Candidate, int | None]],
        new: dict[str, Any],
        now: datetime,
        alerts: list[Alert],
    ) -> None:
        """Apply one observation of each key (resolve, open, de-duplicate, hold back, alert)."""
        for key, (cand, since) in list(passing.items()):
            entry = new["open"].pop(key, None)
            if entry is not None and entry.get("notified"):
                alert = _build(report, cand, "resolved", since_batch=entry.get("since_batch", since))
                alerts.append(alert)
                new["sent"].append(_iso(now))

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
                if renotify is None or last_at is None or (now - _parse(last_at)).total_seconds() < renotify:
                    continue  # de-duplicated: still failing, already alerted
            reason = self._hold_back(report, cand, key, new, now)
            if reason is not None:
                new["suppressed"][reason] = int(new["suppressed"].get(reason, 0)) + 1
                continue
            alerts.append(_build(report, cand, cand.kind))
            new["sent"].append(_iso(now))
            new["last_alert_at"][key] = _iso(now)
            if entry is not None:
                entry["notified"] = True

    def _steps(
        self, report: BatchReport
    ) -> list[tuple[dict[str, _Candidate], dict[str, tuple[_Candidate, int | None]]]]:
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
                results.setdefault(_step_key(result.scope, result.window), []).append((check, result))
        for check, result in pass_results(report):  # the dataset-level pass verdicts
            results.setdefault(_step_key(result.scope, result.window), []).append((check, result))
        anomalies: dict[datetime | None, list[Anomaly]] = {}
        for anomaly in report.anomalies:
            anomalies.setdefault(_step_key(anomaly.scope, anomaly.window), []).append(anomaly)
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
    ) -> tuple[dict[str, _Candidate], dict[str, tuple[_Candidate, int | None]]]:
        """Failing and passing keys of one step (a key fails if any of its results fails)."""
        anomalies_by_cid: dict[str, Anomaly] = {}
        for anomaly in anomalies:
            if anomaly.constraint_id:
                anomalies_by_cid.setdefault(anomaly.constraint_id, anomaly)
        failing: dict[str, _Candidate] = {}
        passing: dict[str, tuple[_Candidate, int | None]] = {}
        for check, result in results:
            key = f"{report.dataset}/{result.constraint_id}"
            own = anomalies_by_cid.get(result.constraint_id) or all_by_cid.get(result.constraint_id)
            cand = _Candidate(
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
                cid = anomaly.constraint_id or _anomaly_key(anomaly)
                key = f"{report.dataset}/{cid}"
                failing.setdefault(
                    key,
                    _Candidate(
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
        self, report: BatchReport, cand: _Candidate, key: str, state: dict[str, Any], now: datetime
    ) -> str | None:
        """Why an alert is held back (``floor``, ``cooldown``, ``rate_limit``), or None."""
        metric = cand.metric
        if metric is not None and metric.name == "Size":
            floor = self.min_abs_change if self.min_abs_change is not None else float(self.min_rows_floor)
            dist = distance_outside(cand.value, cand.expected)
            if floor > 0 and dist is not None and dist < floor:
                return "floor"
        elif self.min_rows_floor > 0:
            rows = rows_in_scope(report, cand.scope, cand.window)
            if rows is not None and rows < self.min_rows_floor:
                return "floor"
        last_at = state["last_alert_at"].get(key)
        if (
            self.cooldown_seconds > 0
            and last_at is not None
            and (now - _parse(last_at)).total_seconds() < self.cooldown_seconds
        ):
            return "cooldown"
        if self.rate_limit_per_minute is not None and len(state["sent"]) >= self.rate_limit_per_minute:
            return "rate_limit"
        return None
