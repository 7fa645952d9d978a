"""Building small worlds of records and edges for context-builder tests."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

import httpx
from fastapi import FastAPI
from tests.factories import breadcrumb

from cairn.edges.repository import upsert_edges


async def post(client: httpx.AsyncClient, **overrides: object) -> uuid.UUID:
    response = await client.post("/breadcrumbs", json=breadcrumb(**overrides))
    assert response.status_code == 201, response.text
    return uuid.UUID(response.json()["id"])


async def link(
    app: FastAPI,
    edges: Sequence[tuple[uuid.UUID, uuid.UUID, int, float]],
    owner: uuid.UUID | None = None,
) -> None:
    resources = app.state.resources
    async with resources.session_factory() as session, session.begin():
        await upsert_edges(session, owner or resources.default_tenant, edges)
