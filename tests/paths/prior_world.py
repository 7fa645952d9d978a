"""Driving the worker's handlers over one tenant's records, for the prior-fix tests: every
record posted is handled (edges, debug-path tracking, assembly) before the next."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
from fastapi import FastAPI
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine
from tests.assembly.helpers import post

from cairn.breadcrumbs import repository as breadcrumbs
from cairn.context.model import Section
from cairn.context.render import section_header
from cairn.context.write import context_record_id
from cairn.db.engine import tenant_session
from cairn.events.payloads import ChangeKind, change_event
from cairn.worker.handlers import Handlers

ASK = "ask:debugging"
HEADER = section_header(Section.prior_fixes)


def failing(where: str, got: int, want: int) -> dict[str, Any]:
    output = (
        f"FAILED {where}::test_total - AssertionError: assert {got} == {want}\n"
        f"1 failed, {got + 1} passed in 0.{want}s"
    )
    return {"command": "pytest -q", "exit_code": 1, "output": output}


GREEN = {"command": "pytest -q", "exit_code": 0, "output": "3 passed in 0.10s"}
FIX = {"tool": "edit", "title": "Edit src/cart.py: round the total once", "text": "changed"}
UNRELATED = {
    "command": "python export.py",
    "exit_code": 1,
    "output": 'Traceback (most recent call last):\n  File "export.py", line 3\n'
    "PermissionError: [Errno 13] Permission denied: '/var/out/report.csv'",
}


class World:
    """One tenant's records, each handled by the worker's steps as it is posted."""

    def __init__(
        self, app: FastAPI, client: httpx.AsyncClient, handlers: Handlers, owner: uuid.UUID
    ):
        self.app, self.client, self.handlers, self.owner = app, client, handlers, owner

    async def handled(self, **body: Any) -> uuid.UUID:
        record_id = await post(self.client, **body)
        resources = self.app.state.resources
        async with tenant_session(resources.session_factory, self.owner) as session:
            row = await breadcrumbs.get(session, self.owner, record_id)
        assert row is not None
        await self.handlers.handle_event(
            change_event(ChangeKind.created, row, change="create").payload
        )
        return record_id

    async def agent(self, agent_id: str, sources: dict[str, Any]) -> None:
        await self.handled(
            schema_name="agent.def.v1", title=agent_id, tags=["workspace:agents"],
            context={
                "agent_id": agent_id,
                "context_trigger": {"schema_name": "tool.response.v1", "any_tags": [ASK]},
                "context_sources": {"session": {"limit": 5}, **sources},
                "context_budget": 3000,
            },
        )  # fmt: skip

    async def step(self, session: str, context: dict[str, Any], *tags: str) -> uuid.UUID:
        body = dict(context)
        title = body.pop("title", f"ran {body.get('command')}")
        return await self.handled(
            schema_name="tool.response.v1", title=title, tags=[session, *tags], context=body
        )

    async def context_of(self, agent_id: str, session: str, db: AsyncEngine) -> dict[str, Any]:
        query = text("SELECT context FROM breadcrumbs WHERE id = :id")
        record = context_record_id(self.owner, agent_id, session)
        async with db.connect() as connection:
            found = (await connection.execute(query, {"id": record})).scalar_one()
        return dict(found)


async def resolved_path(db: AsyncEngine, session: str) -> tuple[uuid.UUID, dict[str, Any]]:
    query = text(
        "SELECT id, context FROM breadcrumbs WHERE schema_name = 'debug.path.v1'"
        " AND context->>'session' = :session"
    )
    async with db.connect() as connection:
        (row,) = list(await connection.execute(query, {"session": session}))
    assert row.context["status"] == "resolved"
    return row.id, dict(row.context)


def prior_fixes_of(context: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for s in context["explain"]["seeds"] if s["source"] == "paths"]


def new_session() -> str:
    return f"session:{uuid.uuid4().hex[:8]}"


async def fixed_in_session_a(world: World) -> str:
    session = new_session()
    for context in (failing("tests/test_cart.py", 3, 4), FIX, GREEN, GREEN, GREEN):
        await world.step(session, context)
    return session
