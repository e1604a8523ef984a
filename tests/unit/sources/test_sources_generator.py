"""The synthetic stream: determinism by seed and index, and each incident visibly changing the data."""

from __future__ import annotations

import json
import statistics

import pytest
from streamdq.connectors.sources.generator import (
    INCIDENT_KINDS,
    NEW_CATEGORIES,
    GeneratorConfig,
    Incident,
    generate,
    make_record,
    parse_seconds,
    records_between,
    rolling_incidents,
    to_json_bytes,
)

from streamdq.errors import ConfigError

START = 1_800_000_000_000  # fixed event-time origin (ms)
N = 2000  # 10 s at 200 rows/s


def cfg(*incidents: Incident, seed: int = 7) -> GeneratorConfig:
    return GeneratorConfig(seed=seed, rows_per_second=200, start_ms=START, incidents=tuple(incidents))


def recs(config: GeneratorConfig, lo: int = 0, hi: int = N) -> list[dict]:
    return [r for _, r in generate(config, lo, hi)]


def during(kind: str, **kw) -> Incident:
    """An incident covering the whole test range (all N records)."""
    return Incident(kind=kind, start=0, duration=N / 200, **kw)


def test_same_seed_same_records_and_any_range_regenerates():
    a, b = recs(cfg()), recs(cfg())
    assert a == b
    assert recs(cfg(), 500, 600) == a[500:600]  # record i does not depend on what came before
    assert recs(cfg(seed=8)) != a
    assert [json.loads(to_json_bytes(r)) for r in a[:5]] == a[:5]


def test_baseline_is_realistic():
    rows = recs(cfg())
    assert len({r["order_id"] for r in rows}) == N  # unique ids
    assert len({r["event_id"] for r in rows}) == N
    assert {r["country"] for r in rows} <= {"DE", "FR", "US", "GB", "NL", "ES", "IT", "PL", "SE", "JP"}
    assert 20 < statistics.median(r["amount"] for r in rows) < 60
    assert sum(r["email"] is None for r in rows) < 0.03 * N
    assert all(r["ts"].endswith("Z") for r in rows)
    assert all(r["currency"] == "EUR" for r in rows if r["country"] == "DE")
    # event time follows the index (with < 2 s jitter): 10 s of data
    assert rows[0]["ts"] < rows[-1]["ts"]


def test_null_burst():
    rows = recs(cfg(during("null_burst", fraction=0.5)))
    share = sum(r["amount"] is None for r in rows) / len(rows)
    assert 0.4 < share < 0.6


def test_unit_change_multiplies_by_100():
    base, hit = recs(cfg()), recs(cfg(during("unit_change")))
    assert statistics.median(r["amount"] for r in hit) == pytest.approx(
        100 * statistics.median(r["amount"] for r in base), rel=0.01
    )


def test_volume_drop_keeps_a_tenth():
    rows = recs(cfg(during("volume_drop", factor=0.1)))
    assert 0.05 * N < len(rows) < 0.15 * N


def test_new_category_values():
    rows = recs(cfg(during("new_category", column="device")))
    new = [r for r in rows if r["device"] in NEW_CATEGORIES["device"]]
    assert 0.2 * N < len(new) < 0.4 * N


def test_duplicate_ids():
    rows = recs(cfg(during("duplicate_ids", fraction=0.3)))
    assert N - len({r["order_id"] for r in rows}) > 0.2 * N


@pytest.mark.parametrize(
    "drift,check",
    [
        ("new_field", lambda r: "coupon_code" in r),
        ("missing_field", lambda r: "country" not in r),
        ("type_change", lambda r: isinstance(r["amount"], str)),
    ],
)
def test_schema_drift(drift, check):
    assert not any(check(r) for r in recs(cfg()))
    assert all(check(r) for r in recs(cfg(during("schema_drift", drift=drift))))


def test_late_data_shifts_event_time_back():
    base, late = recs(cfg()), recs(cfg(during("late_data", delay=300, fraction=0.2)))
    shifted = sum(a["ts"] != b["ts"] for a, b in zip(base, late, strict=True))
    assert 0.1 * N < shifted < 0.3 * N


def test_incident_only_inside_its_window():
    inc = Incident(kind="null_burst", start=5, duration=2, fraction=1.0)  # indices 1000..1399
    rows = [make_record(cfg(inc), i) for i in range(N)]
    nulls = [i for i, r in enumerate(rows) if r and r["amount"] is None]
    assert nulls == list(range(1000, 1400))


def test_records_between_uses_event_time():
    out = list(records_between(cfg(), START + 1000, START + 2000))
    assert len(out) == 200 and out[0]["order_id"].endswith("000000200")


def test_rolling_schedule_cycles_through_every_kind():
    sched = rolling_incidents(every=180, duration=60, count=len(INCIDENT_KINDS) + 3)
    assert [i.kind for i in sched[: len(INCIDENT_KINDS)]] == list(INCIDENT_KINDS)
    assert sched[0].start == 180 and sched[1].start == 360
    assert {i.drift for i in sched if i.kind == "schema_drift"} <= {
        "new_field",
        "missing_field",
        "type_change",
    }


def test_incident_config_errors_name_the_key():
    with pytest.raises(ConfigError, match=r"incidents\[2\].kind: unknown kind 'meteor'"):
        Incident.from_dict({"kind": "meteor"}, "incidents[2]")
    with pytest.raises(ConfigError, match=r"x.duration: unreadable duration 'soon'"):
        Incident.from_dict({"kind": "null_burst", "duration": "soon"}, "x")
    with pytest.raises(ConfigError, match=r"x.colour: unknown key"):
        Incident.from_dict({"kind": "null_burst", "colour": "red"}, "x")
    assert Incident.from_dict({"kind": "null_burst", "at": "2 minutes", "duration": "90s"}).start == 120
    assert parse_seconds("1 hour", "k") == 3600
