"""Races: idempotent creates, If-Match compare-and-set, concurrent tag operations."""

from __future__ import annotations

import asyncio
import uuid

import httpx
from fastapi import FastAPI
from sqlalchemy import text
from tests.factories import breadcrumb

from cairn.breadcrumbs.schemas import BreadcrumbCreate
from cairn.breadcrumbs.service import BreadcrumbWriter
from cairn.db.engine import tenant_session
from cairn.db.tenants import ensure_tenant
from cairn.principal import Principal


async def _count_titled(app: FastAPI, title: str) -> int:
    async with app.state.resources.system_engine.connect() as connection:
        query = text("SELECT count(*) FROM breadcrumbs WHERE title = :t")
        return int((await connection.execute(query, {"t": title})).scalar_one())


async def test_idempotent_create_replays_the_original(
    client: httpx.AsyncClient, app: FastAPI
) -> None:
    title = f"idem {uuid.uuid4()}"
    headers = {"Idempotency-Key": f"key-{uuid.uuid4()}"}
    first = await client.post("/breadcrumbs", json=breadcrumb(title=title), headers=headers)
    again = await client.post("/breadcrumbs", json=breadcrumb(title=title), headers=headers)
    assert first.status_code == 201 and again.status_code == 201
    assert again.json() == first.json()
    assert await _count_titled(app, title) == 1


async def test_idempotency_key_with_another_body_is_409(
    client: httpx.AsyncClient, app: FastAPI
) -> None:
    title = f"idem {uuid.uuid4()}"
    headers = {"Idempotency-Key": f"key-{uuid.uuid4()}"}
    await client.post("/breadcrumbs", json=breadcrumb(title=title), headers=headers)
    other = await client.post("/breadcrumbs", json=breadcrumb(title=title + "!"), headers=headers)
    assert other.status_code == 409 and other.json()["error"] == "conflict"
    assert await _count_titled(app, title + "!") == 0


async def test_concurrent_creates_with_one_key_make_one_record(
    client: httpx.AsyncClient, app: FastAPI
) -> None:
    title = f"race {uuid.uuid4()}"
    headers = {"Idempotency-Key": f"key-{uuid.uuid4()}"}
    responses = await asyncio.gather(
        *(
            client.post("/breadcrumbs", json=breadcrumb(title=title), headers=headers)
            for _ in range(12)
        )
    )
    assert {r.status_code for r in responses} == {201}
    assert len({r.json()["id"] for r in responses}) == 1
    assert await _count_titled(app, title) == 1


async def test_idempotency_keys_are_per_tenant(app: FastAPI) -> None:
    resources = app.state.resources
    other = uuid.uuid4()
    await ensure_tenant(resources.engine, other, f"tenant-{other}")
    body = BreadcrumbCreate.model_validate(breadcrumb(title=f"tenant {other}"))
    ids = []
    for owner in (resources.default_tenant, other):
        scoped = tenant_session(resources.session_factory, owner)
        async with scoped as session, session.begin():
            principal = Principal(owner, "t")
            limits = resources.settings.limits
            writer = BreadcrumbWriter(
                session, resources.embedder, limits, principal, resources.transforms
            )
            ids.append((await writer.create(body, "shared-key")).id)
    assert ids[0] != ids[1]


async def test_concurrent_patches_with_one_if_match_exactly_one_wins(
    client: httpx.AsyncClient,
) -> None:
    created = (await client.post("/breadcrumbs", json=breadcrumb())).json()
    url = f"/breadcrumbs/{created['id']}"
    responses = await asyncio.gather(
        *(client.patch(url, json={"title": f"w{i}"}, headers={"If-Match": "1"}) for i in range(10))
    )
    statuses = sorted(r.status_code for r in responses)
    assert statuses == [200] + [412] * 9
    winner = next(r for r in responses if r.status_code == 200)
    assert winner.json()["version"] == 2
    history = (await client.get(f"{url}/history")).json()
    assert [entry["version"] for entry in history] == [2, 1]


async def test_concurrent_tag_adds_lose_nothing(client: httpx.AsyncClient) -> None:
    created = (await client.post("/breadcrumbs", json=breadcrumb(tags=[]))).json()
    url = f"/breadcrumbs/{created['id']}"
    tags = [f"t{i}" for i in range(10)]
    responses = await asyncio.gather(
        *(client.post(f"{url}/tags/add", json={"tags": [tag]}) for tag in tags)
    )
    assert {r.status_code for r in responses} == {200}
    view = (await client.get(url)).json()
    assert sorted(view["tags"]) == sorted(tags) and view["version"] == 11


async def test_deleting_linked_records_at_once_never_deadlocks(
    worker: None, client: httpx.AsyncClient, app: FastAPI
) -> None:
    """Records of one session are linked both ways (temporal, tag edges) while the worker is
    still adding edges; deleting them concurrently used to deadlock (500)."""
    statuses: list[int] = []
    for round_ in range(25):
        session = f"session:{uuid.uuid4().hex[:8]}"
        shared = f"race:{uuid.uuid4().hex[:6]}"
        ids = [
            (await client.post("/breadcrumbs", json=breadcrumb(tags=[session, shared]))).json()[
                "id"
            ]
            for _ in range(4)
        ]
        await asyncio.sleep(0.02 * (round_ % 5))  # some deletes meet the worker's edge writes
        deletes = await asyncio.gather(*(client.delete(f"/breadcrumbs/{i}") for i in ids[:3]))
        statuses += [response.status_code for response in deletes]
    assert set(statuses) == {200}
