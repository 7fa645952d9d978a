"""Create, read, update, delete and history over HTTP against the real database."""

from __future__ import annotations

import uuid

import httpx
from sqlalchemy.ext.asyncio import AsyncEngine
from tests.dbcheck import outbox_events
from tests.factories import breadcrumb


async def test_create_returns_id_and_version(client: httpx.AsyncClient) -> None:
    response = await client.post("/breadcrumbs", json=breadcrumb())
    assert response.status_code == 201
    body = response.json()
    assert uuid.UUID(body["id"]) and body["version"] == 1


async def test_get_returns_the_context_view(client: httpx.AsyncClient) -> None:
    created = (await client.post("/breadcrumbs", json=breadcrumb(title="Viewed"))).json()
    response = await client.get(f"/breadcrumbs/{created['id']}")
    assert response.status_code == 200
    view = response.json()
    assert view["title"] == "Viewed"
    assert view["context"] == breadcrumb()["context"]
    assert view["schema_name"] == "note.v1" and view["version"] == 1
    assert response.headers["ETag"] == '"1"'
    assert "embedding" not in view


async def test_full_has_embedding_keywords_and_checksum(client: httpx.AsyncClient) -> None:
    created = (await client.post("/breadcrumbs", json=breadcrumb(tags=["deploy", "draft"]))).json()
    full = (await client.get(f"/breadcrumbs/{created['id']}/full")).json()
    assert len(full["embedding"]) == 384
    assert abs(sum(x * x for x in full["embedding"]) - 1.0) < 1e-4
    assert full["entity_keywords"][0] == "deploy"  # tag pointer first, state tag dropped
    assert "draft" not in full["entity_keywords"]
    assert "staging" in full["entity_keywords"]
    assert full["checksum"].startswith("sha256:") and full["size_bytes"] > 0
    assert "How the staging deploy went" in full["llm_text"]
    assert "database migration" in full["llm_text"]  # the context is embedded, not just the title
    assert full["visibility"] == "team" and full["sensitivity"] == "low"


async def test_unknown_id_is_404(client: httpx.AsyncClient) -> None:
    for path in ("", "/full", "/history"):
        response = await client.get(f"/breadcrumbs/{uuid.uuid4()}{path}")
        assert response.status_code == 404, path
        assert response.json()["error"] == "not_found"


async def test_patch_bumps_version_and_writes_history(client: httpx.AsyncClient) -> None:
    created = (await client.post("/breadcrumbs", json=breadcrumb())).json()
    url = f"/breadcrumbs/{created['id']}"
    response = await client.patch(url, json={"title": "Renamed"}, headers={"If-Match": '"1"'})
    assert response.status_code == 200
    assert response.json()["version"] == 2
    assert (await client.get(url)).json()["title"] == "Renamed"
    history = (await client.get(f"{url}/history")).json()
    assert [entry["version"] for entry in history] == [2, 1]
    assert [entry["change"] for entry in history] == ["update", "create"]
    assert history[1]["title"] == "Deploy notes"


async def test_patch_with_stale_if_match_is_412(client: httpx.AsyncClient) -> None:
    created = (await client.post("/breadcrumbs", json=breadcrumb())).json()
    url = f"/breadcrumbs/{created['id']}"
    await client.patch(url, json={"title": "v2"})
    response = await client.patch(url, json={"title": "stale"}, headers={"If-Match": "1"})
    assert response.status_code == 412
    assert response.json()["error"] == "version_mismatch"
    assert (await client.get(url)).json()["title"] == "v2"


async def test_patch_can_clear_description_but_not_title(client: httpx.AsyncClient) -> None:
    created = (await client.post("/breadcrumbs", json=breadcrumb())).json()
    url = f"/breadcrumbs/{created['id']}"
    assert (await client.patch(url, json={"description": None})).status_code == 200
    assert (await client.get(url)).json()["description"] is None
    assert (await client.patch(url, json={"title": None})).status_code == 422


async def test_delete_removes_and_emits_an_event(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    created = (await client.post("/breadcrumbs", json=breadcrumb())).json()
    url = f"/breadcrumbs/{created['id']}"
    assert (await client.delete(url)).status_code == 200
    assert (await client.get(url)).status_code == 404
    assert (await client.delete(url)).status_code == 404
    subjects = [subject for subject, _ in await outbox_events(db, created["id"])]
    assert subjects == [f"bc.{created['id']}.created", f"bc.{created['id']}.deleted"]


async def test_every_change_writes_an_outbox_event(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    created = (await client.post("/breadcrumbs", json=breadcrumb())).json()
    url = f"/breadcrumbs/{created['id']}"
    await client.patch(url, json={"title": "t2"})
    await client.post(f"{url}/tags/add", json={"tags": ["x"]})
    await client.post(f"{url}/context/merge", json={"context": {"more": 1}})
    rows = [payload for _, payload in await outbox_events(db, created["id"])]
    assert [row["type"] for row in rows] == ["breadcrumb.created"] + ["breadcrumb.updated"] * 3
    assert [row["version"] for row in rows] == [1, 2, 3, 4]
    last = rows[-1]
    assert last["context"]["more"] == 1 and "x" in last["tags"] and last["title"] == "t2"
    assert set(last) >= {"event_id", "owner_id", "schema_name", "updated_at"}


async def test_ttl_in_the_past_hides_the_record(client: httpx.AsyncClient) -> None:
    body = breadcrumb(ttl="2001-01-01T00:00:00Z")
    created = (await client.post("/breadcrumbs", json=body)).json()
    assert (await client.get(f"/breadcrumbs/{created['id']}")).status_code == 404
