"""The query service (``streamdq serve``) over a state store written by a real streaming run.

``service_store`` runs one short streaming job (files source, 4 files of JSON lines read one per
microbatch, 1-minute windows, window-scope checks with one failing window that raises an alert,
a quality score, a malformed line for the quarantine, three SQL measures (one failing), a
window-scope expression check and ``pass: all``) into a Delta state path, once per test process; ``served`` starts ``streamdq serve`` on it as a subprocess on a free loopback port.
test_service_console.py reuses both. The API is checked against the store read directly
(``DeltaStateStore.merge_range`` / ``history``), and schemathesis fuzzes every operation of
its OpenAPI spec: no input may give a 500 or an undocumented status.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import require_integration
from tests.integration.conftest import run_to_end

pytestmark = [pytest.mark.integration]

DATASET = "weblog"
T0 = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)
WINDOWS = 13  # 1-minute windows; window 5 is short (2 rows): has_size fails there
SHORT_WINDOW = 5
FILES = ((0, 4), (4, 8), (8, 12), (12, 13))  # window ranges per file, one file per microbatch
STATUSES = ("200", "200", "200", "404", "500")
MALFORMED = '{"user": "u1", "ts": '


@dataclass(frozen=True)
class ServiceStore:
    """A state path written by a finished streaming run."""

    path: Path
    dataset: str
    t0: datetime


def _rows(window: int) -> list[dict[str, Any]]:
    n = 2 if window == SHORT_WINDOW else 12 + (window % 3)
    out = []
    for i in range(n):
        out.append(
            {
                "user": f"u{(window * 7 + i) % (5 + window % 4)}",
                "ts": (T0 + timedelta(minutes=window, seconds=2 + i * 4)).isoformat(),
                "status": STATUSES[(window + i) % len(STATUSES)],
                "latency": float(10 + (i * 13 + window * 5) % 90),
            }
        )
    return out


def _config(tmp: Path, inbox: Path) -> Path:
    window_checks = [
        {"has_size": {"assertion": ">= 5", "scope": "window"}},
        {"has_approx_count_distinct": {"column": "user", "assertion": ">= 1", "scope": "window"}},
        {
            "has_approx_quantile": {
                "column": "latency",
                "quantile": 0.5,
                "assertion": ">= 0",
                "scope": "window",
            }
        },
        {"has_number_of_distinct_values": {"column": "status", "assertion": "<= 10", "scope": "window"}},
        {"is_complete": {"column": "user", "scope": "window"}},
    ]
    cfg = {
        "dataset": DATASET,
        "source": {
            "type": "files",
            "path": str(inbox),
            "format": "json",
            "schema": "user STRING, ts TIMESTAMP, status STRING, latency DOUBLE",
            "required": ["user"],
            "max_files_per_trigger": 1,
        },
        "event_time": "ts",
        "window": "1 minute",
        "watermark": "1 second",
        "trigger": "available_now",
        "checkpoint": str(tmp / "chk"),
        "state": {"path": str(tmp / "state")},
        "checks": [
            {"description": "weblog windows", "level": "error", "constraints": window_checks},
            {
                "description": "weblog measures",
                "level": "warning",
                "constraints": [
                    {
                        "kind": "expression",
                        "name": "enough rows",
                        "expression": 'measures["rows"] >= 5',
                        "scope": "window",
                    }
                ],
            },
        ],
        # a compiled measure (batch, window and total scope), a Spark SQL map measure (batch) and
        # one that fails in every batch (a row per input row, not one)
        "measures": [
            {"name": "one status", "sql": "select status from data"},
            {"name": "rows", "sql": "select count(*) from data"},
            {
                "name": "statuses",
                "sql": "select count(status) as n, count(distinct status) as d from data",
                "result_type": "map",
            },
        ],
        "pass": "all",
        "alerts": {"cooldown_seconds": 0, "min_rows_floor": 1},
        "quality_score": {"min_history": 4, "history": 16, "refit_every": 4},
        "sinks": [{"type": "jsonl", "path": str(tmp / "reports.jsonl")}],
    }
    path = tmp / "run.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def build_store(spark: Any, tmp: Path) -> ServiceStore:
    """Run the streaming job once into ``tmp/state``."""
    import streamdq

    inbox = tmp / "in"
    inbox.mkdir()
    for k, (lo, hi) in enumerate(FILES):
        lines = [json.dumps(r) for w in range(lo, hi) for r in _rows(w)]
        if k == 1:
            lines.append(MALFORMED)
        staged = tmp / f"part-{k}.json"
        staged.write_text("\n".join(lines) + "\n")
        os.utime(staged, (1_700_000_000 + k, 1_700_000_000 + k))  # files are read in this order
        staged.rename(inbox / staged.name)
    runner = streamdq.stream(spark, str(_config(tmp, inbox)))
    run_to_end(runner, 300)
    return ServiceStore(tmp / "state", DATASET, T0)


BUILT_ENV = "STREAMDQ_SERVICE_STORE_BUILT"  # process-wide: this module may be imported twice


def store_once(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> ServiceStore:
    """The streaming run's store, built once per test process (shared by the service test files:
    pytest imports this file as ``test_service_api`` and test_service_console.py imports it as
    ``tests.integration.test_service_api``, so the path is kept in the environment)."""
    built = os.environ.get(BUILT_ENV)
    if built and (Path(built) / "reports").exists():
        return ServiceStore(Path(built), DATASET, T0)
    keep = os.environ.get("STREAMDQ_SERVICE_STORE")  # a developer's reusable store (not in CI)
    if keep and (Path(keep) / "state" / "reports").exists():
        store = ServiceStore(Path(keep) / "state", DATASET, T0)
    elif keep:
        Path(keep).mkdir(parents=True)
        store = build_store(spark, Path(keep))
    else:
        store = build_store(spark, tmp_path_factory.mktemp("service"))
    os.environ[BUILT_ENV] = str(store.path)
    return store


@pytest.fixture(scope="session")
def service_store(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> ServiceStore:
    return store_once(spark, tmp_path_factory)


@dataclass(frozen=True)
class Served:
    url: str
    token: str | None
    process: subprocess.Popen[str]


def start_server(state: Path, *, token: str | None = None) -> Served:
    """``streamdq serve --port 0`` as a subprocess; its URL read from the line it prints."""
    cmd = [sys.executable, "-m", "streamdq.cli", "serve", "--state", str(state), "--port", "0"]
    env = dict(os.environ)
    if token:
        env["STREAMDQ_SERVE_TOKEN"] = token
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    deadline = time.monotonic() + 60
    seen = []
    assert proc.stdout is not None
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        seen.append(line)
        m = re.search(r"console at (http://\S+/)", line)
        if m:
            return Served(m.group(1).rstrip("/"), token, proc)
    proc.kill()
    raise AssertionError(f"streamdq serve did not start: {''.join(seen)}")


def stop_server(served: Served) -> None:
    served.process.send_signal(signal.SIGINT)
    try:
        served.process.wait(20)
    except subprocess.TimeoutExpired:
        served.process.kill()


@pytest.fixture(scope="module")
def served(service_store: ServiceStore) -> Iterator[Served]:
    server = start_server(service_store.path)
    try:
        yield server
    finally:
        stop_server(server)


def get(served: Served, path: str, **params: Any) -> Any:
    import httpx

    headers = {"Authorization": f"Bearer {served.token}"} if served.token else {}
    return httpx.get(served.url + path, params=params, headers=headers, timeout=30)


def _epoch(ts: datetime) -> int:
    return int(ts.timestamp())


# -- datasets, fields, aggregations ---------------------------------------------------
def test_datasets_lists_the_run_with_its_last_status(served: Served, service_store: ServiceStore) -> None:
    body = get(served, "/v1/datasets").json()
    assert [d["dataset"] for d in body] == [DATASET]
    assert body[0]["batches"] >= len(FILES)
    assert body[0]["status"] in ("Success", "Warning", "Error")
    one = get(served, f"/v1/datasets/{DATASET}").json()
    assert one["lastBatch"] == body[0]["lastBatch"] and "counters" in one


def test_fields_and_aggregations_follow_cdap(served: Served) -> None:
    fields = {f["field"]: f for f in get(served, f"/v1/source/{DATASET}/fields").json()}
    assert {"*", "user", "latency", "status"} <= set(fields)
    aggs = get(served, f"/v1/source/{DATASET}/fields/user/aggregations").json()
    by_name = {a["name"]: a for a in aggs}
    assert by_name["ApproxCountDistinct"]["combinable"] is True
    assert by_name["Completeness"]["combinable"] is True
    quality = get(served, f"/v1/source/{DATASET}/fields/*/aggregations").json()
    assert any(a["name"] == "QualityScore" and a["combinable"] is False for a in quality), quality


def test_merge_equals_the_store_merge_over_a_range(served: Served, service_store: ServiceStore) -> None:
    from streamdq.state import DeltaStateStore

    from streamdq.analyzers import ApproxCountDistinct, ApproxQuantile
    from streamdq.analyzers.histogram import Histogram

    store = DeltaStateStore(str(service_store.path))
    start, end = T0 + timedelta(minutes=2), T0 + timedelta(minutes=7)
    params = {"startTimestamp": _epoch(start), "endTimestamp": end.isoformat()}

    got = get(served, f"/v1/source/{DATASET}/fields/user/aggregations/ApproxCountDistinct", **params).json()
    want = ApproxCountDistinct("user").metric(
        store.merge_range(DATASET, ApproxCountDistinct("user"), start, end)
    )
    assert got["data"] == want.value and got["windows"] == 5

    got = get(
        served, f"/v1/source/{DATASET}/fields/latency/aggregations/ApproxQuantile", quantile=0.9, **params
    ).json()
    q = ApproxQuantile("latency", 0.9)
    assert got["data"] == q.metric(store.merge_range(DATASET, q, start, end)).value

    got = get(served, f"/v1/source/{DATASET}/fields/status/aggregations/Histogram", **params).json()
    expected_rows = [r for w in range(2, 7) for r in _rows(w)]
    counts: dict[str, int] = {}
    for r in expected_rows:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    assert got["data"] == counts  # exact: {"200": n, "404": m, "500": k}
    assert Histogram("status").NAME == "Histogram"


def test_timeseries_has_one_value_per_window(served: Served) -> None:
    body = get(served, f"/v1/source/{DATASET}/fields/*/timeseries/Size").json()
    values = {p["timestamp"]: p["data"] for p in body["timeValues"]}
    for w in range(WINDOWS):
        assert values[_epoch(T0 + timedelta(minutes=w))] == len(_rows(w))


# -- history, checks, alerts, quarantine, quality --------------------------------------
def test_metric_history_per_scope(served: Served) -> None:
    catalog = get(served, f"/v1/datasets/{DATASET}/metrics").json()
    assert {"batch", "window", "total"} <= {m["scope"] for m in catalog}
    total = get(served, f"/v1/datasets/{DATASET}/metrics/Size", scope="total").json()
    assert total[-1]["value"] == sum(len(_rows(w)) for w in range(WINDOWS))
    window = get(served, f"/v1/datasets/{DATASET}/metrics/Size", scope="window", instance="*").json()
    assert len(window) == WINDOWS


def test_results_and_alerts_show_the_short_window(served: Served) -> None:
    short = _epoch(T0 + timedelta(minutes=SHORT_WINDOW))
    errors = get(served, f"/v1/datasets/{DATASET}/results", status="Failure").json()
    assert any(r["timestamp"] == short and "Size" in (r["metric"]["name"] or "") for r in errors), errors
    alerts = get(served, f"/v1/datasets/{DATASET}/alerts").json()
    assert any(a["timestamp"] == short and a["kind"] == "violation" for a in alerts), alerts
    before = get(served, f"/v1/datasets/{DATASET}/alerts", endTimestamp=short).json()
    assert all(a["timestamp"] < short for a in before)


def test_quarantine_is_paged(served: Served) -> None:
    page = get(served, f"/v1/datasets/{DATASET}/quarantine", limit=1).json()
    assert page["total"] >= 1 and len(page["rows"]) == 1
    assert any(
        r["raw"] == MALFORMED for r in get(served, f"/v1/datasets/{DATASET}/quarantine").json()["rows"]
    )
    beyond = get(served, f"/v1/datasets/{DATASET}/quarantine", offset=page["total"]).json()
    assert beyond["rows"] == []


def test_quality_score_per_window_with_its_drivers(served: Served) -> None:
    points = get(served, f"/v1/datasets/{DATASET}/quality").json()
    assert points, "no QualityScore windows stored"
    scored = [p for p in points if p["ready"]]
    assert scored, points
    detailed = [p for p in scored if p["detail"]]
    assert detailed and all(p["components"] for p in detailed)
    assert all(0 <= p["score"] <= 12 for p in scored)
    assert any(p["drivers"] for p in detailed)


def test_programs_empty_without_auto_validate(served: Served) -> None:
    assert get(served, f"/v1/datasets/{DATASET}/programs").json() == []


# -- measures and measure/check/pass documents ------------------------------------------
def _window_rows() -> dict[int, int]:
    return {_epoch(T0 + timedelta(minutes=w)): len(_rows(w)) for w in range(WINDOWS)}


def test_measures_over_time_per_scope(served: Served) -> None:
    catalog = get(served, f"/v1/datasets/{DATASET}/measures").json()
    assert {(m["name"], m["scope"]) for m in catalog} == {
        ("rows", "batch"),
        ("rows", "window"),
        ("rows", "total"),
        ("statuses", "batch"),
        ("one status", "batch"),
    }
    assert {m["resultType"] for m in catalog if m["name"] == "statuses"} == {"map"}
    # one value per closed window, at its start: the window's rows
    window = get(served, f"/v1/datasets/{DATASET}/measures/rows", scope="window").json()
    expected = _window_rows()
    assert len(window) >= WINDOWS - 1 and all(p["failure"] is None for p in window)
    assert {p["timestamp"]: p["value"] for p in window} == {
        p["timestamp"]: expected[p["timestamp"]] for p in window
    }
    assert all(p["windowEnd"] - p["windowStart"] == 60 for p in window)
    # the range keeps the windows starting in [start, end)
    start, end = T0 + timedelta(minutes=2), T0 + timedelta(minutes=7)
    ranged = get(
        served,
        f"/v1/datasets/{DATASET}/measures/rows",
        scope="window",
        startTimestamp=_epoch(start),
        endTimestamp=end.isoformat(),
    ).json()
    assert [p["timestamp"] for p in ranged] == [_epoch(T0 + timedelta(minutes=w)) for w in range(2, 7)]
    # one value per batch: the batch's good rows; the total is their sum
    batch = get(served, f"/v1/datasets/{DATASET}/measures/rows", scope="batch").json()
    assert [p["value"] for p in batch] == [sum(len(_rows(w)) for w in range(lo, hi)) for lo, hi in FILES]
    total = get(served, f"/v1/datasets/{DATASET}/measures/rows", scope="total").json()
    assert total[-1]["value"] == sum(expected.values())
    # a map measure, Spark SQL per batch: {"n": non-null statuses, "d": distinct statuses}
    statuses = get(served, f"/v1/datasets/{DATASET}/measures/statuses").json()
    want = []
    for lo, hi in FILES:
        values = [r["status"] for w in range(lo, hi) for r in _rows(w)]
        want.append({"n": len(values), "d": len(set(values))})
    assert [p["value"] for p in statuses] == want
    assert {p["scope"] for p in statuses} == {"batch"} and statuses[0]["resultType"] == "map"
    # a failed measure: no value, the reason
    failed = get(served, f"/v1/datasets/{DATASET}/measures/one status").json()
    assert len(failed) == len(FILES)
    assert all(p["value"] is None and "rows" in (p["failure"] or "") for p in failed), failed


def test_pass_documents_over_time(served: Served) -> None:
    short = _epoch(T0 + timedelta(minutes=SHORT_WINDOW))
    windows = get(served, f"/v1/datasets/{DATASET}/pass", scope="window").json()
    by_start = {d["windowStart"]: d for d in windows}
    assert len(by_start) >= WINDOWS - 1
    # the short window fails the expression and the size check: pass: all fails there only
    assert by_start[short]["check"] == {"enough rows": False, "weblog windows": False}
    assert by_start[short]["pass"] is False and by_start[short]["measure"] == {"rows": 2}
    assert all(d["pass"] for s, d in by_start.items() if s != short)
    assert all(d["measure"]["rows"] == _window_rows()[s] for s, d in by_start.items())
    # batch documents carry both measures, in batch order; no batch-scope check: they pass
    batch = get(served, f"/v1/datasets/{DATASET}/pass", scope="batch").json()
    values = get(served, f"/v1/datasets/{DATASET}/measures/rows", scope="batch").json()
    assert [d["measure"]["rows"] for d in batch] == [p["value"] for p in values]
    assert [d["batchId"] for d in batch] == [p["batchId"] for p in values]
    assert all(set(d["measure"]) == {"rows", "statuses", "one status"} and d["pass"] for d in batch)
    assert all(d["measure"]["one status"] is None for d in batch)  # a failed measure is null
    # every scope, oldest first; the range is by processing time; limit keeps the newest
    every = get(served, f"/v1/datasets/{DATASET}/pass").json()
    assert {d["scope"] for d in every} == {"batch", "window", "total"}
    times = [d["timestamp"] for d in every]
    assert times == sorted(times)
    later = get(served, f"/v1/datasets/{DATASET}/pass", startTimestamp=batch[1]["timestamp"]).json()
    assert later and all(d["timestamp"] >= batch[1]["timestamp"] for d in later)
    assert all(d["batchId"] >= batch[1]["batchId"] for d in later)
    assert get(served, f"/v1/datasets/{DATASET}/pass", limit=2).json() == every[-2:]


# -- errors -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("path", "params", "status"),
    [
        ("/v1/datasets/nope", {}, 404),
        ("/v1/source/nope/fields", {}, 404),
        (f"/v1/source/{DATASET}/fields/nofield/aggregations", {}, 404),
        (f"/v1/source/{DATASET}/fields/user/aggregations/Nope", {}, 404),
        (f"/v1/source/{DATASET}/fields/user/timeseries/Nope", {}, 404),
        (
            f"/v1/source/{DATASET}/fields/user/aggregations/ApproxCountDistinct",
            {"startTimestamp": "yesterday"},
            400,
        ),
        (
            f"/v1/source/{DATASET}/fields/user/aggregations/ApproxCountDistinct",
            {"startTimestamp": 10, "endTimestamp": 5},
            400,
        ),
        (f"/v1/source/{DATASET}/fields/*/aggregations/QualityScore", {}, 400),
        (f"/v1/source/{DATASET}/fields/user/aggregations/ApproxCountDistinct", {"quantile": 0.5}, 400),
        (f"/v1/datasets/{DATASET}/quarantine", {"limit": 0}, 400),
        (f"/v1/datasets/{DATASET}/metrics/Size", {"scope": "hourly"}, 400),
        (f"/v1/datasets/{DATASET}/metrics/NoSuchMetric", {}, 404),
        (f"/v1/datasets/{DATASET}/measures/NoSuchMeasure", {}, 404),
        (f"/v1/datasets/{DATASET}/measures/Size", {}, 404),  # a metric, not a measure
        ("/v1/datasets/nope/measures/rows", {}, 404),
        ("/v1/datasets/nope/measures", {}, 404),
        (f"/v1/datasets/{DATASET}/measures/rows", {"scope": "hourly"}, 400),
        (f"/v1/datasets/{DATASET}/measures/rows", {"startTimestamp": 10, "endTimestamp": 5}, 400),
        ("/v1/datasets/nope/pass", {}, 404),
        (f"/v1/datasets/{DATASET}/pass", {"endTimestamp": "soon"}, 400),
        (f"/v1/datasets/{DATASET}/pass", {"limit": 0}, 400),
        ("/v2/nothing", {}, 404),
    ],
)
def test_user_errors_are_json_404_or_400(served: Served, path: str, params: dict, status: int) -> None:
    response = get(served, path, **params)
    assert response.status_code == status, response.text
    body = response.json()
    assert body["status"] == status and body["error"]


def test_token_is_required_when_set(service_store: ServiceStore) -> None:
    served = start_server(service_store.path, token="s3cret")
    try:
        import httpx

        assert httpx.get(served.url + "/v1/datasets", timeout=30).status_code == 401
        bad = httpx.get(served.url + "/v1/datasets", headers={"Authorization": "Bearer nope"}, timeout=30)
        assert bad.status_code == 401 and bad.json()["status"] == 401
        assert get(served, "/v1/datasets").status_code == 200
        assert httpx.get(served.url + "/", timeout=30).status_code == 200  # the page holds no data
    finally:
        stop_server(served)


def test_non_loopback_bind_needs_a_token(tmp_path: Path) -> None:
    from streamdq.commands.serve import bind_problem

    assert bind_problem("127.0.0.1", None, False) is None
    assert bind_problem("::1", None, False) is None
    assert "--token" in (bind_problem("0.0.0.0", None, False) or "")
    assert bind_problem("0.0.0.0", "t", False) is None
    out = subprocess.run(
        [sys.executable, "-m", "streamdq.cli", "serve", "--state", str(tmp_path), "--host", "0.0.0.0"],
        capture_output=True,
        text=True,
        timeout=60,
        env={k: v for k, v in os.environ.items() if k != "STREAMDQ_SERVE_TOKEN"},
    )
    assert out.returncode == 2 and "--token" in out.stderr


def test_time_parameters_accept_epoch_and_iso() -> None:
    from streamdq.service.errors import BadRequest
    from streamdq.service.times import parse_time, time_range

    assert parse_time("1700000000", "t") == parse_time("2023-11-14T22:13:20Z", "t")
    assert parse_time("2023-11-14T22:13:20", "t").tzinfo is not None
    for bad in ("", "abc", "1e400", "99999999999999", "2023-13-01"):
        with pytest.raises(BadRequest):
            parse_time(bad, "t")
    with pytest.raises(BadRequest):
        time_range("5", "5")


def test_openapi_fuzzed_by_schemathesis(served: Served) -> None:
    try:
        import schemathesis
        from hypothesis import HealthCheck, given, settings
        from schemathesis.specs.openapi.checks import positive_data_acceptance
    except ImportError as exc:  # pragma: no cover - dev extra
        require_integration("schemathesis", str(exc))
        return
    schema = schemathesis.openapi.from_url(served.url + "/openapi.json")
    failures = []
    for op in schema.get_all_operations():
        operation = op.ok()

        @settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), database=None)
        @given(case=operation.as_strategy())
        def run(case: Any) -> None:
            # every default check but "schema-valid input is accepted": a string that is neither
            # epoch seconds nor ISO 8601, or a reversed range, is a documented 400
            case.call_and_validate(base_url=served.url, excluded_checks=[positive_data_acceptance])

        try:
            run()
        except (Exception, BaseExceptionGroup) as exc:  # every operation's failures, reported together
            failures.append(f"{operation.label}: {str(exc)[:2000]}")
    assert not failures, "\n\n".join(failures)


def test_fold_stored_equals_pairwise_merge() -> None:
    """The one-union fold of stored sketches answers what pairwise ``State.merge`` answers."""
    from functools import reduce

    import datasketches as ds

    from streamdq.analyzers.sketch_states import HllState, KllState
    from streamdq.service.aggregations import fold_stored

    hlls, klls = [], []
    for w in range(40):
        h = ds.hll_sketch(12)
        k = ds.kll_doubles_sketch(200)
        for i in range(50):
            h.update(f"u{(w * 31 + i) % 700}")
            k.update(float((w * 17 + i * 7) % 1000))
        hlls.append(HllState.of_sketch(h))
        klls.append(KllState.of_sketch(k))
    hlls.append(HllState.empty())
    pair_h = reduce(lambda a, b: a.merge(b), hlls, HllState.empty())
    fold_h = fold_stored([s.to_bytes() for s in hlls], HllState.empty(), "test")
    assert isinstance(fold_h, HllState) and fold_h.estimate() == pair_h.estimate()
    pair_k = reduce(lambda a, b: a.merge(b), klls, KllState.empty())
    fold_k = fold_stored([s.to_bytes() for s in klls], KllState.empty(), "test")
    assert isinstance(fold_k, KllState) and fold_k.n == pair_k.n == 40 * 50
    assert abs(fold_k.quantile(0.5) - pair_k.quantile(0.5)) <= 1000 * 2 * fold_k.rank_error() + 1
    assert fold_stored([], HllState.empty(), "test") == HllState.empty()


def test_demo_console_process_starts_and_stops(service_store: ServiceStore) -> None:
    """``make demo`` starts the console with ``start_console`` beside the job and prints its URL."""
    import httpx

    from streamdq.service.process import start_console

    console = start_console(service_store.path)
    assert console is not None
    try:
        assert console.url.startswith("http://127.0.0.1:")
        assert httpx.get(console.url + "v1/health", timeout=30).json()["status"] == "ok"
        assert "<title>streamdq console</title>" in httpx.get(console.url, timeout=30).text
    finally:
        console.stop()
    assert console.process.poll() is not None
