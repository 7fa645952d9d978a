"""The session's history reaches a context through the session source only: the trigger's
temporal edge to the turn before it is not walked, so an agent that asks for no history
gets none, and one that asks for it gets it as session seeds."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
from fastapi import FastAPI
from tests.assembly.helpers import insert_quietly, link, post_agent

TEMPORAL = 1


async def _agent(client: httpx.AsyncClient, key: str, name: str, history: int) -> str:
    agent_id = f"{name}-{key}"
    await post_agent(client, agent_id, f"ask:{key}", {"session": {"limit": history}}, 1000)
    return agent_id


async def _assembled(client: httpx.AsyncClient, agent: str, trigger: uuid.UUID) -> dict[str, Any]:
    body = {"agent_id": agent, "trigger_id": str(trigger)}
    response = await client.post("/contexts/assemble", json=body)
    assert response.status_code == 200, response.text
    context: dict[str, Any] = response.json()["context"]
    return context


async def test_history_comes_from_the_session_source_not_the_triggers_edge(
    client: httpx.AsyncClient, app: FastAPI
) -> None:
    key = uuid.uuid4().hex[:8]
    without, with_history = (
        await _agent(client, key, "none", 0),
        await _agent(client, key, "some", 3),
    )
    session = f"session:h{key}"
    # Written without events, so that no worker adds edges of other kinds between them.
    earlier = await insert_quietly(
        app, "earlier", "user.message.v1", [session], {"content": "the turn before the question"}
    )
    trigger = await insert_quietly(
        app, "question", "user.message.v1", [session, f"ask:{key}"], {"content": "what now?"}
    )
    await link(app, [(earlier, trigger, TEMPORAL, 1.0)])  # as the edge builder links them

    quiet = await _assembled(client, without, trigger)
    assert "the turn before the question" not in quiet["formatted_context"]
    assert [item["record_id"] for item in quiet["explain"]["selected"]] == [str(trigger)]

    told = await _assembled(client, with_history, trigger)
    assert "the turn before the question" in told["formatted_context"]
    chosen = {item["record_id"]: item for item in told["explain"]["selected"]}
    assert chosen[str(earlier)]["source"] == "session" and chosen[str(earlier)]["hops"] == 0
