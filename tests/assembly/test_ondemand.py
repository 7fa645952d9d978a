"""``POST /contexts/query``: the worker's assembly on demand, written nowhere, cached until
the tenant's data changes."""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine
from tests.assembly.helpers import link, post

from cairn.context.trigger import QUERY_SCHEMA

SEMANTIC = {
    "semantic": {"enabled": True, "limit": 10, "min_similarity": 0.1},
    "session": {"limit": 0},
}


@pytest.fixture(autouse=True)
def settled_at_once(app: FastAPI, monkeypatch: pytest.MonkeyPatch) -> None:
    """No settling time after a change (the tests' own writes would keep answers uncached
    for seconds; the settling itself is tested in tests/context/test_answers.py)."""
    monkeypatch.setattr(app.state.resources.contexts.answers, "settle_s", 0.0)


def inline(**sources: Any) -> dict[str, Any]:
    return {"context_sources": sources or SEMANTIC, "context_budget": 2000}


async def query(client: httpx.AsyncClient, **body: Any) -> httpx.Response:
    headers = body.pop("headers", None)
    return await client.post("/contexts/query", json=body, headers=headers)


async def counts(db: AsyncEngine) -> tuple[int, ...]:
    """Rows of every table an assembly could write to (the relay drains the outbox: wait
    until it is empty, so that the numbers compared are settled)."""
    statement = text(
        "SELECT (SELECT count(*) FROM breadcrumbs), (SELECT count(*) FROM breadcrumb_history),"
        " (SELECT count(*) FROM outbox), (SELECT count(*) FROM breadcrumb_edges)"
    )
    for _ in range(100):
        async with db.connect() as connection:
            row = (await connection.execute(statement)).one()
        if row[2] == 0:
            break
        await asyncio.sleep(0.05)
    return tuple(row)


async def test_a_query_finds_the_relevant_record_and_writes_nothing(
    client: httpx.AsyncClient, db: AsyncEngine, marker: str
) -> None:
    await post(
        client, title="Recital", tags=[marker],
        context={"text": f"Rosalind plays the viola at the spring recital ({marker})"},
    )  # fmt: skip
    before = await counts(db)
    response = await query(client, query=f"Who plays the viola? {marker}", agent=inline())
    assert response.status_code == 200, response.text
    answer = response.json()
    assert "Rosalind plays the viola" in answer["formatted_context"]
    assert answer["cache_hit"] is False and answer["degraded"] == []
    assert answer["token_count"] <= answer["token_budget"] == 2000
    assert answer["breadcrumb_count"] >= 2  # the query itself and the recital
    assert QUERY_SCHEMA in answer["formatted_context"]
    assert {"embed", "seeds", "graph", "select", "render", "total"} <= set(answer["timings_ms"])
    assert await counts(db) == before


async def test_the_same_request_is_answered_from_memory_until_a_write(
    client: httpx.AsyncClient, marker: str
) -> None:
    body = {"query": f"What does Quentin collect? {marker}", "agent": inline()}
    first = (await query(client, **body)).json()
    second = (await query(client, **body)).json()
    assert (first["cache_hit"], second["cache_hit"]) == (False, True)
    assert second["formatted_context"] == first["formatted_context"]
    assert "stamps" not in first["formatted_context"]
    await post(
        client, title="Hobbies", tags=[marker],
        context={"text": f"Quentin collects stamps from Iceland ({marker})"},
    )  # fmt: skip
    third = (await query(client, **body)).json()  # the very next request, no waiting
    assert third["cache_hit"] is False
    assert "Quentin collects stamps" in third["formatted_context"]


async def test_debug_and_no_cache_assemble_afresh(client: httpx.AsyncClient, marker: str) -> None:
    body = {"query": f"Anything about {marker}?", "agent": inline()}
    await query(client, **body)
    assert (await query(client, **body)).json()["cache_hit"] is True
    assert (await query(client, **body, debug=True)).json()["cache_hit"] is False
    fresh = await query(client, **body, headers={"Cache-Control": "no-cache"})
    assert fresh.json()["cache_hit"] is False


async def test_a_budget_in_the_request_decides(client: httpx.AsyncClient, marker: str) -> None:
    answer = (await query(client, query=f"{marker}", agent=inline(), budget=300)).json()
    assert answer["token_budget"] == 300
    assert answer["explain"]["budget"] == {"tokens": 300, "source": "request"}


async def test_a_stored_trigger_gives_the_worker_context(
    client: httpx.AsyncClient, worker: None, marker: str
) -> None:
    agent_id = f"reader-{marker[5:]}"
    session = f"s-{marker[5:]}"
    await post(
        client, schema_name="agent.def.v1", title=agent_id, tags=["workspace:agents"],
        context={
            "agent_id": agent_id,
            "context_trigger": {"schema_name": "user.message.v1", "any_tags": [marker]},
            "context_sources": {**SEMANTIC, "session": {"limit": 5}},
            "context_budget": 1500,
        },
    )  # fmt: skip
    for fact in ("Ivo repaired the red kayak", "The kayak leaks near the stern", "Ivo owns a cat"):
        await post(client, title="Note", tags=[marker, f"session:{session}"], context={"t": fact})
    trigger = await post(
        client, schema_name="user.message.v1", title="Question",
        tags=[marker, f"session:{session}"], context={"content": "What is wrong with the kayak?"},
    )  # fmt: skip
    written = await worker_context(client, agent_id, session, trigger)
    response = await query(client, trigger_id=str(trigger), agent_id=agent_id)
    assert response.status_code == 200, response.text
    answer = response.json()
    assert answer["formatted_context"] == written["formatted_context"]
    assert answer["token_count"] == written["token_count"]


