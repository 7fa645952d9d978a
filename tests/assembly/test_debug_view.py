"""``GET /contexts/{agent_id}/debug``: the newest stored assembly of an agent (in a session,
when given) as seed 003's Markdown debug block; 404 without one, 422 for bad parameters."""

from __future__ import annotations

import uuid
from collections import Counter

import httpx
from tests.assembly.helpers import post, post_agent


async def _assemble(client: httpx.AsyncClient, agent: str, trigger: uuid.UUID) -> None:
    body = {"agent_id": agent, "trigger_id": str(trigger)}
    response = await client.post("/contexts/assemble", json=body)
    assert response.status_code == 200, response.text


async def _world(client: httpx.AsyncClient) -> tuple[str, str, uuid.UUID, uuid.UUID]:
    key = uuid.uuid4().hex[:8]
    agent = f"debugged-{key}"
    sources = {"semantic": {"schemas": ["note.v1"], "limit": 5, "min_similarity": 0.1}}
    # Triggered by a tag no record carries: only this test assembles, so "newest" is known.
    await post_agent(client, agent, f"never:{key}", sources, 1000)
    await post(client, title=f"Kiln {key}", context={"text": f"The kiln {key} fires at 1200 C"})
    first = await post(
        client, schema_name="user.message.v1", tags=[f"ask:{key}", f"session:a{key}"],
        context={"content": f"How hot does kiln {key} fire?"},
    )  # fmt: skip
    second = await post(
        client, schema_name="user.message.v1", tags=[f"ask:{key}", f"session:b{key}"],
        context={"content": f"When was kiln {key} last fired?"},
    )  # fmt: skip
    await _assemble(client, agent, first)
    await _assemble(client, agent, second)
    return agent, key, first, second


async def test_the_debug_view_renders_the_stored_explain_as_markdown(
    client: httpx.AsyncClient,
) -> None:
    agent, key, first, second = await _world(client)
    response = await client.get(f"/contexts/{agent}/debug", params={"session": f"a{key}"})
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/markdown")
    text = response.text
    assert text.startswith("## Context Debug\n")
    assert f"- Agent: `{agent}`" in text and f"- Trigger: `{first}`" in text
    for heading in ("Signals Extracted", "Knowledge Graph Query", "Dependencies Processed",
                    "Filtering", "Sections"):  # fmt: skip
        assert f"\n### {heading}\n" in text
    stored = await client.get(f"/contexts/{agent}", params={"session": f"a{key}"})
    explain = stored.json()["context"]["explain"]
    assert f"- Selected: {len(explain['selected'])}\n" in text
    schemas = Counter(item["schema_name"] for item in explain["selected"])
    assert schemas["user.message.v1"] >= 1  # the trigger
    counts = ", ".join(f"{schema} {n}" for schema, n in sorted(schemas.items()))
    assert f"- Selected by schema: {counts}\n" in text
    # "session:<id>" works too; without a session, the newest assembly of any session.
    tagged = await client.get(f"/contexts/{agent}/debug", params={"session": f"session:a{key}"})
    assert tagged.text == text
    newest = await client.get(f"/contexts/{agent}/debug")
    assert newest.status_code == 200 and f"- Trigger: `{second}`" in newest.text


async def test_no_context_is_a_404_that_says_so(client: httpx.AsyncClient) -> None:
    agent, key, _, _ = await _world(client)
    response = await client.get(f"/contexts/{agent}/debug", params={"session": f"zz{key}"})
    assert response.status_code == 404
    assert f"no context assembled for '{agent}' in session 'zz{key}'" in response.json()["detail"]
    response = await client.get(f"/contexts/never-{key}/debug")
    assert response.status_code == 404 and "never-" in response.json()["detail"]


async def test_bad_parameters_are_a_422(client: httpx.AsyncClient) -> None:
    for url, params in (
        ("/contexts/-starts-with-a-dash/debug", {}),
        (f"/contexts/{'a' * 129}/debug", {}),
        ("/contexts/agent/debug", {"session": ""}),
        ("/contexts/agent/debug", {"session": "two words"}),
        ("/contexts/agent/debug", {"session": "s" * 300}),
    ):
        response = await client.get(url, params=params)
        assert response.status_code == 422, (url, params, response.text)
