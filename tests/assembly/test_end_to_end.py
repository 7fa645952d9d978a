"""A trigger posted over HTTP becomes an agent.context.v1 over SSE: tools without their code,
relevant knowledge, the session's history in order, within budget, fully explained."""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

import httpx
from fastapi import FastAPI
from tests.assembly.helpers import post, post_agent
from tests.stream.sse_client import sse

BUDGET = 700


async def _world(client: httpx.AsyncClient) -> dict[str, Any]:
    key = uuid.uuid4().hex[:8]
    tools, kb, agent_id = f"tool{key}.v1", f"kb{key}.v1", f"agent-{key}"
    await post(
        client, schema_name="schema.def.v1", title=f"{tools} definition", tags=[f"defines:{tools}"],
        context={"defines_schema": tools},
        llm_hints={"exclude": ["code"]},
    )  # fmt: skip
    sources = {
        "always": [{"type": "schema", "schema_name": tools, "method": "all", "limit": 5}],
        "semantic": {"enabled": True, "schemas": [kb], "limit": 2, "min_similarity": 0.2},
        "session": {"limit": 10},
    }
    await post_agent(client, agent_id, f"ask:{key}", sources, BUDGET)
    tool = {"name": "calculator", "description": "adds numbers", "code": "SECRET_CODE_1"}
    await post(client, schema_name=tools, title="calculator", context=tool)
    whales = {"text": "The blue whale is the largest animal, up to 30 metres long."}
    await post(client, schema_name=kb, title="Whale facts", context=whales)
    taxes = {"text": "Quarterly VAT returns are due one month after the quarter."}
    await post(client, schema_name=kb, title="Tax deadlines", context=taxes)
    session = f"s{key}"
    history = [
        await post(client, schema_name="user.message.v1", title="msg", tags=[f"session:{session}"],
                   context={"content": f"history line {i} about oceans"})
        for i in range(3)
    ]  # fmt: skip
    return {"key": key, "agent": agent_id, "session": session, "history": history}


async def test_trigger_produces_an_explained_context_within_budget_over_sse(
    worker: None, client: httpx.AsyncClient, live_url: str, app: FastAPI
) -> None:
    world = await _world(client)
    params = {"schema_name": "agent.context.v1", "any_tags": f"consumer:{world['agent']}"}
    async with sse(live_url, params) as stream:
        started = time.monotonic()
        trigger = await post(
            client, schema_name="user.message.v1", title="question",
            tags=[f"ask:{world['key']}", f"session:{world['session']}"],
            context={"content": "How long can a blue whale grow?"},
        )  # fmt: skip
        _, event = await stream.next_event(timeout=10)
        elapsed = time.monotonic() - started
    assert elapsed < 2.0, f"context took {elapsed:.2f} s"
    assert event["schema_name"] == "agent.context.v1"
    context = event["context"]
    text = context["formatted_context"]
    assert context["token_count"] <= context["token_budget"] == BUDGET
    counter = app.state.resources.contexts.counter
    assert counter.count(text) == context["token_count"]
    assert "adds numbers" in text and "SECRET_CODE_1" not in text  # hints applied
    assert "blue whale is the largest animal" in text
    positions = [text.index(f"history line {i}") for i in range(3)]
    assert positions == sorted(positions)  # chronological
    assert text.rstrip().endswith("How long can a blue whale grow?") or "blue whale grow" in text
    explain = context["explain"]
    sources = {seed["source"] for seed in explain["seeds"]}
    assert sources == {"trigger", "always", "semantic", "session"}
    selected = {item["record_id"]: item for item in explain["selected"]}
    assert str(trigger) in selected
    assert all(
        {"source", "path_cost", "tokens", "section"} <= set(item) for item in selected.values()
    )
    assert "dropped" in explain and set(context["timings_ms"]) >= {
        "seeds",
        "graph",
        "select",
        "render",
    }
    fetched = await client.get(f"/contexts/{world['agent']}", params={"session": world["session"]})
    assert fetched.status_code == 200 and fetched.json()["context"]["formatted_context"] == text


async def test_a_context_never_triggers_an_assembly(
    worker: None, client: httpx.AsyncClient
) -> None:
    world = await _world(client)
    await post(
        client, schema_name="user.message.v1", title="q",
        tags=[f"ask:{world['key']}", f"session:{world['session']}"], context={"content": "hi"},
    )  # fmt: skip
    url = f"/contexts/{world['agent']}"
    for _ in range(50):
        response = await client.get(url, params={"session": world["session"]})
        if response.status_code == 200:
            break
        await asyncio.sleep(0.1)
    await asyncio.sleep(1.0)  # had the context triggered another assembly, version would move
    assert (await client.get(url, params={"session": world["session"]})).json()["version"] == 1
