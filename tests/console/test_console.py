"""The console as a person uses it, in a real headless Chromium against the session's app
served over HTTP: pages load without script errors, the live view shows a record posted over
HTTP within a second, pause holds lines back, a record's page shows its context, the view
an LLM gets and what changed between versions."""

from __future__ import annotations

import time
import uuid

import httpx
import pytest
from playwright.async_api import TimeoutError as PlaywrightTimeout
from tests.browser import Browsing
from tests.waiting import eventually

PAGES = {
    "#/live": "#live-status[data-state=live]",
    "#/records": "#records table",
    "#/health": "#readiness li",
    "#/agents": '#agents table, #agents p:text("no agents defined")',
    "#/graph": "circle.node",
}


async def _post(client: httpx.AsyncClient, title: str, **context: object) -> str:
    body = {"schema_name": "note.v1", "title": title, "tags": ["console"], "context": context}
    response = await client.post("/breadcrumbs", json=body)
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


async def _live(browsing: Browsing, live_url: str, client: httpx.AsyncClient) -> None:
    """The live view, on the feed: a first record shows up (the stream is joined)."""
    page = browsing.page
    await page.goto(f"{live_url}/#/live")
    await page.wait_for_selector("#live-status[data-state=live]")

    async def joined() -> bool:
        first = await _post(client, f"warm-up {uuid.uuid4()}")
        await page.wait_for_selector(f"li[data-id='{first}']", timeout=1000)
        return True

    await eventually(joined, timeout=20, tolerate=(PlaywrightTimeout,))


@pytest.mark.parametrize(("route", "content"), sorted(PAGES.items()))
async def test_each_page_loads_without_script_errors(
    browsing: Browsing, live_url: str, client: httpx.AsyncClient, route: str, content: str
) -> None:
    await _post(client, "a record so that every list has a row")
    await browsing.page.goto(f"{live_url}/{route}")
    await browsing.page.wait_for_selector(content)
    assert browsing.errors == []


async def test_a_record_posted_over_http_is_on_the_live_view_within_a_second(
    browsing: Browsing, live_url: str, client: httpx.AsyncClient, worker: None
) -> None:
    await _live(browsing, live_url, client)
    started = time.perf_counter()
    record = await _post(client, "seen live")
    line = await browsing.page.wait_for_selector(f"li[data-id='{record}']", timeout=1000)
    elapsed = time.perf_counter() - started
    assert elapsed < 1.0
    assert "seen live" in await line.inner_text()
    await browsing.page.click(f"li[data-id='{record}'] a")
    await browsing.page.wait_for_selector("#raw-context")
    assert browsing.errors == []


async def test_pause_holds_lines_back_and_resume_shows_them_in_order(
    browsing: Browsing, live_url: str, client: httpx.AsyncClient
) -> None:
    await _live(browsing, live_url, client)
    page = browsing.page
    await page.click("#pause")
    held = [await _post(client, f"held {n}") for n in range(3)]
    await page.wait_for_selector("#live-status:has-text('3 held')")
    assert await page.locator(f"li[data-id='{held[0]}']").count() == 0
    await page.click("#pause")
    await page.wait_for_selector(f"li[data-id='{held[2]}']")
    ids = await page.eval_on_selector_all("#events li", "items => items.map(i => i.dataset.id)")
    assert ids[:3] == held[::-1]  # newest on top


async def test_a_record_page_shows_its_context_its_view_and_what_each_version_changed(
    browsing: Browsing, live_url: str, client: httpx.AsyncClient
) -> None:
    record = await _post(client, "versioned", text="first", colour="red")
    patch = {"context": {"text": "second", "size": 3}}
    response = await client.patch(f"/breadcrumbs/{record}", json=patch, headers={"If-Match": "1"})
    assert response.status_code == 200, response.text
    page = browsing.page
    await page.goto(f"{live_url}/#/records/{record}")
    raw = await (await page.wait_for_selector("#raw-context")).inner_text()
    assert '"text": "second"' in raw
    assert await page.locator("#rendered-context").count() == 1
    history = await page.locator("#record table").last.inner_text()
    assert "+size" in history and "-colour" in history and "~text" in history
    assert browsing.errors == []


async def test_search_finds_a_record_by_its_words(
    browsing: Browsing, live_url: str, client: httpx.AsyncClient
) -> None:
    word = f"zebra{uuid.uuid4().hex[:8]}"
    record = await _post(client, f"about {word}", text=f"the {word} crossed the road")
    page = browsing.page
    await page.goto(f"{live_url}/#/records")
    await page.fill("input[name=q]", word)
    await page.click("form.filters button[type=submit]")
    await page.wait_for_selector(f"#records a[href='#/records/{record}']")
    assert browsing.errors == []


async def test_an_unknown_record_says_so_on_the_page(browsing: Browsing, live_url: str) -> None:
    await browsing.page.goto(f"{live_url}/#/records/{uuid.uuid4()}")
    alert = await browsing.page.wait_for_selector("[role=alert]")
    assert "404" in await alert.inner_text()