async def worker_context(
    client: httpx.AsyncClient, agent_id: str, session: str, trigger: uuid.UUID | str
) -> dict[str, Any]:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        response = await client.get(f"/contexts/{agent_id}", params={"session": session})
        if response.status_code == 200:
            context: dict[str, Any] = response.json()["context"]
            if context["trigger_id"] == str(trigger):
                return context
        await asyncio.sleep(0.02)
    raise TimeoutError(f"no context of {agent_id} for {trigger}")


async def test_bad_requests_get_422_and_unknown_ones_404(client: httpx.AsyncClient) -> None:
    trigger = str(uuid.uuid4())
    for body in (
        {"agent": {}},  # neither query nor trigger_id
        {"query": "x", "trigger_id": trigger, "agent": {}},  # both
        {"query": "x"},  # no agent
        {"query": "   ", "agent": {}},
        {"query": "x", "agent": {"context_sources": {"semantic": {"limit": "many"}}}},
        {"query": "x", "agent": {"context_budget": -5}},
        {"query": "x", "agent_id": "a", "agent": {"agent_id": "b"}},
        {"trigger_id": trigger, "agent": {}, "session": "s1"},
        {"query": "x", "agent": {}, "budget": 0},
        {"query": "x", "agent": {}, "surprise": 1},
    ):
        response = await query(client, **body)
        assert response.status_code == 422, (body, response.text)
        assert set(response.json()) >= {"error", "detail"}
    missing = await query(client, trigger_id=trigger, agent={})
    assert missing.status_code == 404
    unknown = await query(client, query="x", agent_id="nobody-registered-this")
    assert unknown.status_code == 404


async def test_a_session_scoped_agent_gets_no_record_of_another_session_through_the_graph(
    client: httpx.AsyncClient, app: FastAPI, marker: str
) -> None:
    """The semantic source is session-scoped, and so is the graph walk unless the agent
    asks for more (``graph.scope: global``)."""
    mine, theirs = f"m{uuid.uuid4().hex[:8]}", f"t{uuid.uuid4().hex[:8]}"
    here = await post(
        client, title="Viola", tags=[f"session:{mine}"],
        context={"text": f"Rosalind plays the viola at the recital ({marker})"},
    )  # fmt: skip
    there = await post(
        client, title="Viola elsewhere", tags=[f"session:{theirs}"],
        context={"text": f"Rosalind's viola teacher lives in Leeds ({marker})"},
    )  # fmt: skip
    await link(app, [(here, there, 3, 0.97)])
    scoped = {
        "semantic": {"enabled": True, "limit": 5, "min_similarity": 0.1, "scope": "session"},
        "session": {"limit": 0},
    }
    ask = f"Who plays the viola? {marker}"

    async def reached(agent: dict[str, Any]) -> set[str]:
        response = await query(client, query=ask, session=mine, agent=agent, debug=True)
        assert response.status_code == 200, response.text
        explain = response.json()["explain"]
        return {item["record_id"] for item in explain["selected"] + explain["dropped"]}

    assert str(here) in await reached(inline(**scoped))
    assert str(there) not in await reached(inline(**scoped))
    assert str(there) in await reached(inline(**scoped) | {"graph": {"scope": "global"}})


async def test_the_signals_source_pulls_records_naming_the_files_the_query_mentions(
    client: httpx.AsyncClient, marker: str
) -> None:
    path = f"src/pool{uuid.uuid4().hex[:8]}/pool.py"
    by_text = await post(
        client, title="Gotcha", tags=[marker],
        context={"issue": f"Connections leak when {path} is reloaded", "severity": "high"},
    )  # fmt: skip
    by_name = await post(
        client, title="Pattern", context={"pattern": "Close cursors early (see pool.py)"}
    )
    by_tag = await post(client, title="Decision", tags=[f"file:{path}"], context={"x": "kept"})
    await post(client, title="Unrelated", context={"text": f"weather in {marker} is fine"})
    agent = {
        "context_sources": {"signals": {"limit": 10}, "session": {"limit": 0}},
        "context_budget": 2000,
    }
    response = await query(client, query=f"Refactor {path} please", agent=agent, debug=True)
    assert response.status_code == 200, response.text
    explain = response.json()["explain"]
    assert explain["signals"]["files"] == [path]
    seeded = {seed["record_id"]: seed for seed in explain["seeds"] if seed["source"] == "signals"}
    assert set(seeded) >= {str(by_text), str(by_tag), str(by_name)}
    assert seeded[str(by_text)]["score"] > seeded[str(by_name)]["score"]  # full path + name
    assert path in seeded[str(by_text)]["detail"]
    without = await query(client, query=f"Refactor {path} please", agent=inline(), debug=True)
    assert all(seed["source"] != "signals" for seed in without.json()["explain"]["seeds"])
