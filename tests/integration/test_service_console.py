"""The web console in a real browser: Playwright's Python package driving Debian's chromium.

The state store is the one test_service_api.py's streaming run writes (``service_store``), served
by ``streamdq serve`` as a subprocess. Checked: the page loads without console errors; charts
render with marks; picking a range shows the numbers the REST API returns for that range; the
alert of the short window is on the timeline; the page follows a store that is being written.
A failing test leaves a screenshot in test-artifacts/service/ (or $STREAMDQ_TEST_ARTIFACTS).
No browser is downloaded: chromium comes from apt (.ci/run installs it); under CI=true a
missing browser or Playwright fails the test.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import require_integration
from tests.integration.test_service_api import (
    DATASET,
    SHORT_WINDOW,
    T0,
    Served,
    ServiceStore,
    get,
    start_server,
    stop_server,
    store_once,
)

pytestmark = [pytest.mark.integration]

CHROMIUM = os.environ.get("STREAMDQ_CHROMIUM", "/usr/bin/chromium")
ARTIFACTS = Path(os.environ.get("STREAMDQ_TEST_ARTIFACTS", "test-artifacts")) / "service"


@pytest.fixture(scope="session")
def service_store(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> ServiceStore:
    return store_once(spark, tmp_path_factory)


@pytest.fixture(scope="module")
def served(service_store: ServiceStore) -> Iterator[Served]:
    server = start_server(service_store.path)
    try:
        yield server
    finally:
        stop_server(server)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as exc:
        require_integration("playwright", str(exc))
        return
    if not os.path.exists(CHROMIUM):
        require_integration("chromium", f"{CHROMIUM} not found (apt-get install -y chromium)")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        try:
            yield b
        finally:
            b.close()


@contextmanager
def console(browser: Any, url: str, name: str) -> Iterator[tuple[Any, list[str]]]:
    """A fresh page on ``url`` collecting console errors; a screenshot is kept when the body fails."""
    context = browser.new_context(viewport={"width": 1400, "height": 1800})
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(url)
        page.wait_for_function("Number(document.body.dataset.loaded || 0) >= 1", timeout=60_000)
        yield page, errors
    except BaseException:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        shot = ARTIFACTS / f"{name}.png"
        page.screenshot(path=str(shot), full_page=True)
        print(f"screenshot: {shot.resolve()}; console errors: {errors}")
        raise
    finally:
        context.close()


def _loads(page: Any) -> int:
    return int(page.evaluate("Number(document.body.dataset.loaded || 0)"))


def _wait_refresh(page: Any) -> None:
    before = _loads(page)
    page.wait_for_function(f"Number(document.body.dataset.loaded || 0) > {before}", timeout=60_000)


def test_console_loads_without_errors(browser: Any, served: Served) -> None:
    with console(browser, served.url + "/", "loads") as (page, errors):
        row = page.locator(f'#datasets tr[data-dataset="{DATASET}"]')
        assert row.count() == 1
        assert page.locator("#error").inner_text() == ""
        _wait_refresh(page)  # one refresh cycle later, still clean
        assert errors == []


def test_charts_render_with_marks(browser: Any, served: Served) -> None:
    with console(browser, served.url + "/", "marks") as (page, errors):
        assert _marks(page, "#timeline", "layer_0_marks", "path") >= 13  # a bar per window
        assert _marks(page, "#checks-chart", "layer_0_marks", "*") >= 5 * 11  # 5 constraints x closed windows
        assert _marks(page, "#quality-chart", "layer_0_marks", "path") == 1  # the score line
        assert _marks(page, "#quality-chart", "layer_1_marks", "path") >= 4  # a point per scored window
        assert errors == []


def _marks(page: Any, chart: str, group: str, element: str) -> int:
    """The drawn marks (SVG elements) of one named mark group of a vega chart, once there are any."""
    selector = f"{chart} svg g.role-mark.{group} > {element}"
    page.wait_for_function(f"document.querySelectorAll({json.dumps(selector)}).length > 0", timeout=30_000)
    return int(page.evaluate(f"document.querySelectorAll({json.dumps(selector)}).length"))


def _pick_aggregation(page: Any, field: str, name: str) -> None:
    page.select_option("#field", field)
    page.wait_for_function(
        f"document.querySelector('#merged-value').dataset.field === {json.dumps(field)}", timeout=30_000
    )
    value = page.evaluate(
        """(name) => [...document.querySelectorAll('#aggregation option')]
             .find(o => o.textContent.startsWith(name + ' ') || o.textContent === name).value""",
        name,
    )
    page.select_option("#aggregation", value)
    page.wait_for_function(
        f"document.querySelector('#merged-value').dataset.aggregation === {json.dumps(name)}", timeout=30_000
    )


def test_picking_a_range_shows_the_api_numbers(browser: Any, served: Served) -> None:
    with console(browser, served.url + "/", "range") as (page, errors):
        _pick_aggregation(page, "user", "ApproxCountDistinct")
        whole = json.loads(page.inner_text("#merged-value"))
        api_whole = get(served, f"/v1/source/{DATASET}/fields/user/aggregations/ApproxCountDistinct").json()
        assert whole == api_whole["data"]

        start, end = T0 + timedelta(minutes=1), T0 + timedelta(minutes=3)
        page.fill("#start", str(int(start.timestamp())))
        page.fill("#end", end.isoformat())
        page.click("#apply-range")
        page.wait_for_function(
            f"document.querySelector('#merged-value').dataset.start === '{int(start.timestamp())}'",
            timeout=30_000,
        )
        shown = json.loads(page.inner_text("#merged-value"))
        api = get(
            served,
            f"/v1/source/{DATASET}/fields/user/aggregations/ApproxCountDistinct",
            startTimestamp=int(start.timestamp()),
            endTimestamp=end.isoformat(),
        ).json()
        assert shown == api["data"] and api["windows"] == 2
        assert shown != whole  # the range changed the number

        _pick_aggregation(page, "status", "Histogram")
        shown = json.loads(page.inner_text("#merged-value"))
        api = get(
            served,
            f"/v1/source/{DATASET}/fields/status/aggregations/Histogram",
            startTimestamp=int(start.timestamp()),
            endTimestamp=end.isoformat(),
        ).json()
        assert shown == api["data"]
        assert _marks(page, "#agg-chart", "marks", "path") == len(api["data"])
        assert errors == []


def test_alert_is_on_the_timeline(browser: Any, served: Served) -> None:
    short = int((T0 + timedelta(minutes=SHORT_WINDOW)).timestamp())
    alerts = [a for a in get(served, f"/v1/datasets/{DATASET}/alerts").json() if a["timestamp"] == short]
    assert alerts
    with console(browser, served.url + "/", "alert") as (page, errors):
        assert _marks(page, "#timeline", "layer_1_marks", "line") >= len(alerts)
        items = page.locator("#timeline-alerts li")
        texts = [items.nth(i).inner_text() for i in range(items.count())]
        assert any((T0 + timedelta(minutes=SHORT_WINDOW)).strftime("%H:%M:%S") in t for t in texts), texts
        assert errors == []


def test_console_follows_a_store_being_written(
    browser: Any, service_store: ServiceStore, tmp_path: Path
) -> None:
    """A batch committed while the page is open shows up at the next refresh (no reload)."""
    from datetime import UTC, datetime

    from streamdq.state import DeltaStateStore

    from streamdq.report import BatchReport

    copy = tmp_path / "state"
    shutil.copytree(service_store.path, copy)
    server = start_server(copy)
    try:
        with console(browser, server.url + "/", "follows") as (page, errors):
            assert page.locator('#datasets tr[data-dataset="late"]').count() == 0
            store = DeltaStateStore(str(copy))
            report = BatchReport(
                dataset="late", query_id="q-late", batch_id=0, processing_time=datetime.now(UTC)
            )
            assert store.commit("q-late", 0, dataset="late", states=[], metrics=[], results=[], report=report)
            page.wait_for_selector('#datasets tr[data-dataset="late"]', timeout=30_000)
            assert errors == []
    finally:
        stop_server(server)


def test_dragging_on_the_timeline_picks_the_range(browser: Any, served: Served) -> None:
    with console(browser, served.url + "/", "brush") as (page, errors):
        _pick_aggregation(page, "user", "ApproxCountDistinct")
        _marks(page, "#timeline", "layer_0_marks", "path")
        box = page.locator("#timeline svg g.role-mark.layer_0_marks").bounding_box()
        assert box is not None
        y = box["y"] + box["height"] / 2
        page.mouse.move(box["x"] + box["width"] * 0.2, y)
        page.mouse.down()
        page.mouse.move(box["x"] + box["width"] * 0.7, y, steps=8)
        page.mouse.up()
        page.wait_for_function(
            "document.querySelector('#merged-value').dataset.start !== '' && "
            "document.querySelector('#merged-value').dataset.start === document.querySelector('#start').value",
            timeout=30_000,
        )
        start, end = page.input_value("#start"), page.input_value("#end")
        assert start < end  # ISO 8601 in the same zone compare as text
        api = get(
            served,
            f"/v1/source/{DATASET}/fields/user/aggregations/ApproxCountDistinct",
            startTimestamp=start,
            endTimestamp=end,
        ).json()
        assert json.loads(page.inner_text("#merged-value")) == api["data"]
        assert 0 < api["windows"] < 13
        assert errors == []


def test_pass_panel_shows_the_documents(browser: Any, served: Served) -> None:
    """The measure/check/pass panel lists the API's documents, newest first; the short window's
    document failed its expression check."""
    short = (T0 + timedelta(minutes=SHORT_WINDOW)).timestamp()
    docs = get(served, f"/v1/datasets/{DATASET}/pass", limit=50).json()
    with console(browser, served.url + "/", "pass") as (page, errors):
        rows = page.locator("#pass-docs tbody tr")
        assert rows.count() == len(docs)
        row = page.locator(f'#pass-docs tbody tr[data-scope="window"][data-time="{int(short)}"]')
        assert row.count() == 1
        cells = row.locator("td").all_inner_texts()
        assert cells[2] == "FAIL" and "enough rows" in cells[3]
        assert json.loads(cells[4]) == {"rows": 2}
        assert rows.first.get_attribute("data-scope") == docs[-1]["scope"]  # newest first
        assert errors == []
