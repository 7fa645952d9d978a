"""Both clients against the real server over HTTP (PostgreSQL, NATS, the ONNX embedder)."""

from __future__ import annotations

import asyncio
import uuid

import httpx
import pytest
from cairn_client import ROUTES, AsyncClient, Client
from cairn_client.errors import InvalidInput, NotFound, VersionMismatch
from cairn_client.models import BreadcrumbUpdate
from fastapi import FastAPI
from tests.client.world import agent_world


def _placeholders(path: str) -> str:
    """``/a/{x}/b`` and ``/a/{y}/b`` are one route."""
    return "/".join("{}" if part.startswith("{") else part for part in path.split("/"))


async def test_every_route_of_the_openapi_schema_has_a_client_method(live_url: str) -> None:
    async with httpx.AsyncClient(base_url=live_url) as http:
        spec = (await http.get("/openapi.json")).json()
    served = {
        (method.upper(), _placeholders(path))
        for path, operations in spec["paths"].items()
        for method in operations
    }
    covered = {(method, _placeholders(path)) for method, path in ROUTES.values()}
    assert served - covered == set()
    for name in ROUTES:
        assert callable(getattr(Client(live_url), name))
        assert callable(getattr(AsyncClient(live_url), name))


def _sync_round_trip(url: str, marker: str) -> list[str]:
    steps = []
    with Client(url) as cairn:
        created = cairn.create_breadcrumb("Tide table", {"text": "high tide 06:12"}, tags=[marker])
        record = cairn.get_breadcrumb(created.id)
        steps.append(f"get {record.title} v{record.version}")
        cairn.update_breadcrumb(created.id, BreadcrumbUpdate(title="Tides"), if_match=1)
        with pytest.raises(VersionMismatch) as stale:
            cairn.update_breadcrumb(created.id, BreadcrumbUpdate(title="Old"), if_match=1)
        steps.append(f"stale {stale.value.error}")
        cairn.add_tags(created.id, ["reviewed"])
        listed = cairn.list_breadcrumbs(tag=marker)
        steps.append(f"listed {[item.tags for item in listed]}")
        steps.append(f"history {len(cairn.history(created.id))}")
        cairn.delete_breadcrumb(created.id)
        with pytest.raises(NotFound) as missing:
            cairn.get_breadcrumb(created.id)
        steps.append(f"gone {missing.value.status} {missing.value.error}")
    return steps


async def test_the_sync_client_creates_reads_updates_and_deletes(
    live_url: str, marker: str
) -> None:
    steps = await asyncio.to_thread(_sync_round_trip, live_url, marker)
    assert steps[0] == "get Tide table v1"
    assert steps[1] == "stale version_mismatch"
    assert steps[2] == f"listed {[[marker, 'reviewed']]}"
    assert steps[3] == "history 3"
    assert steps[4] == "gone 404 not_found"


async def test_an_idempotent_create_returns_the_first_record(live_url: str, marker: str) -> None:
    key = uuid.uuid4().hex
    async with AsyncClient(live_url) as cairn:
        first = await cairn.create_breadcrumb("once", {"n": 1}, tags=[marker], idempotency_key=key)
        again = await cairn.create_breadcrumb("once", {"n": 1}, tags=[marker], idempotency_key=key)
        assert again.id == first.id
        assert len(await cairn.list_breadcrumbs(tag=marker)) == 1


async def test_the_async_client_reads_searches_and_renders(live_url: str, marker: str) -> None:
    async with AsyncClient(live_url) as cairn:
        created = await cairn.create_breadcrumb(
            "Lighthouse keeper", {"text": "lamp lit at dusk"}, tags=[marker], schema_name="note.v1"
        )
        await cairn.merge_context(created.id, {"text": "lamp lit at dusk", "oil": "whale"})
        full = await cairn.get_breadcrumb_full(created.id)
        hits = await cairn.search("who lights the lamp at dusk", tag=marker, nn=3)
        rendered = await cairn.render([created.id, uuid.UUID(int=0)])
        processing = await cairn.record_processing(created.id)
        edges = await cairn.record_edges(created.id, limit=5)
    assert [s.state for s in processing.stages if s.stage == "embedded"] == ["done"]
    assert edges.truncated is False and all(e.id != created.id for e in edges.incoming)
    assert full.context == {"text": "lamp lit at dusk", "oil": "whale"} and full.version == 2
    assert full.embedding is not None and len(full.embedding) == 384
    assert [hit.id for hit in hits] == [created.id] and 0 < hits[0].score <= 1
    assert rendered.missing == [uuid.UUID(int=0)] and len(rendered.items) == 1


async def test_the_servers_refusal_arrives_as_invalid_input(live_url: str) -> None:
    async with AsyncClient(live_url) as cairn:
        with pytest.raises(InvalidInput) as refused:
            await cairn.create_breadcrumb("bad", {}, schema_name="no spaces allowed")
    assert refused.value.status == 422 and refused.value.error == "invalid_input"
    assert "schema_name" in refused.value.detail


async def test_operations_routes_answer(live_url: str) -> None:
    async with AsyncClient(live_url) as cairn:
        assert (await cairn.health())["status"] == "ok"
        assert "cairn_http_requests_total" in await cairn.metrics()
        assert isinstance(await cairn.list_agents(), list)
        assert isinstance(await cairn.list_dead_events(limit=5), list)
        assert [c.name for c in (await cairn.workers()).consumers] == ["cairn-worker"]


async def test_assemble_and_latest_context_read_the_stored_context(
    live_url: str, worker: None
) -> None:
    async with AsyncClient(live_url) as cairn:
        world = await agent_world(cairn)
        trigger = await cairn.create_breadcrumb(
            "question",
            {"content": "How long can a blue whale grow?"},
            schema_name="user.message.v1",
            tags=[f"session:{world.session}"],
        )
        assembled = await cairn.assemble(trigger.id, world.agent_id)
        latest = await cairn.latest_context(world.agent_id, session=world.session)
        debug = await cairn.context_debug(world.agent_id, session=world.session)
    assert latest.id == assembled.id and latest.consumer_id == world.agent_id
    assert debug.startswith("## Context Debug") and f"`{trigger.id}`" in debug
    assert "blue whale" in latest.context["formatted_context"]
    assert latest.context["explain"]["selected"]


async def test_the_assembly_log_pages_and_sums_up_a_query(live_url: str, app: FastAPI) -> None:
    agent_id = f"logged-{uuid.uuid4().hex[:8]}"
    inline = {"context_sources": {"session": {"limit": 0}}, "context_budget": 300}
    async with AsyncClient(live_url) as cairn:
        for n in range(3):
            await cairn.query_context(f"question {n}", agent_id=agent_id, agent=inline)
        await app.state.resources.contexts.assembly_log.flush()  # written after the answers
        first = await cairn.list_assemblies(agent_id=agent_id, limit=2)
        assert [e.query_text for e in first.items] == ["question 2", "question 1"]
        assert first.next_cursor is not None and first.items[0].origin == "query"
        rest = await cairn.list_assemblies(agent_id=agent_id, cursor=first.next_cursor)
        assert [e.query_text for e in rest.items] == ["question 0"] and rest.next_cursor is None
        stats = await cairn.assembly_stats(since=rest.items[0].created_at)
        (mine,) = [row for row in stats.agents if row.agent_id == agent_id]
        assert mine.count == 3 and mine.p50_ms <= mine.p99_ms
