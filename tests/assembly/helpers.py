"""Building small worlds of records and edges for context-builder tests."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

import httpx
from fastapi import FastAPI
from tests.factories import breadcrumb

from cairn.context.agents import Agent, parse_agent
from cairn.context.builder import ContextBuilder
from cairn.db.engine import tenant_session
from cairn.edges.builder import EdgeOptions
from cairn.edges.repository import upsert_edges
from cairn.transforms import Transforms
from cairn.worker.app import NoEmbedder
from cairn.worker.handlers import Handlers


async def post(client: httpx.AsyncClient, **overrides: object) -> uuid.UUID:
    response = await client.post("/breadcrumbs", json=breadcrumb(**overrides))
    assert response.status_code == 201, response.text
    return uuid.UUID(response.json()["id"])


async def post_agent(
    client: httpx.AsyncClient,
    agent_id: str,
    ask_tag: str,
    sources: dict[str, object],
    budget: int,
) -> uuid.UUID:
    """An ``agent.def.v1`` triggered by a ``user.message.v1`` tagged ``ask_tag``."""
    return await post(
        client, schema_name="agent.def.v1", title=agent_id, tags=["workspace:agents"],
        context={
            "agent_id": agent_id,
            "context_trigger": {"schema_name": "user.message.v1", "any_tags": [ask_tag]},
            "context_sources": sources,
            "context_budget": budget,
        },
    )  # fmt: skip


async def link(
    app: FastAPI,
    edges: Sequence[tuple[uuid.UUID, uuid.UUID, int, float]],
    owner: uuid.UUID | None = None,
) -> None:
    """Edges of the default tenant; with ``owner``, rows no tenant could write (the database
    refuses edges between records of another tenant), written as the schema owner so that
    tests can show the read side ignores them too."""
    resources = app.state.resources
    factory = resources.session_factory if owner is None else resources.system_sessions
    tenant = owner or resources.default_tenant
    async with tenant_session(factory, tenant) as session, session.begin():
        await upsert_edges(session, tenant, edges)


async def insert_quietly(
    app: FastAPI,
    title: str,
    schema_name: str = "note.v1",
    tags: Sequence[str] = (),
    context: dict[str, object] | None = None,
) -> uuid.UUID:
    """A record written straight to the table: no event, so no worker builds its edges and
    a test controls every edge it has."""
    from cairn.breadcrumbs.repository import insert_breadcrumb

    resources = app.state.resources
    record_id = uuid.uuid4()
    async with (
        tenant_session(resources.session_factory, resources.default_tenant) as session,
        session.begin(),
    ):
        await insert_breadcrumb(
            session,
            {
                "id": record_id, "owner_id": resources.default_tenant, "schema_name": schema_name,
                "title": title, "tags": list(tags), "context": context or {"title": title},
                "checksum": "sha256:test", "size_bytes": 0,
            },
        )  # fmt: skip
    return record_id


def own_worker_steps(app: FastAPI) -> tuple[ContextBuilder, Handlers]:
    """The worker's steps over the app's database, with a context builder and transforms
    of their own (a test may break them without touching the session's worker)."""
    resources = app.state.resources
    builder = ContextBuilder(
        resources.session_factory, Transforms(), resources.contexts.counter,
        resources.contexts.directory, resources.contexts.options, NoEmbedder(),
        resources.settings.limits,
    )  # fmt: skip
    return builder, Handlers(resources.session_factory, EdgeOptions(), builder)


def session_agent(app: FastAPI, agent_id: str, key: str, *, budget: int = 2000) -> Agent:
    """An agent of the default tenant that reads its trigger's session (5 records), for a
    test that calls the builder itself: its trigger tag ``never:<key>`` is never posted."""
    definition = {
        "agent_id": agent_id,
        "context_trigger": {"any_tags": [f"never:{key}"]},
        "context_sources": {"session": {"limit": 5}},
        "context_budget": budget,
    }
    agent = parse_agent(uuid.uuid4(), app.state.resources.default_tenant, definition)
    assert agent is not None
    return agent
