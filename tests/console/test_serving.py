"""How the console's files are served: under a prefix that changes with their content, cached
for good there, while the page naming the prefix is revalidated every time; d3 only with the
graph page."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
from tests.browser import Browsing

from cairn.console import routes

ASSET = re.compile(r'(?:src|href)="(/console/[^"]+)"')


async def test_the_page_names_its_assets_under_a_versioned_prefix_cached_for_good(
    client: httpx.AsyncClient,
) -> None:
    page = await client.get("/")
    assert page.headers["Cache-Control"] == "no-cache"
    assets = ASSET.findall(page.text)
    prefix = f"/console/{routes.version()}/"
    assert assets and all(url.startswith(prefix) for url in assets), assets
    for url in assets:
        response = await client.get(url)
        assert response.status_code == 200, url
        assert response.headers["Cache-Control"] == routes.IMMUTABLE
    plain = await client.get("/console/js/app.js")
    assert plain.status_code == 200 and plain.headers["Cache-Control"] == "no-cache"
    assert (await client.get("/console/0123456789abcdef/js/app.js")).status_code == 404


def test_the_version_changes_with_any_file(tmp_path: Path) -> None:
    (tmp_path / "js").mkdir()
    (tmp_path / "js" / "a.js").write_text("export const a = 1;\n")
    before = routes.version(tmp_path)
    assert routes.version(tmp_path) == before
    (tmp_path / "js" / "a.js").write_text("export const a = 2;\n")
    changed = routes.version(tmp_path)
    (tmp_path / "b.css").write_text("")
    assert len({before, changed, routes.version(tmp_path)}) == 3


def test_every_preloaded_module_exists_and_d3_is_not_on_the_page() -> None:
    html = (routes.STATIC / "index.html").read_text()
    preloaded = re.findall(r'rel="modulepreload" href="/console/([^"]+)"', html)
    assert preloaded and all((routes.STATIC / path).is_file() for path in preloaded)
    assert "vendor/d3" not in html


async def test_d3_is_loaded_by_the_graph_page_only(
    browsing: Browsing, live_url: str, client: httpx.AsyncClient
) -> None:
    body = {"schema_name": "note.v1", "title": "graph me", "tags": ["console"], "context": {}}
    assert (await client.post("/breadcrumbs", json=body)).status_code == 201
    page = browsing.page
    await page.goto(f"{live_url}/#/records")
    await page.wait_for_selector("#records table")
    assert await page.evaluate("() => typeof window.d3") == "undefined"
    await page.goto(f"{live_url}/#/graph")
    await page.wait_for_selector("circle.node")
    assert await page.evaluate("() => typeof window.d3.forceSimulation") == "function"
    assert browsing.errors == []
