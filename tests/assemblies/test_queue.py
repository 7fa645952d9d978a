"""The queue of on-demand entries: written in batches per tenant, bounded, never blocking."""

from __future__ import annotations

import asyncio
import uuid

from fastapi import FastAPI
from prometheus_client import REGISTRY
from tests.assemblies.helpers import entry, rows_of

from cairn.assemblies.queue import EntryQueue
from cairn.db.tenants import ensure_tenant


async def test_entries_of_several_tenants_are_written_each_in_its_own(app: FastAPI) -> None:
    resources = app.state.resources
    owners = [resources.default_tenant, uuid.uuid4()]
    await ensure_tenant(resources.engine, owners[1], f"test-{owners[1]}")
    agent = f"queued-{uuid.uuid4().hex[:8]}"
    queue = EntryQueue(resources.session_factory, batch=3)
    for n in range(7):
        queue.put(entry(owners[n % 2], agent, query_text=f"q{n}"))
    runner = asyncio.create_task(queue.run())
    try:
        await asyncio.wait_for(queue.flush(), 10)
    finally:
        runner.cancel()
    rows = await rows_of(app, agent)
    assert sorted(row["query_text"] for row in rows) == [f"q{n}" for n in range(7)]
    assert {row["owner_id"] for row in rows if row["query_text"] in {"q1", "q3"}} == {owners[1]}


async def test_a_full_queue_drops_and_counts(app: FastAPI) -> None:
    queue = EntryQueue(app.state.resources.session_factory, size=2)
    labels = {"reason": "queue_full"}
    before = REGISTRY.get_sample_value("cairn_assembly_log_dropped_total", labels) or 0.0
    for _ in range(5):
        queue.put(entry(app.state.resources.default_tenant))  # returns at once, always
    assert REGISTRY.get_sample_value("cairn_assembly_log_dropped_total", labels) == before + 3


async def test_a_tenant_whose_write_fails_does_not_hold_up_the_others(app: FastAPI) -> None:
    """An entry of a tenant that does not exist breaks its transaction (foreign key); the
    other tenant's entries of the same batch are written all the same."""
    agent = f"queued-{uuid.uuid4().hex[:8]}"
    queue = EntryQueue(app.state.resources.session_factory, linger_s=0.0)
    labels = {"reason": "write_failed"}
    before = REGISTRY.get_sample_value("cairn_assembly_log_dropped_total", labels) or 0.0
    queue.put(entry(uuid.uuid4(), agent, query_text="lost"))
    queue.put(entry(app.state.resources.default_tenant, agent, query_text="kept"))
    runner = asyncio.create_task(queue.run())
    try:
        await asyncio.wait_for(queue.flush(), 10)
    finally:
        runner.cancel()
    assert [row["query_text"] for row in await rows_of(app, agent)] == ["kept"]
    assert REGISTRY.get_sample_value("cairn_assembly_log_dropped_total", labels) == before + 1
