"""Every assembly leaves one entry in the log: the worker's (an event), ``POST
/contexts/assemble`` and ``POST /contexts/query`` (cache hits too), with the assembly's own
figures."""

from __future__ import annotations

import uuid
from collections import Counter
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from tests.assemblies.helpers import rows_of
from tests.assembly.helpers import post, post_agent
from tests.waiting import eventually

SOURCES = {
    "semantic": {"enabled": True, "limit": 5, "min_similarity": 0.1},
    "session": {"limit": 3},
}


def _matches_context(row: dict[str, Any], context: dict[str, Any]) -> None:
    explain = context["explain"]
    assert row["seed_counts"] == dict(Counter(seed["source"] for seed in explain["seeds"]))
    assert [str(i) for i in row["selected_ids"]] == [s["record_id"] for s in explain["selected"]]
    assert (row["token_count"], row["token_budget"]) == (
        context["token_count"],
        context["token_budget"],
    )
    assert row["total_ms"] == row["timings_ms"]["total"] > 0


async def _world(client: httpx.AsyncClient) -> dict[str, str]:
    key = uuid.uuid4().hex[:8]
    agent = f"logged-{key}"
    await post_agent(client, agent, f"ask:{key}", SOURCES, 800)
    await post(client, title="whales", context={"content": "the blue whale is the largest animal"})
    return {"key": key, "agent": agent, "session": f"session:s{key}"}


async def test_a_triggered_assembly_is_logged_with_its_figures(
    worker: None, client: httpx.AsyncClient, app: FastAPI
) -> None:
    world = await _world(client)
    trigger = await post(
        client, schema_name="user.message.v1", title="question",
        tags=[f"ask:{world['key']}", world["session"]],
        context={"content": "How long can a blue whale grow?"},
    )  # fmt: skip

    async def logged() -> list[dict[str, Any]]:
        return await rows_of(app, world["agent"])

    await eventually(logged)
    (row,) = await logged()
    stored = await client.get(f"/contexts/{world['agent']}", params={"session": world["session"]})
    context = stored.json()["context"]
    assert (row["origin"], row["trigger_id"], row["session_tag"]) == (
        "worker",
        trigger,
        world["session"],
    )
    assert row["query_text"] is None and row["cache_hit"] is False and row["degraded"] == []
    _matches_context(row, context)
    assert row["seed_counts"]["trigger"] == 1 and "semantic" in row["seed_counts"]
    # The log's timings add the write to the context's own phases.
    assert set(row["timings_ms"]) == set(context["timings_ms"]) | {"write"}


async def test_an_assembly_asked_for_is_logged_in_its_transaction(
    client: httpx.AsyncClient, app: FastAPI
) -> None:
    world = await _world(client)
    trigger = await post(
        client, schema_name="note.v1", title="question", tags=[world["session"]],
        context={"content": "whales?"},
    )  # fmt: skip
    body = {"agent_id": world["agent"], "trigger_id": str(trigger)}
    response = await client.post("/contexts/assemble", json=body)
    assert response.status_code == 200, response.text
    (row,) = await rows_of(app, world["agent"])  # no waiting: committed with the context
    assert (row["origin"], row["trigger_id"], row["session_tag"]) == (
        "assemble",
        trigger,
        world["session"],
    )
    _matches_context(row, response.json()["context"])


@pytest.fixture
def settled_at_once(app: FastAPI, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(app.state.resources.contexts.answers, "settle_s", 0.0)


async def test_queries_are_logged_and_a_cache_hit_says_so(
    client: httpx.AsyncClient, app: FastAPI, settled_at_once: None, tenant: uuid.UUID
) -> None:
    """A fresh tenant and an inline agent: nothing else changes the tenant's data between
    the two requests."""
    key = uuid.uuid4().hex[:8]
    agent = {"context_sources": SOURCES, "context_budget": 700}
    body = {"agent_id": f"q-{key}", "agent": agent, "query": f"whales {key}", "session": key}
    first = await client.post("/contexts/query", json=body)
    await app.state.resources.contexts.assembly_log.flush()
    second = await client.post("/contexts/query", json=body)
    assert first.status_code == second.status_code == 200, first.text
    # The first entry did not count as a change of the tenant's data: the second is a hit.
    assert second.json()["cache_hit"] is True
    await app.state.resources.contexts.assembly_log.flush()  # written after the answers
    rows = await rows_of(app, f"q-{key}")
    assert [(r["origin"], r["cache_hit"]) for r in rows] == [("query", False), ("query", True)]
    for row in rows:
        assert row["query_text"] == f"whales {key}" and row["trigger_id"] is None
        assert row["session_tag"] == f"session:{key}"
        _matches_context(row, first.json())
    assert rows[0]["timings_ms"] == first.json()["timings_ms"]
    assert set(rows[1]["timings_ms"]) == {"total"}


async def test_an_inline_agent_query_is_logged_under_its_id(
    client: httpx.AsyncClient, app: FastAPI
) -> None:
    agent = f"inline-{uuid.uuid4().hex[:8]}"
    inline = {"context_sources": SOURCES, "context_budget": 500}
    body = {"agent_id": agent, "agent": inline, "query": "x" * 3000, "debug": True}
    response = await client.post("/contexts/query", json=body)
    assert response.status_code == 200, response.text
    await app.state.resources.contexts.assembly_log.flush()
    (row,) = await rows_of(app, agent)
    assert row["query_text"] == "x" * 2000 and row["token_budget"] == 500
