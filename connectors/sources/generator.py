"""A realistic synthetic order/web event stream with incidents on demand (pure Python, no Spark).

Record ``i`` of a stream is a pure function of ``(seed, i, start, rows_per_second, incidents)``:
the same configuration always yields the same records, on any machine and in any process, so a
Spark source can regenerate any offset range (``generator_source``) and a Kafka producer can
produce the same stream (``generator_producer``). Event time of record ``i`` is
``start + i / rows_per_second`` minus a small network jitter (0-2 s), so records arrive slightly out
of order, as real events do.

Fields (see ``GENERATOR_SCHEMA_DDL``): ``event_id`` (unique), ``ts`` (ISO-8601 UTC), ``order_id``
(unique unless a ``duplicate_ids`` incident is active), ``user_id`` (heavy-tailed: some users order
a lot), ``amount`` (log-normal, median ~33), ``currency`` (follows the country), ``country``,
``device``, ``status_code`` (mostly 200/201, some 4xx, rare 5xx), ``email`` (NULL for ~1% guest
checkouts).

Incidents (:class:`Incident`, active for ``start <= t < start + duration`` seconds after the stream
start, ``t`` = the record's nominal offset in time):

=============== ==================================================================================
kind            effect on each record in the incident window
=============== ==================================================================================
null_burst      ``column`` (default amount) is NULL with probability ``fraction`` (default 0.5)
unit_change     ``column`` (default amount) is multiplied by ``factor`` (default 100: cents)
volume_drop     the record is dropped unless a draw < ``factor`` (default 0.1 kept)
new_category    ``column`` (default country) takes a never-seen value with probability ``fraction``
                (default 0.3)
duplicate_ids   ``order_id`` repeats one of the previous 5 records' ids with probability
                ``fraction`` (default 0.3)
schema_drift    ``drift`` = new_field (adds ``coupon_code``), missing_field (drops ``column``,
                default country) or type_change (``column``, default amount, becomes a string)
late_data       event time is ``delay`` seconds (default 120) earlier with probability ``fraction``
                (default 0.2)
=============== ==================================================================================
"""

from __future__ import annotations

import datetime as dt
import json
import math
import random
import re
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from streamdq.errors import ConfigError

GENERATOR_SCHEMA_DDL = (
    "event_id STRING, ts TIMESTAMP, order_id STRING, user_id STRING, amount DOUBLE, currency STRING, "
    "country STRING, device STRING, status_code INT, email STRING"
)
GENERATOR_REQUIRED = ("order_id", "ts")
INCIDENT_KINDS = (
    "null_burst",
    "unit_change",
    "volume_drop",
    "new_category",
    "duplicate_ids",
    "schema_drift",
    "late_data",
)
DRIFT_KINDS = ("new_field", "missing_field", "type_change")

_COUNTRIES = ("DE", "FR", "US", "GB", "NL", "ES", "IT", "PL", "SE", "JP")
_COUNTRY_WEIGHTS = (24, 14, 20, 12, 6, 7, 6, 4, 3, 4)
_CURRENCY = {"DE": "EUR", "FR": "EUR", "NL": "EUR", "ES": "EUR", "IT": "EUR", "US": "USD"}
_CURRENCY.update({"GB": "GBP", "PL": "PLN", "SE": "SEK", "JP": "JPY"})
_DEVICES = ("web", "ios", "android")
_DEVICE_WEIGHTS = (50, 28, 22)
_STATUS = (200, 201, 400, 404, 409, 500, 503)
_STATUS_WEIGHTS = (800, 150, 20, 15, 8, 5, 2)
NEW_CATEGORIES: dict[str, tuple[str, ...]] = {
    "country": ("XK", "ZZ", "BR"),
    "device": ("smart-tv", "kiosk"),
    "currency": ("BTC", "XXX"),
    "status_code": ("418", "599"),
}
_DEFAULT_COLUMN = {
    "null_burst": "amount",
    "unit_change": "amount",
    "new_category": "country",
    "schema_drift": "country",
}
_DEFAULT_FRACTION = {"null_burst": 0.5, "new_category": 0.3, "duplicate_ids": 0.3, "late_data": 0.2}
_DEFAULT_FACTOR = {"unit_change": 100.0, "volume_drop": 0.1}
_UNITS = {"s": 1, "sec": 1, "second": 1, "m": 60, "min": 60, "minute": 60, "h": 3600, "hour": 3600}


def parse_seconds(value: Any, key: str) -> float:
    """Seconds from a number or a string like ``"90s"``, ``"2 minutes"``, ``"1 hour"``."""
    if isinstance(value, bool):
        raise ConfigError(key, f"expected a duration, got {value!r}", "write seconds (90) or '2 minutes'")
    if isinstance(value, int | float):
        if value < 0:
            raise ConfigError(key, f"negative duration {value}", "use a duration >= 0")
        return float(value)
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-z]*?)s?\s*", str(value).lower())
    if m and (m.group(2) in _UNITS or m.group(2) == ""):
        return float(m.group(1)) * _UNITS.get(m.group(2), 1)
    raise ConfigError(key, f"unreadable duration {value!r}", "write seconds (90) or '2 minutes', '1 hour'")


