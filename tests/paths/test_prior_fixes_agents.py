"""Prior fixes for the agents as they are defined: the bootstrap chat agent as shipped, and
an agent with its own sections."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import httpx
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncEngine
from tests.paths.prior_world import (
    ASK,
    World,
    failing,
    fixed_in_session_a,
    new_session,
    prior_fixes_of,
    resolved_path,
)

from cairn.worker.handlers import Handlers

CHAT_AGENT = Path(__file__).resolve().parents[2] / "bootstrap" / "system" / "cairn-chat-agent.json"


async def test_the_chat_agent_brings_a_prior_fix_for_an_error_a_user_pastes(
    app: FastAPI, client: httpx.AsyncClient, handlers: Handlers, db: AsyncEngine,
    tenant: uuid.UUID,
) -> None:  # fmt: skip
    """The bootstrap chat agent as shipped: a user message quoting a traceback is a trigger
    with an error."""
    agent = json.loads(CHAT_AGENT.read_text())
    world = World(app, client, handlers, tenant)
    await world.handled(**agent)
    a = new_session()
    run = "python scripts/export.py --since 2026-11-01"
    failed = "Traceback (most recent call last):\n  File \"/home/a/crm/scripts/export.py\"," \
        " line 64, in main\n    row[\"user_id\"]\nKeyError: 'user_id'"  # fmt: skip
    await world.step(a, {"command": run, "exit_code": 1, "output": failed})
    await world.step(a, {"tool": "edit", "title": "Edit export.py: use row.get('user_id')"})
    for _ in range(3):
        await world.step(a, {"command": run, "exit_code": 0, "output": "exported 1200 rows"})
    path_id, _ = await resolved_path(db, a)
    b = new_session()
    pasted = failed.replace("/home/a/crm", "/srv/crm/current").replace("line 64", "line 71")
    await world.handled(
        schema_name="user.message.v1", title="Export fails", tags=[b, "user:message"],
        context={"content": f"The export crashes again, any idea?\n{pasted}"},
    )  # fmt: skip
    context = await world.context_of("cairn-chat", b, db)
    (seed,) = prior_fixes_of(context)
    assert seed["record_id"] == str(path_id)
    assert "use row.get('user_id')" in context["formatted_context"]


async def test_an_agent_with_its_own_sections_places_prior_fixes_by_their_source(
    app: FastAPI, client: httpx.AsyncClient, handlers: Handlers, db: AsyncEngine,
    tenant: uuid.UUID,
) -> None:  # fmt: skip
    world = World(app, client, handlers, tenant)
    await world.handled(
        schema_name="agent.def.v1", title="sectioned", tags=["workspace:agents"],
        context={
            "agent_id": "sectioned",
            "context_trigger": {"schema_name": "tool.response.v1", "any_tags": [ASK]},
            "context_sources": {"session": {"limit": 5}, "paths": {}},
            "context_budget": 3000,
            "sections": [
                {"name": "fixes", "title": "Prior fixes", "match": {"sources": ["paths"]}},
                {"name": "rest", "title": "Everything else"},
            ],
        },
    )  # fmt: skip
    path_id, _ = await resolved_path(db, await fixed_in_session_a(world))
    b = new_session()
    await world.step(b, failing("lib/tests/test_cart.py", 8, 9), ASK)
    text_ = (await world.context_of("sectioned", b, db))["formatted_context"]
    fixes = text_.split("### Prior fixes\n", 1)[1].split("### Everything else", 1)[0]
    assert fixes.startswith(f"Fixed before (path {path_id})")
