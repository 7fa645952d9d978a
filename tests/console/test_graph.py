"""The Graph page in a real headless Chromium: the route's records on screen, a context's
selected records highlighted, a click opening a record, and a debug path driven through the
worker drawn over the records it passed, moving from active to resolved as it happens."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence
from typing import Any

import httpx
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncEngine
from tests.browser import Browsing
from tests.factories import breadcrumb
from tests.paths.test_tracking import FAILING, GREEN, _edit, _handled, _paths_of, _record
from tests.waiting import eventually

from cairn.db.engine import tenant_session
from cairn.edges.repository import upsert_edges

RESOLVED_GREEN = "rgb(46, 125, 50)"  # console.css --ok
PAGE_PARAMS = {"depth": 2, "limit": 200}  # what the page asks for around a record


async def _post(client: httpx.AsyncClient, title: str, marker: str) -> uuid.UUID:
    response = await client.post("/breadcrumbs", json=breadcrumb(title=title, tags=[marker]))
    assert response.status_code == 201, response.text
    return uuid.UUID(response.json()["id"])


async def _link(app: FastAPI, edges: Sequence[tuple[uuid.UUID, uuid.UUID, int, float]]) -> None:
    resources = app.state.resources
    owner = resources.default_tenant
    async with tenant_session(resources.session_factory, owner) as session, session.begin():
        await upsert_edges(session, owner, edges)


async def _graph(client: httpx.AsyncClient, **params: object) -> dict[str, Any]:
    response = await client.get("/graph", params=params)
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


async def _drawn(browsing: Browsing, selector: str) -> set[str]:
    await browsing.page.wait_for_selector("svg.graph[data-settled]")
    found = await browsing.page.eval_on_selector_all(selector, "els => els.map(e => e.dataset.id)")
    return set(found)


async def test_the_page_draws_the_routes_records_and_a_click_opens_one(
    browsing: Browsing, live_url: str, client: httpx.AsyncClient, app: FastAPI, marker: str
) -> None:
    a, b, c, d = [await _post(client, f"linked {n}", marker) for n in range(4)]
    await _link(app, [(a, b, 0, 1.0), (b, c, 2, 0.5), (c, d, 3, 0.9)])
    page = browsing.page
    expected: dict[str, Any] = {}

    async def drawn_as_served() -> bool:
        """The worker may still be adding edges (tags, meaning): compare once it is done."""
        expected.update(await _graph(client, around=str(b), **PAGE_PARAMS))
        await page.goto(f"{live_url}/#/graph/{b}")
        await page.reload()
        drawn = await _drawn(browsing, "circle.node")
        edges = await page.locator("g.edges line.edge").count()
        return drawn == {node["id"] for node in expected["nodes"]} and edges == len(
            expected["edges"]
        )

    await eventually(drawn_as_served, timeout=20)
    assert {a, b, c} <= {uuid.UUID(node["id"]) for node in expected["nodes"]}
    assert await page.locator("g.edges line.edge.causal").count() >= 1
    assert await page.locator("#graph-legend li[data-schema='note.v1']").count() == 1
    await browsing.page.click(f"circle.node[data-id='{c}']")
    await browsing.page.wait_for_selector("#raw-context")
    assert browsing.page.url.endswith(f"#/records/{c}")
    assert browsing.errors == []


async def test_a_context_graph_highlights_the_selected_records(
    browsing: Browsing, live_url: str, client: httpx.AsyncClient, app: FastAPI, marker: str
) -> None:
    a, b, c = [await _post(client, f"context part {n}", marker) for n in range(3)]
    await _link(app, [(a, b, 0, 1.0), (b, c, 0, 1.0)])
    agent_id = f"graph-page-{marker[5:]}"
    # Triggered by a tag no record has, so that the worker never assembles (and rewrites)
    # this context: the page shows the assembly made here.
    never = f"{marker}-never"
    agent = {
        "schema_name": "agent.def.v1", "title": "graph page agent", "tags": [marker],
        "context": {"agent_id": agent_id, "context_trigger": {"any_tags": [never]}},
    }  # fmt: skip
    assert (await client.post("/breadcrumbs", json=agent)).status_code == 201
    body = {"trigger_id": str(a), "agent_id": agent_id}
    assembled = await client.post("/contexts/assemble", json=body)
    assert assembled.status_code == 200, assembled.text
    context_id = assembled.json()["id"]
    selected = {item["record_id"] for item in assembled.json()["context"]["explain"]["selected"]}
    assert len(selected) >= 2

    # From the context record's own page, its Graph link.
    await browsing.page.goto(f"{live_url}/#/records/{context_id}")
    await browsing.page.click("#graph-link")
    await browsing.page.wait_for_url(f"**/#/graph/context/{context_id}")
    assert await _drawn(browsing, "circle.node.selected") == selected
    status = await browsing.page.inner_text("#graph-status")
    assert f"{len(selected)} selected" in status
    assert browsing.errors == []


async def test_a_debug_path_is_drawn_and_follows_the_stream_to_resolved(
    browsing: Browsing,
    live_url: str,
    client: httpx.AsyncClient,
    db: AsyncEngine,
    worker: None,
) -> None:
    session = f"session:{uuid.uuid4().hex[:8]}"
    first = await _record(client, session, dict(FAILING))
    await _handled(db, first)
    page = browsing.page
    await page.goto(f"{live_url}/#/graph/{first}")
    await page.wait_for_selector("path.debug-path.active", state="attached")
    await page.wait_for_selector("g.debug-paths[data-live]", state="attached")
    assert await page.is_checked("#paths-toggle")

    for context in [_edit(10), FAILING, _edit(12), GREEN, GREEN, GREEN]:
        source = await _record(client, session, dict(context))
        await _handled(db, source)
    await _handled(db, source, count=2)  # the last success resolves the path
    await page.wait_for_selector(
        "path.debug-path.resolved", state="attached"
    )  # from the stream, no reload
    assert await page.locator("path.debug-path").count() == 1

    (path,) = await _paths_of(db, session)
    listed = await client.get(
        "/breadcrumbs",
        params={"schema_name": "debug.waypoint.v1", "tag": f"path:{path.id}",
                "include_context": "true", "limit": 1000},
    )  # fmt: skip
    graph = await _graph(client, around=first, **PAGE_PARAMS)
    on_graph = {node["id"] for node in graph["nodes"]}
    markers = [w for w in listed.json() if w["context"]["source_record_id"] in on_graph]
    assert len(markers) >= 2  # the first record's error and more through its neighbours

    await page.reload()
    await page.wait_for_selector("path.debug-path.resolved", state="attached")

    async def all_markers() -> bool:
        return await page.locator("circle.waypoint").count() == len(markers)

    await eventually(all_markers, timeout=10)
    assert await page.locator("path.debug-path").count() == 1
    assert await page.locator("circle.waypoint.error").count() == sum(
        w["context"]["type"] == "error" for w in markers
    )
    colour = await page.eval_on_selector("path.debug-path", "el => getComputedStyle(el).stroke")
    assert colour == RESOLVED_GREEN
    assert browsing.errors == []


async def test_the_graph_tab_opens_the_graph_around_the_newest_record(
    browsing: Browsing, live_url: str, client: httpx.AsyncClient, marker: str
) -> None:
    await _post(client, "a record to start from", marker)
    page = browsing.page
    await page.goto(f"{live_url}/#/graph")
    await page.wait_for_url("**/#/graph/*-*")
    centre = page.url.rsplit("/", 1)[1]
    assert await _drawn(browsing, "circle.node.centre") == {centre}
    assert await page.locator("#nav a.active").inner_text() == "Graph"
    assert browsing.errors == []


async def test_only_the_newest_request_draws_when_answers_cross(
    browsing: Browsing, live_url: str, client: httpx.AsyncClient, app: FastAPI, marker: str
) -> None:
    """Depth 3, then at once depth 1: the first answer held back until after the second
    must not replace it (it drew the graph no longer asked for)."""
    titles = ["harbour crane schedule", "violin string tension", "alpine soil bacteria", "tax"]
    a, b, c, d = [
        uuid.UUID(
            (
                await client.post("/breadcrumbs", json=breadcrumb(title=t, tags=[f"{marker}-{n}"]))
            ).json()["id"]
        )
        for n, t in enumerate(titles)
    ]
    await _link(app, [(a, b, 0, 1.0), (b, c, 0, 1.0), (c, d, 0, 1.0)])
    page = browsing.page
    await page.goto(f"{live_url}/#/graph/{a}")
    await page.wait_for_selector("svg.graph[data-settled]")
    release = asyncio.Event()
    held: list[str] = []
    finished: list[str] = []
    page.on(
        "requestfinished",
        lambda request: finished.append(request.url) if "depth=3" in request.url else None,
    )

    async def hold_depth_three(route: Any) -> None:
        if "depth=3" in route.request.url:
            held.append(route.request.url)
            await release.wait()  # answered only once the depth-1 graph is on the page
        await route.continue_()

    await page.route("**/graph?*", hold_depth_three)
    await page.select_option("select[name=depth]", "3")
    await page.select_option("select[name=depth]", "1")
    await eventually(lambda: held)
    await page.wait_for_selector("#graph-status:not(:text('loading'))")
    release.set()
    await eventually(lambda: finished)
    # The page's own tasks for that answer (its body read, then a draw or not): two frames.
    await page.evaluate(
        "() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))"
    )
    assert held, "the depth-3 request was not held back"
    near = {node["id"] for node in (await _graph(client, around=str(a), depth=1))["nodes"]}
    far = {node["id"] for node in (await _graph(client, around=str(a), depth=3))["nodes"]}
    assert str(d) in far and str(d) not in near  # the two answers differ
    drawn = await page.eval_on_selector_all("circle.node", "els => els.map(e => e.dataset.id)")
    assert set(drawn) == near
    assert browsing.errors == []
