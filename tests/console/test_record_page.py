"""A record's edges and processing state: the read-only routes behind its page
(``/breadcrumbs/{id}/edges``, ``/breadcrumbs/{id}/processing``) and the page itself in a real
headless Chromium, edges typed and clickable, each stage's state shown."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

import httpx
from fastapi import FastAPI
from tests.browser import Browsing
from tests.factories import breadcrumb
from tests.waiting import eventually

from cairn.db.engine import tenant_session
from cairn.edges.repository import upsert_edges
from cairn.processing.stages import STAGES

CAUSAL, TEMPORAL, TAG, SEMANTIC = 0, 1, 2, 3


async def _post(client: httpx.AsyncClient, title: str, marker: str) -> uuid.UUID:
    response = await client.post("/breadcrumbs", json=breadcrumb(title=title, tags=[marker]))
    assert response.status_code == 201, response.text
    return uuid.UUID(response.json()["id"])


async def _link(app: FastAPI, edges: Sequence[tuple[uuid.UUID, uuid.UUID, int, float]]) -> None:
    resources = app.state.resources
    owner = resources.default_tenant
    async with tenant_session(resources.session_factory, owner) as session, session.begin():
        await upsert_edges(session, owner, edges)


async def _get(client: httpx.AsyncClient, url: str, **params: object) -> dict[str, Any]:
    response = await client.get(url, params=params)
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


async def test_edges_lists_a_records_edges_by_direction_with_the_other_end_named(
    client: httpx.AsyncClient, app: FastAPI, marker: str
) -> None:
    a, b, c = [await _post(client, f"edge {n} {marker}", marker) for n in range(3)]
    await _link(app, [(a, b, CAUSAL, 1.0), (b, c, TEMPORAL, 0.5), (c, b, SEMANTIC, 0.8)])
    edges = await _get(client, f"/breadcrumbs/{b}/edges")
    outgoing = {(e["id"], e["kind"]) for e in edges["outgoing"]}
    incoming = {(e["id"], e["kind"]) for e in edges["incoming"]}
    assert (str(c), "temporal") in outgoing and (str(a), "causal") in incoming
    assert (str(c), "semantic") in incoming
    named = next(e for e in edges["incoming"] if e["id"] == str(a))
    assert named["title"] == f"edge 0 {marker}" and named["schema_name"] == "note.v1"
    assert named["weight"] == 1.0
    # Strongest kinds first, at most `limit` a direction.
    one = await _get(client, f"/breadcrumbs/{b}/edges", limit=1)
    assert [e["kind"] for e in one["incoming"]] == ["causal"] and one["truncated"] is True


async def test_edges_and_processing_of_an_unknown_record_are_404(
    client: httpx.AsyncClient,
) -> None:
    for part in ("edges", "processing"):
        response = await client.get(f"/breadcrumbs/{uuid.uuid4()}/{part}")
        assert response.status_code == 404, response.text
    assert (await client.get("/breadcrumbs/not-an-id/edges")).status_code == 422
    response = await client.get(f"/breadcrumbs/{uuid.uuid4()}/edges", params={"limit": 0})
    assert response.status_code == 422


async def test_processing_shows_each_stage_as_the_worker_gets_to_it(
    client: httpx.AsyncClient, worker: None, marker: str
) -> None:
    record = await _post(client, f"processed {marker}", marker)
    first = await _get(client, f"/breadcrumbs/{record}/processing")
    assert [s["stage"] for s in first["stages"]] == list(STAGES)
    states = {s["stage"]: s for s in first["stages"]}
    assert states["embedded"]["state"] == "done" and states["embedded"]["done_at"]

    async def edged() -> bool:
        stages = (await _get(client, f"/breadcrumbs/{record}/processing"))["stages"]
        return any(s["stage"] == "edged" and s["state"] == "done" for s in stages)

    await eventually(edged, timeout=15)


async def test_the_record_page_shows_its_processing_and_clickable_typed_edges(
    browsing: Browsing, live_url: str, client: httpx.AsyncClient, app: FastAPI, marker: str
) -> None:
    a, b = [await _post(client, f"page {n} {marker}", marker) for n in range(2)]
    await _link(app, [(a, b, CAUSAL, 1.0)])
    page = browsing.page
    await page.goto(f"{live_url}/#/records/{b}")
    await page.wait_for_selector("#processing table")
    embedded = page.locator("#processing [data-stage=embedded]")
    assert await embedded.inner_text() == "done"
    assert await page.locator("#processing tbody tr").count() == len(STAGES)
    # The worker may have linked the two by tag or meaning as well: the causal row is there.
    row = page.locator(f"#edges-in tr:has(a[href='#/records/{a}']):has(.edge-kind.causal)")
    assert await row.count() == 1
    link = row.locator("a")
    assert await link.inner_text() == f"page 0 {marker}"
    await link.click()
    await page.wait_for_selector(f"#edges-out a[href='#/records/{b}']")
    assert page.url.endswith(f"#/records/{a}")
    assert browsing.errors == []
