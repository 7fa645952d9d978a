"""``GET /coverage`` keeps a tenant's figures until something they count changes: asked
again with nothing changed it answers the same count; a write, a processing state changed
without an event, an edge written past the API, an expired ``ttl`` or the age bound each
have it count again."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import httpx
from sqlalchemy import text
from tests.factories import breadcrumb
from tests.waiting import eventually

from cairn import processing
from cairn.db.engine import tenant_session
from cairn.processing.coverage_cache import CoverageCache


async def _coverage(client: httpx.AsyncClient) -> dict[str, Any]:
    response = await client.get("/coverage")
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


async def _post(client: httpx.AsyncClient, **fields: Any) -> str:
    response = await client.post("/breadcrumbs", json=breadcrumb(**fields))
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


async def _settled(app: Any, tenant: uuid.UUID, record: str) -> None:
    """The record's edging done, as a worker would do it (one may run for other tests):
    then a worker's own edging, later, changes nothing the figures count."""
    sessions = app.state.resources.session_factory
    async with tenant_session(sessions, tenant) as session, session.begin():
        await processing.mark_done(session, tenant, [uuid.UUID(record)], processing.EDGED)


async def test_unchanged_figures_are_not_counted_again_and_a_write_is(
    app: Any, client: httpx.AsyncClient, tenant: uuid.UUID
) -> None:
    await _settled(app, tenant, await _post(client, title="One", tags=[]))
    first = await _coverage(client)
    assert first["records"] == 1 and first["computed_at"]
    assert await _coverage(client) == first  # the same count, computed_at and all
    await _post(client, title="Two", tags=[])
    after = await _coverage(client)
    assert after["records"] == 2 and after["computed_at"] > first["computed_at"]


async def test_a_processing_state_changed_without_an_event_is_counted(
    app: Any, client: httpx.AsyncClient, tenant: uuid.UUID
) -> None:
    record = uuid.UUID(await _post(client, title="Chunky", tags=[]))
    first = await _coverage(client)
    assert first["stages"]["chunked"]["failed"] == 0
    sessions = app.state.resources.session_factory
    async with tenant_session(sessions, tenant) as session, session.begin():
        await processing.mark_failed(session, tenant, record, processing.CHUNKED, "disk full")
    after = await _coverage(client)
    assert after["stages"]["chunked"]["failed"] == 1
    assert after["errors"] == [{"stage": "chunked", "error": "disk full", "records": 1}]


async def test_an_edge_written_past_the_api_moves_the_islands(
    app: Any, client: httpx.AsyncClient, tenant: uuid.UUID
) -> None:
    # Nothing alike, no tags, no session: a worker (one may run for other tests) links neither.
    one = await _post(client, title="Quartz", tags=[], context={"text": "Quartz is a mineral."})
    two = await _post(client, title="Tuba", tags=[], context={"text": "A tuba plays low notes."})
    assert (await _coverage(client))["islands"]["count"] == 2
    sessions = app.state.resources.session_factory
    async with tenant_session(sessions, tenant) as session, session.begin():
        await session.execute(
            text(
                "INSERT INTO breadcrumb_edges (owner_id, from_id, to_id, edge_type, weight)"
                " VALUES (:owner, :one, :two, 0, 1.0)"
            ),
            {"owner": tenant, "one": one, "two": two},
        )
    assert (await _coverage(client))["islands"]["count"] == 0


async def test_a_record_whose_ttl_runs_out_leaves_the_figures(
    client: httpx.AsyncClient, tenant: uuid.UUID
) -> None:
    await _post(client, title="Stays", tags=[])
    soon = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=1.5)
    await _post(client, title="Goes", tags=[], ttl=soon.isoformat())
    assert (await _coverage(client))["records"] == 2

    async def one_left() -> bool:
        return (await _coverage(client))["records"] == 1

    await eventually(one_left, timeout=10)


async def test_figures_older_than_the_bound_are_counted_again(
    app: Any, client: httpx.AsyncClient, tenant: uuid.UUID
) -> None:
    await _settled(app, tenant, await _post(client, title="One", tags=[]))
    now = [0.0]
    cache = CoverageCache(max_age_s=5, clock=lambda: now[0])
    sessions = app.state.resources.session_factory
    async with tenant_session(sessions, tenant) as session:
        first = await cache.coverage(session, tenant)
        now[0] = 4.9
        assert (await cache.coverage(session, tenant)).computed_at == first.computed_at
        now[0] = 5.0
        assert (await cache.coverage(session, tenant)).computed_at != first.computed_at
