"""CDAP's end-to-end example (docs/aggregations.md), for real: a streaming run over the access
logs of examples/access-log-aggregations (three files, three 5-minute windows), then the merged
status and referrer histograms over a time range from ``streamdq query merge`` and from the query
service (``streamdq serve`` started on a free loopback port), and the user's non-combinable
``RequestRate`` served as a time series and refused as a merge."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import run_to_end
from tests.integration.test_service_api import Served, get, start_server, stop_server

pytestmark = [pytest.mark.integration]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "access-log-aggregations"
START, END = "2015-07-06T22:00:00Z", "2015-07-06T22:10:00Z"  # the first two windows


def _cli(capsys: Any, *argv: str) -> tuple[int, str, str]:
    from streamdq.cli import main

    capsys.readouterr()  # drop what ran before (the console sink of a streaming run)
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture(scope="module")
def example_run(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from streamdq.engine.streaming import stream

    here = tmp_path_factory.mktemp("clf-aggregations") / "example"
    shutil.copytree(EXAMPLE, here, ignore=shutil.ignore_patterns("chk", "state", "__pycache__"))
    mp = pytest.MonkeyPatch()
    mp.syspath_prepend(str(here))  # `access_aggs:RequestRate`, as PYTHONPATH=. does for the CLI
    try:
        runner = stream(spark, str(here / "run.yaml"))
        run_to_end(runner, 120)
    finally:
        mp.undo()
    return here


def test_merged_histograms_over_a_range_from_the_cli(example_run: Path, capsys: Any) -> None:
    state = str(example_run / "state")
    merged = {}
    for column in ("status", "referrer"):
        spec = json.dumps(
            {"analyzer": "Aggregation", "function": "discreteValuesHistogram", "column": column}
        )
        code, out, err = _cli(
            capsys, "query", "merge", "--state", state, "--dataset", "web", "--analyzer", spec,
            "--start", START, "--end", END, "--format", "json",
        )  # fmt: skip
        assert code == 0, err
        body = json.loads(out)
        assert body["windows"] == 2 and body["metric"]["name"] == "discreteValuesHistogram"
        merged[column] = body["metric"]["value"]
    assert merged["status"] == {"200": 7, "400": 1, "404": 1, "500": 1}
    assert merged["referrer"] == {
        "http://example.com/": 4,
        "http://example.com/shop": 2,
        "http://search.example/?q=data+quality": 2,
        "http://search.example/?q=streaming": 1,
    }


def test_a_non_combinable_aggregation_is_a_time_series_and_no_merge(example_run: Path, capsys: Any) -> None:
    state = str(example_run / "state")
    spec = json.dumps(
        {
            "analyzer": "Aggregation",
            "function": "access_aggs:RequestRate",
            "column": "path",
            "params": {"seconds": 300},
        }
    )
    mp = pytest.MonkeyPatch()
    mp.syspath_prepend(str(example_run))
    try:
        code, _, err = _cli(
            capsys, "query", "merge", "--state", state, "--dataset", "web", "--analyzer", spec,
            "--start", START, "--end", END,
        )  # fmt: skip
        assert code == 2 and "requestRate(path) is not combinable" in err
        code, out, err = _cli(
            capsys, "query", "history", "--state", state, "--dataset", "web", "--metric", "requestRate",
            "--scope", "window", "--format", "json",
        )  # fmt: skip
    finally:
        mp.undo()
    assert code == 0, err
    points = json.loads(out)
    latest: dict[str, float] = {}
    for p in points:
        latest[str(p["window_start"])] = p["value"]
    assert sorted(latest.values()) == [5 / 300] * 3


def test_the_query_service_merges_and_serves_series(example_run: Path, monkeypatch: Any) -> None:
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join(p for p in (str(example_run), os.environ.get("PYTHONPATH")) if p)
    )
    served: Served = start_server(example_run / "state")
    try:
        rng = {"startTimestamp": START, "endTimestamp": END}
        body = get(served, "/v1/source/web/fields/status/aggregations/discreteValuesHistogram", **rng).json()
        assert body["data"] == {"200": 7, "400": 1, "404": 1, "500": 1} and body["windows"] == 2
        aggs = {a["name"]: a for a in get(served, "/v1/source/web/fields/path/aggregations").json()}
        assert aggs["requestRate"]["combinable"] is False
        refused = get(served, "/v1/source/web/fields/path/aggregations/requestRate", **rng)
        assert refused.status_code == 400 and "not combinable" in refused.text
        series = get(served, "/v1/source/web/fields/path/timeseries/requestRate").json()["timeValues"]
        assert [round(p["data"] * 300) for p in series] == [5, 5, 5]
        hosts = get(served, "/v1/source/web/fields/host/aggregations/uniqueValues").json()["data"]
        assert "10.9.9.9" in hosts and len(hosts) == 8
    finally:
        stop_server(served)


def test_backtest_replays_an_aggregation_metric(example_run: Path, capsys: Any) -> None:
    """``has_no_anomalies`` on an aggregation's metric finds its stored series (named after the
    aggregation, not the analyzer class) in ``streamdq backtest --config``."""
    checks = example_run / "anomalies.yaml"
    checks.write_text(
        "checks:\n  - description: bytes\n    constraints:\n      - has_no_anomalies:\n"
        "          metric: {analyzer: Aggregation, function: average, column: bytes}\n"
        "          detector: {type: online_normal}\n          scope: window\n"
    )
    run = example_run / "backtest.yaml"
    run.write_text(
        (example_run / "run.yaml")
        .read_text()
        .replace("checks_file: checks.yaml", "checks_file: anomalies.yaml")
    )
    code, out, err = _cli(capsys, "backtest", "--config", str(run))
    assert code == 0, err
    assert "[window] 2 points" in out, out  # the two closed windows of the average's series


def test_a_restart_restores_the_open_window_from_delta(example_run: Path, spark: Any, capsys: Any) -> None:
    """Runs last: a second run over one more file of the open 22:10 window loads that window's
    aggregation states from the Delta table (decoded by tag) and merges the new rows into them."""
    from streamdq.engine.streaming import stream

    late = example_run / "logs" / "access-2015-07-06-2214.log"
    late.write_text(
        '10.0.0.8 - - [06/Jul/2015:22:14:40 +0000] "GET / HTTP/1.1" 200 5120 "http://example.com/" "Mozilla/5.0"\n'
        '10.0.0.8 - - [06/Jul/2015:22:14:50 +0000] "GET /docs HTTP/1.1" 200 20480 "-" "Mozilla/5.0"\n'
    )
    mp = pytest.MonkeyPatch()
    mp.syspath_prepend(str(example_run))
    try:
        runner = stream(spark, str(example_run / "run.yaml"))
        run_to_end(runner, 120)
    finally:
        mp.undo()
    spec = json.dumps({"analyzer": "Aggregation", "function": "discreteValuesHistogram", "column": "status"})
    code, out, err = _cli(
        capsys, "query", "merge", "--state", str(example_run / "state"), "--dataset", "web",
        "--analyzer", spec, "--start", "2015-07-06T22:10:00Z", "--end", "2015-07-06T22:15:00Z", "--format", "json",
    )  # fmt: skip
    assert code == 0, err
    assert json.loads(out)["metric"]["value"] == {"200": 4, "404": 3}
