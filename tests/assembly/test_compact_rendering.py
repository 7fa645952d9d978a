"""Through the builder: a record whose schema has no hints is rendered compactly, one with
hints as its hints render it, and no block cached before the compact rendering is served."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
from fastapi import FastAPI
from tests.assembly.helpers import post, post_agent
from tests.factories import schema_definition

from cairn.context.blocks import BLOCK_FORMAT

TURN = {"speaker": "Ada", "date": "1 May 2024", "mood": None, "text": "The launch moved."}


async def _world(client: httpx.AsyncClient) -> dict[str, Any]:
    key = uuid.uuid4().hex[:8]
    hinted, plain, agent_id = f"hinted{key}.v1", f"plain{key}.v1", f"agent-{key}"
    definition = schema_definition(hinted, {"exclude": ["secret"]})
    response = await client.post("/breadcrumbs", json=definition)
    assert response.status_code == 201, response.text
    always = [
        {"type": "schema", "schema_name": name, "method": "all", "limit": 5}
        for name in (hinted, plain)
    ]
    await post_agent(client, agent_id, f"ask:{key}", {"always": always}, 2000)
    ids = {
        f"{kind}_id": await post(client, schema_name=name, title=title, tags=[], context=TURN)
        for kind, name, title in (("hinted", hinted, "Launch news"), ("plain", plain, "Ada"))
    }
    trigger = await post(
        client, schema_name="user.message.v1", title="ask", tags=[f"ask:{key}"],
        context={"content": "when is the launch?"},
    )  # fmt: skip
    return {"agent": agent_id, "trigger": trigger, "hinted": hinted, "plain": plain, **ids}


async def _assembled(client: httpx.AsyncClient, world: dict[str, Any]) -> str:
    body = {"agent_id": world["agent"], "trigger_id": str(world["trigger"])}
    response = await client.post("/contexts/assemble", json=body)
    assert response.status_code == 200, response.text
    return str(response.json()["context"]["formatted_context"])


async def test_a_record_without_hints_is_compact_and_a_hinted_one_as_its_hints_say(
    client: httpx.AsyncClient,
) -> None:
    world = await _world(client)
    text = await _assembled(client, world)
    # Fields come in the order PostgreSQL's jsonb keeps them: shorter keys first.
    # The speaker is the title: said once, leading the body's one line (so it can join a
    # run of its schema's one-line records).
    plain = f"⟦item · {world['plain']}⟧\nAda · 1 May 2024 · The launch moved.\n"
    assert plain in text
    hinted = (
        f"⟦item · {world['hinted']} · Launch news⟧\n"
        "date: 1 May 2024\nmood: null\ntext: The launch moved.\nspeaker: Ada\n"
    )
    assert hinted in text


async def test_a_block_cached_before_the_compact_rendering_is_not_served(
    client: httpx.AsyncClient, app: FastAPI
) -> None:
    world = await _world(client)
    record_id = world["plain_id"]
    version = (await client.get(f"/breadcrumbs/{record_id}")).json()["version"]
    blocks = app.state.resources.contexts.blocks
    # Where the block cache kept a plain record's block before blocks had a format number.
    blocks.put((record_id, version, ("plain",)), ("⟦item · stale⟧\nSTALE\n", 4))
    text = await _assembled(client, world)
    assert "STALE" not in text and "The launch moved.\n" in text
    assert blocks.get((BLOCK_FORMAT, record_id, version, ("plain",))) is not None
