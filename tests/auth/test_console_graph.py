"""The Graph page with CAIRN_AUTH=jwt, in a real headless Chromium: without a token the
API's 401 shows in place, another tenant's token gets a 404 for the record, and the owner's
token (entered in the token field) draws it."""

from __future__ import annotations

import uuid

import httpx
from tests.auth.conftest import Mint, bearer
from tests.browser import Browsing, browser, browsing
from tests.factories import breadcrumb

__all__ = ["browser", "browsing"]  # the browser's fixtures, for this directory's tests


async def _show(browsing: Browsing, url: str, token: str | None) -> str:
    page = browsing.page
    await page.goto(url)
    if token is not None:
        await page.fill("#token", token)
        await page.click("#token-form button")
    found = await page.wait_for_selector("#graph .error, svg.graph circle.node")
    return await found.evaluate("el => el.matches('.error') ? el.textContent : 'drawn'")


async def test_the_graph_page_shows_the_apis_refusals_in_place(
    browsing: Browsing, jwt_live_url: str, jwt_client: httpx.AsyncClient, mint: Mint
) -> None:
    owner = mint(owner_id=uuid.uuid4(), roles=["subscriber", "emitter"])
    created = await jwt_client.post("/breadcrumbs", json=breadcrumb(), headers=bearer(owner))
    assert created.status_code == 201, created.text
    url = f"{jwt_live_url}/#/graph/{created.json()['id']}"
    assert (await _show(browsing, url, None)).startswith("401")
    stranger = mint(owner_id=uuid.uuid4(), roles=["subscriber"])
    assert (await _show(browsing, url, stranger)).startswith("404")
    assert await _show(browsing, url, owner) == "drawn"
    await browsing.page.wait_for_selector("g.debug-paths[data-live]", state="attached")
    # The browser logs each refused request; nothing else may have gone wrong.
    refused = "Failed to load resource: the server responded with a status of 40"
    assert [e for e in browsing.errors if not e.startswith(refused)] == []
