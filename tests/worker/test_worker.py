"""The worker against real NATS and PostgreSQL: edges appear after ordinary POSTs, bad
messages are terminated without stopping it."""

from __future__ import annotations

import asyncio
import uuid

import httpx
from fastapi import FastAPI
from sqlalchemy import text
from tests.factories import breadcrumb


async def _edges_of(app: FastAPI, record_id: str) -> list[tuple[str, str, int]]:
    query = text(
        "SELECT from_id::text, to_id::text, edge_type FROM breadcrumb_edges"
        " WHERE from_id = :id OR to_id = :id"
    )
    async with app.state.resources.system_engine.connect() as connection:
        return [tuple(row) for row in await connection.execute(query, {"id": record_id})]  # type: ignore[misc]


async def test_edges_appear_after_ordinary_posts(
    worker: None, client: httpx.AsyncClient, app: FastAPI
) -> None:
    session = f"session:{uuid.uuid4().hex[:8]}"
    first = (await client.post("/breadcrumbs", json=breadcrumb(tags=[session]))).json()["id"]
    second = (await client.post("/breadcrumbs", json=breadcrumb(tags=[session]))).json()["id"]
    for _ in range(100):
        edges = await _edges_of(app, second)
        if (first, second, 1) in edges:
            break
        await asyncio.sleep(0.1)
    assert (first, second, 1) in edges  # temporal: previous record of the session


async def test_poison_messages_are_terminated_and_the_worker_goes_on(
    worker: None, client: httpx.AsyncClient, app: FastAPI
) -> None:
    js = app.state.resources.nats.jetstream()
    await js.publish("bc.garbage.created", b"not json")
    await js.publish("bc.garbage.created", b'{"type": "breadcrumb.created", "owner_id": "x"}')
    session = f"session:{uuid.uuid4().hex[:8]}"
    first = (await client.post("/breadcrumbs", json=breadcrumb(tags=[session]))).json()["id"]
    second = (await client.post("/breadcrumbs", json=breadcrumb(tags=[session]))).json()["id"]
    for _ in range(100):
        if (first, second, 1) in await _edges_of(app, second):
            return
        await asyncio.sleep(0.1)
    raise AssertionError("the worker stopped handling events after poison messages")