@dataclass(frozen=True)
class Incident:
    """One scheduled incident; see the module docstring for what each kind does.

    ``start`` and ``duration`` are seconds after the stream start; ``None`` parameters take the
    kind's default.
    """

    kind: str
    start: float
    duration: float
    column: str | None = None
    fraction: float | None = None
    factor: float | None = None
    drift: str | None = None
    delay: float | None = None

    def __post_init__(self) -> None:
        if self.kind not in INCIDENT_KINDS:
            raise ConfigError(
                "incident.kind", f"unknown kind {self.kind!r}", f"use one of {', '.join(INCIDENT_KINDS)}"
            )
        if self.drift is not None and self.drift not in DRIFT_KINDS:
            raise ConfigError(
                "incident.drift", f"unknown drift {self.drift!r}", f"use one of {', '.join(DRIFT_KINDS)}"
            )
        if self.fraction is not None and not 0.0 <= self.fraction <= 1.0:
            raise ConfigError("incident.fraction", f"{self.fraction} is not in [0, 1]", "use a probability")

    def active(self, t: float) -> bool:
        """Whether the incident applies at ``t`` seconds after the stream start."""
        return self.start <= t < self.start + self.duration

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], where: str = "incident") -> Incident:
        """Build from config (``{kind, at, duration, column, fraction, factor, drift, delay}``).

        ``at``/``start`` and ``duration``/``delay`` accept seconds or strings like ``"2 minutes"``.
        Raises ConfigError naming ``where`` and the key.
        """
        if not isinstance(d, Mapping):
            raise ConfigError(
                where, f"expected a mapping, got {type(d).__name__}", "write {kind: null_burst, at: 60}"
            )
        allowed = {"kind", "at", "start", "duration", "column", "fraction", "factor", "drift", "delay"}
        unknown = sorted(set(d) - allowed)
        if unknown:
            raise ConfigError(
                f"{where}.{unknown[0]}", "unknown key", f"allowed keys: {', '.join(sorted(allowed))}"
            )
        if "kind" not in d:
            raise ConfigError(f"{where}.kind", "missing", f"use one of {', '.join(INCIDENT_KINDS)}")
        try:
            return cls(
                kind=str(d["kind"]),
                start=parse_seconds(d.get("at", d.get("start", 0)), f"{where}.at"),
                duration=parse_seconds(d.get("duration", 60), f"{where}.duration"),
                column=None if d.get("column") is None else str(d["column"]),
                fraction=None if d.get("fraction") is None else float(d["fraction"]),
                factor=None if d.get("factor") is None else float(d["factor"]),
                drift=None if d.get("drift") is None else str(d["drift"]),
                delay=None if d.get("delay") is None else parse_seconds(d["delay"], f"{where}.delay"),
            )
        except ConfigError as exc:
            if exc.key.startswith("incident."):
                raise ConfigError(f"{where}.{exc.key[len('incident.') :]}", exc.problem, exc.fix) from None
            raise
        except (TypeError, ValueError) as exc:
            raise ConfigError(where, f"bad value: {exc}", "fraction/factor must be numbers") from None


def rolling_incidents(
    every: float = 180.0,
    duration: float = 60.0,
    kinds: Sequence[str] = INCIDENT_KINDS,
    count: int = 20,
    first_at: float | None = None,
) -> tuple[Incident, ...]:
    """``count`` incidents cycling through ``kinds``, one every ``every`` seconds (demo schedule).

    Schema drift cycles through its three variants.
    """
    out = []
    drift_i = 0
    for n in range(count):
        kind = kinds[n % len(kinds)]
        drift = None
        if kind == "schema_drift":
            drift = DRIFT_KINDS[drift_i % len(DRIFT_KINDS)]
            drift_i += 1
        start = (every if first_at is None else first_at) + n * every
        out.append(Incident(kind=kind, start=start, duration=duration, drift=drift))
    return tuple(out)


def now_ms() -> int:
    return int(time.time() * 1000)


def parse_start_ms(value: Any, key: str = "source.start") -> int:
    """Epoch milliseconds from an int (ms), a datetime or an ISO-8601 string (UTC if no zone)."""
    if isinstance(value, bool):
        raise ConfigError(key, f"expected a time, got {value!r}", "write '2026-01-01T00:00:00Z'")
    if isinstance(value, int | float):
        return int(value)
    if isinstance(value, dt.datetime):
        d = value
    else:
        try:
            d = dt.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
        except ValueError:
            raise ConfigError(
                key, f"not an ISO-8601 time: {value!r}", "write '2026-01-01T00:00:00Z'"
            ) from None
    if d.tzinfo is None:
        d = d.replace(tzinfo=dt.UTC)
    return int(d.timestamp() * 1000)


