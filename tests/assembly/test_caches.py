"""The builder's caches across assemblies (records by version, rendered blocks by record
version and hints version) never serve what changed since: an edit, new hints, a deletion,
a blacklist or another tenant's record."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
from fastapi import FastAPI
from sqlalchemy import text
from tests.assembly.helpers import post, post_agent
from tests.dbcheck import plan_nodes
from tests.waiting import eventually

from cairn.context.records import (
    _CACHED_QUERIES,
    RecordCache,
    load_records,
    load_records_cached,
)
from cairn.db.engine import tenant_session


async def _world(client: httpx.AsyncClient) -> dict[str, Any]:
    key = uuid.uuid4().hex[:8]
    tools, agent_id = f"tool{key}.v1", f"agent-{key}"
    definition = await post(
        client, schema_name="schema.def.v1", title=f"{tools} definition", tags=[f"defines:{tools}"],
        context={"defines_schema": tools, "llm_hints": {"exclude": ["code"]}},
    )  # fmt: skip
    always = [{"type": "schema", "schema_name": tools, "method": "all", "limit": 5}]
    await post_agent(client, agent_id, f"ask:{key}", {"always": always}, 2000)
    tool = await post(
        client, schema_name=tools, title="calculator",
        context={"name": "calculator", "description": "adds numbers", "code": "CODE_ONE"},
    )  # fmt: skip
    trigger = await post(
        client, schema_name="user.message.v1", title="ask", tags=[f"ask:{key}"],
        context={"content": "add two numbers"},
    )  # fmt: skip
    return {"agent": agent_id, "definition": definition, "tool": tool, "trigger": trigger}


async def _assembled(client: httpx.AsyncClient, world: dict[str, Any]) -> str:
    body = {"agent_id": world["agent"], "trigger_id": str(world["trigger"])}
    response = await client.post("/contexts/assemble", json=body)
    assert response.status_code == 200, response.text
    return str(response.json()["context"]["formatted_context"])


async def _patch(client: httpx.AsyncClient, record_id: uuid.UUID, body: dict[str, Any]) -> None:
    response = await client.patch(f"/breadcrumbs/{record_id}", json=body)
    assert response.status_code == 200, response.text


async def test_an_edited_record_and_edited_hints_show_in_the_next_assembly(
    client: httpx.AsyncClient,
) -> None:
    world = await _world(client)
    first = await _assembled(client, world)
    assert "adds numbers" in first and "CODE_ONE" not in first
    # From the caches, the same text. The tenant is shared with the session's other tests,
    # whose records the worker may still be linking: two assemblies in a row must agree
    # once the graph around the trigger stopped changing.
    texts = [first]

    async def repeated() -> bool:
        texts.append(await _assembled(client, world))
        return texts[-1] == texts[-2]

    await eventually(repeated)

    edited = {"name": "calculator", "description": "multiplies numbers", "code": "CODE_TWO"}
    await _patch(client, world["tool"], {"context": edited})
    second = await _assembled(client, world)
    assert "multiplies numbers" in second and "adds numbers" not in second
    assert "CODE_TWO" not in second

    hints = {"defines_schema": "x", "llm_hints": {"exclude": ["description"]}}
    await _patch(client, world["definition"], {"context": hints})
    third = await _assembled(client, world)
    assert "CODE_TWO" in third and "multiplies numbers" not in third


async def _load(
    app: FastAPI, ids: list[uuid.UUID], cache: RecordCache | None, excluded: frozenset[str]
) -> dict[uuid.UUID, Any]:
    resources = app.state.resources
    tenant = resources.default_tenant
    async with tenant_session(resources.session_factory, tenant) as session:
        if cache is None:
            return await load_records(session, tenant, ids, excluded)
        return await load_records_cached(session, tenant, ids, excluded, cache)


async def test_cached_records_are_the_current_ones(client: httpx.AsyncClient, app: FastAPI) -> None:
    ids = [
        await post(client, schema_name="note.v1", title=f"note {i}", context={"text": f"v1 {i}"})
        for i in range(4)
    ]
    cache = RecordCache(100)
    assert await _load(app, ids, cache, frozenset()) == await _load(app, ids, None, frozenset())
    assert len(cache) == 4

    await _patch(client, ids[0], {"context": {"text": "v2"}})
    assert (await client.delete(f"/breadcrumbs/{ids[1]}")).status_code in (200, 204)
    again = await _load(app, ids, cache, frozenset())
    assert again == await _load(app, ids, None, frozenset())
    assert again[ids[0]].context == {"text": "v2"} and ids[1] not in again
    assert again[ids[2]] is (await _load(app, ids, cache, frozenset()))[ids[2]]  # not re-sent

    assert await _load(app, ids, cache, frozenset({"note.v1"})) == {}


async def test_the_cache_never_lends_a_record_to_another_tenant(
    client: httpx.AsyncClient, app: FastAPI
) -> None:
    mine = await post(client, schema_name="note.v1", title="mine", context={"text": "private"})
    cache = RecordCache(100)
    await _load(app, [mine], cache, frozenset())
    resources = app.state.resources
    other = uuid.uuid4()
    async with tenant_session(resources.session_factory, other) as session:
        assert await load_records_cached(session, other, [mine], frozenset(), cache) == {}


async def test_an_evicted_record_is_loaded_in_full(client: httpx.AsyncClient, app: FastAPI) -> None:
    ids = [
        await post(client, schema_name="note.v1", title=f"e{i}", context={"text": f"e {i}"})
        for i in range(3)
    ]
    cache = RecordCache(2)  # holds two: loading three evicts one while the query runs
    await _load(app, ids, cache, frozenset())
    assert await _load(app, ids, cache, frozenset()) == await _load(app, ids, None, frozenset())


async def test_embeddings_are_sent_only_when_asked_for(
    client: httpx.AsyncClient, app: FastAPI
) -> None:
    ids = [
        await post(client, schema_name="note.v1", title=f"x{i}", context={"text": f"x {i}"})
        for i in range(2)
    ]
    resources = app.state.resources
    tenant = resources.default_tenant
    cache = RecordCache(100)
    async with tenant_session(resources.session_factory, tenant) as session:
        without = await load_records_cached(session, tenant, ids, frozenset(), cache, vectors=False)
        assert without == await load_records(session, tenant, ids, frozenset())
        assert all(cache.vector(i, without[i].version or 0) is None for i in ids)

        fresh = RecordCache(100)
        found = await load_records_cached(session, tenant, ids, frozenset(), fresh)
        vectors = [fresh.vector(i, found[i].version or 0) for i in ids]
        assert all(v is not None and abs(float(v @ v) - 1.0) < 1e-5 for v in vectors)


def _inner_function_scans(plan: dict[str, Any]) -> list[str]:
    """The joins of ``plan`` (EXPLAIN's JSON) that run a function scan once per outer row."""
    return [
        parent.get("Join Type", "")
        for parent, node in plan_nodes(plan)
        if parent is not None
        and parent["Node Type"] == "Nested Loop"
        and node.get("Parent Relationship") == "Inner"
        and node["Node Type"] == "Function Scan"
    ]


async def test_the_record_query_probes_each_id_under_any_kept_plan(app: FastAPI) -> None:
    """PostgreSQL may keep a generic plan for a prepared statement after five runs; the
    record query's must still go from the wanted ids to the records (one index probe each),
    never unnest an array again for every record it reads."""
    resources = app.state.resources
    async with tenant_session(resources.session_factory, resources.default_tenant) as session:
        connection = await session.connection()
        for query in _CACHED_QUERIES.values():
            nulls = ", ".join("NULL" for _ in query.names)
            # As the table at scale: a sequential scan of it is never the cheaper way.
            await connection.execute(text("SET LOCAL enable_seqscan = off"))
            await connection.execute(text("SET LOCAL plan_cache_mode = force_generic_plan"))
            await connection.exec_driver_sql(f"PREPARE cached_records AS {query.sql}")
            try:
                explained = await connection.exec_driver_sql(
                    f"EXPLAIN (FORMAT JSON) EXECUTE cached_records({nulls})"
                )
                plan = explained.scalar_one()[0]["Plan"]
            finally:
                await connection.exec_driver_sql("DEALLOCATE cached_records")
            assert _inner_function_scans(plan) == [], plan
            conditions = " ".join(n["Index Cond"] for _, n in plan_nodes(plan) if "Index Cond" in n)
            assert "id = k.id" in conditions, plan
