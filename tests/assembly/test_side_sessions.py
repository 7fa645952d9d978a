"""The seed sources run beside the assembly on sessions of their own when some are free,
and on the assembly's own session when none is: the context is the same either way."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
from fastapi import FastAPI
from tests.assembly.helpers import post


async def _world(client: httpx.AsyncClient) -> tuple[str, uuid.UUID]:
    key = uuid.uuid4().hex[:8]
    kb, tools = f"kb{key}.v1", f"tool{key}.v1"
    agent_id, session = f"agent-{key}", f"session:s{key}"
    await post(
        client, schema_name="agent.def.v1", title=f"agent {key}", tags=["workspace:agents"],
        context={
            "agent_id": agent_id,
            "context_trigger": {"schema_name": "user.message.v1", "any_tags": [f"ask:{key}"]},
            "context_sources": {
                "always": [{"type": "schema", "schema_name": tools, "method": "all", "limit": 3}],
                "semantic": {"enabled": True, "schemas": [kb], "limit": 3, "min_similarity": 0.1},
                "session": {"limit": 5},
            },
            "context_budget": 3000,
        },
    )  # fmt: skip
    await post(client, schema_name=tools, title="tide table", context={"name": "tides"})
    for topic in ("whales swim in oceans", "tax returns are due quarterly", "ocean currents"):
        await post(client, schema_name=kb, title=topic, context={"text": topic})
    for i in range(3):
        await post(client, schema_name="note.v1", title=f"turn {i}", tags=[session],
                   context={"text": f"we talked about the sea, part {i}"})  # fmt: skip
    trigger = await post(
        client, schema_name="user.message.v1", title="ask", tags=[f"ask:{key}", session],
        context={"content": "tell me about the ocean"},
    )  # fmt: skip
    return agent_id, trigger


async def _assembled(client: httpx.AsyncClient, agent_id: str, trigger: uuid.UUID) -> dict:
    body = {"agent_id": agent_id, "trigger_id": str(trigger)}
    response = await client.post("/contexts/assemble", json=body)
    assert response.status_code == 200, response.text
    return response.json()["context"]


async def test_the_context_is_the_same_with_and_without_side_sessions(
    client: httpx.AsyncClient, app: FastAPI
) -> None:
    builder = app.state.resources.contexts
    agent_id, trigger = await _world(client)
    opened = builder._side_session
    used: list[bool] = []

    @asynccontextmanager
    async def counted(owner_id: uuid.UUID) -> AsyncIterator[object]:
        async with opened(owner_id) as side:
            used.append(side is not None)
            yield side

    builder._side_session = counted
    try:
        beside = await _assembled(client, agent_id, trigger)
    finally:
        del builder._side_session
    assert used == [True, True]  # the always and session sources, each on its own
    slots = builder.side_slots
    builder.side_slots = asyncio.Semaphore(0)  # every slot taken: all on one session
    try:
        alone = await _assembled(client, agent_id, trigger)
    finally:
        builder.side_slots = slots
    assert alone["formatted_context"] == beside["formatted_context"]
    sources = {seed["source"] for seed in beside["explain"]["seeds"]}
    assert {"always", "semantic", "session"} <= sources
    assert [s["record_id"] for s in alone["explain"]["seeds"]] == [
        s["record_id"] for s in beside["explain"]["seeds"]
    ]