@dataclass(frozen=True)
class GeneratorConfig:
    """What defines a generated stream. Equal configs generate equal records."""

    seed: int = 1
    rows_per_second: float = 200.0
    start_ms: int = field(default_factory=now_ms)
    incidents: tuple[Incident, ...] = ()

    def __post_init__(self) -> None:
        if not self.rows_per_second > 0:
            raise ConfigError(
                "source.rows_per_second", f"{self.rows_per_second} is not > 0", "use a positive rate"
            )

    def offset_seconds(self, index: int) -> float:
        """Nominal seconds after the start of record ``index``."""
        return index / self.rows_per_second

    def index_at(self, at_ms: int) -> int:
        """The first record index whose nominal time is at or after ``at_ms``."""
        return max(0, math.ceil((at_ms - self.start_ms) * self.rows_per_second / 1000.0))

    def incidents_json(self) -> str:
        return json.dumps([i.to_dict() for i in self.incidents])

    @staticmethod
    def incidents_from_json(text: str) -> tuple[Incident, ...]:
        return tuple(Incident.from_dict(d, f"incidents[{n}]") for n, d in enumerate(json.loads(text or "[]")))


def _iso(ms: int) -> str:
    return dt.datetime.fromtimestamp(ms / 1000.0, dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def order_id(seed: int, index: int) -> str:
    return f"ORD-{seed}-{index:09d}"


def make_record(config: GeneratorConfig, index: int) -> dict[str, Any] | None:
    """Record ``index`` of the stream, or None when an incident (volume_drop) removed it."""
    rng = random.Random(f"streamdq:{config.seed}:{index}")
    t = config.offset_seconds(index)
    ts_ms = config.start_ms + int(index * 1000 / config.rows_per_second) - int(rng.random() * 2000)
    country = rng.choices(_COUNTRIES, _COUNTRY_WEIGHTS)[0]
    user = int(rng.paretovariate(1.1)) % 5000
    rec: dict[str, Any] = {
        "event_id": f"evt-{config.seed}-{index}",
        "ts": "",
        "order_id": order_id(config.seed, index),
        "user_id": f"u{user:05d}",
        "amount": round(rng.lognormvariate(3.5, 0.8), 2),
        "currency": _CURRENCY[country],
        "country": country,
        "device": rng.choices(_DEVICES, _DEVICE_WEIGHTS)[0],
        "status_code": rng.choices(_STATUS, _STATUS_WEIGHTS)[0],
        "email": None if rng.random() < 0.01 else f"user{user}@example.com",
    }
    for inc in config.incidents:
        if not inc.active(t):
            continue
        draw = rng.random()
        fraction = inc.fraction if inc.fraction is not None else _DEFAULT_FRACTION.get(inc.kind, 1.0)
        column = inc.column or _DEFAULT_COLUMN.get(inc.kind, "amount")
        if inc.kind == "null_burst" and draw < fraction:
            rec[column] = None
        elif inc.kind == "unit_change" and isinstance(rec.get(column), int | float):
            rec[column] = round(rec[column] * (inc.factor or _DEFAULT_FACTOR["unit_change"]), 2)
        elif inc.kind == "volume_drop":
            keep = inc.factor if inc.factor is not None else _DEFAULT_FACTOR["volume_drop"]
            if draw >= keep:
                return None
        elif inc.kind == "new_category" and draw < fraction:
            values = NEW_CATEGORIES.get(column, ("NEW-VALUE",))
            rec[column] = values[int(rng.random() * len(values))]
        elif inc.kind == "duplicate_ids" and draw < fraction and index > 0:
            rec["order_id"] = order_id(config.seed, max(0, index - 1 - int(rng.random() * 5)))
        elif inc.kind == "schema_drift":
            drift = inc.drift or "new_field"
            if drift == "new_field":
                rec["coupon_code"] = f"SAVE{5 * (1 + int(draw * 4))}"
            elif drift == "missing_field":
                rec.pop(inc.column or "country", None)
            elif rec.get(inc.column or "amount") is not None:  # type_change
                c = inc.column or "amount"
                rec[c] = f"{rec[c]:.2f}" if isinstance(rec[c], float) else str(rec[c])
        elif inc.kind == "late_data" and draw < fraction:
            ts_ms -= int(1000 * (inc.delay if inc.delay is not None else 120.0))
    rec["ts"] = _iso(ts_ms)
    return rec


def generate(
    config: GeneratorConfig, start_index: int, end_index: int
) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(index, record)`` for ``start_index <= index < end_index``, skipping dropped records."""
    for i in range(start_index, end_index):
        rec = make_record(config, i)
        if rec is not None:
            yield i, rec


def records_between(config: GeneratorConfig, start: Any, end: Any) -> Iterator[dict[str, Any]]:
    """The records whose nominal time is in ``[start, end)`` (datetimes, ISO strings or epoch ms)."""
    lo = config.index_at(parse_start_ms(start, "start"))
    hi = config.index_at(parse_start_ms(end, "end"))
    for _, rec in generate(config, lo, hi):
        yield rec


def to_json(record: Mapping[str, Any]) -> str:
    """Compact JSON text of a record (the payload produced to Kafka or written to files)."""
    return json.dumps(record, separators=(",", ":"))


def to_json_bytes(record: Mapping[str, Any]) -> bytes:
    return to_json(record).encode("utf-8")
